//! Reading LLVM IR as text, line by line: function headers, labels, types,
//! calls and the names a line mentions. What the rewrites that move frames
//! ([`crate::shared_stack`]) and check call depth ([`crate::call_stack`])
//! both read.

/// `@name` of a `define` line.
pub(crate) fn function_name(header: &str) -> &str {
    let at = header.find('@').map_or(header.len(), |i| i + 1);
    let rest = &header[at..];
    match rest.strip_prefix('"') {
        Some(q) => &q[..q.find('"').unwrap_or(q.len())],
        None => &rest[..rest.find('(').unwrap_or(rest.len())],
    }
}

pub(crate) fn is_label(line: &str) -> bool {
    // `start:                                  ; preds = %bb3` or `7:`
    if line.starts_with(char::is_whitespace) || line.trim().is_empty() {
        return false;
    }
    let head = line.split(';').next().unwrap_or("").trim_end();
    head.ends_with(':') && !head.contains(' ')
}

/// The index of the `)` closing the `(` that `s` starts with.
pub(crate) fn closing_paren(s: &str) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The first type of `s` and what follows it.
pub(crate) fn split_type(s: &str) -> (&str, &str) {
    let bytes = s.as_bytes();
    let close = match bytes.first() {
        Some(b'[') => Some(b']'),
        Some(b'{') => Some(b'}'),
        Some(b'<') => Some(b'>'),
        _ => None,
    };
    if let Some(close) = close {
        let open = bytes[0];
        let mut depth = 0;
        for (i, &b) in bytes.iter().enumerate() {
            if b == open || (open == b'<' && b == b'{') || (open == b'{' && b == b'[') {
                depth += 1;
            } else if b == close || (open == b'<' && b == b'}') || (open == b'{' && b == b']') {
                depth -= 1;
                if depth == 0 {
                    // `<{ ... }>`: a packed struct.
                    return (&s[..=i], &s[i + 1..]);
                }
            }
        }
        return (s, "");
    }
    let end = s.find([',', ' ']).unwrap_or(s.len());
    (&s[..end], &s[end..])
}

/// The next `@name` or `%name` token at or after byte `from` of `line`:
/// `(sigil, name, end)`.
fn next_token(line: &str, from: usize) -> Option<(u8, &str, usize)> {
    let bytes = line.as_bytes();
    let mut i = from;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'"' {
            // Skip string constants (inline asm text, metadata strings).
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += 1;
            }
            i += 1;
            continue;
        }
        if c == b'@' || c == b'%' {
            let start = i + 1;
            if bytes.get(start) == Some(&b'"') {
                let end = line[start + 1..].find('"').map_or(bytes.len(), |e| start + 1 + e);
                return Some((c, &line[start + 1..end], (end + 1).min(bytes.len())));
            }
            let end = line[start..]
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || matches!(ch, '_' | '.' | '$' | '-')))
                .map_or(bytes.len(), |e| start + e);
            return Some((c, &line[start..end], end));
        }
        i += 1;
    }
    None
}

/// The `@` names `line` mentions other than as the function it calls
/// directly: uses of their addresses (or of globals' values). `called` is
/// the line's [`callee`], which the caller has already read.
pub(crate) fn address_uses<'a>(line: &'a str, called: Option<&Callee<'a>>) -> impl Iterator<Item = &'a str> {
    let direct = match called {
        Some(Callee::Direct(name)) => Some(*name),
        _ => None,
    };
    let (mut pos, mut skipped_callee) = (0, false);
    std::iter::from_fn(move || {
        while let Some((sigil, name, end)) = next_token(line, pos) {
            pos = end.max(pos + 1);
            if sigil != b'@' {
                continue;
            }
            if !skipped_callee && direct == Some(name) {
                skipped_callee = true;
                continue;
            }
            return Some(name);
        }
        None
    })
}

/// What a `call`/`invoke` line calls.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Callee<'a> {
    /// A function by name.
    Direct(&'a str),
    /// Through a pointer, with the call's signature (`i1(ptr,ptr)`), if read.
    Indirect(Option<String>),
}

/// The callee of a `call`/`invoke` instruction line; `None` if the line is
/// no call (or calls inline asm).
pub(crate) fn callee(line: &str) -> Option<Callee<'_>> {
    call_parts(line).map(|(c, _)| c)
}

/// [`callee`], and the byte offset in `line` of the `(` that opens the
/// call's arguments.
pub(crate) fn call_parts(line: &str) -> Option<(Callee<'_>, usize)> {
    let indent = line.len() - line.trim_start().len();
    let t = &line[indent..];
    if t.starts_with(';') {
        return None;
    }
    let at = [" call ", "call ", " invoke ", "invoke "].iter().find_map(|k| {
        let i = t.find(k)?;
        // `call` must be the instruction, not part of a name or string.
        (k.starts_with(' ') || i == 0).then_some(i + k.len())
    })?;
    let rest = &t[at..];
    if rest.contains(" asm ") || rest.starts_with("asm ") {
        return None;
    }
    let mut pos = 0;
    while let Some((sigil, name, end)) = next_token(rest, pos) {
        if rest.as_bytes().get(end) == Some(&b'(') {
            let open = indent + at + end;
            if sigil == b'@' {
                return Some((Callee::Direct(name), open));
            }
            let start = rest[..end].rfind('%').unwrap_or(0);
            return Some((Callee::Indirect(signature(&rest[..start], &rest[end..])), open));
        }
        pos = end.max(pos + 1);
    }
    None
}

/// A function's signature, `ret(arg,arg)` with spaces removed, from the
/// text before its name (ending with the return type) and the text from
/// its opening parenthesis (typed arguments or parameters). `None` for
/// varargs or what does not parse: the caller then assumes any function.
pub(crate) fn signature(before: &str, from_paren: &str) -> Option<String> {
    let ret = trailing_type(before.trim_end())?;
    let inner = &from_paren[1..closing_paren(from_paren)?];
    let mut args = Vec::new();
    for arg in split_top_level(inner) {
        let arg = arg.trim();
        if arg == "..." {
            return None;
        }
        if !arg.is_empty() {
            args.push(leading_type(arg)?);
        }
    }
    Some(format!("{ret}({})", args.join(",")))
}

/// `s` split at the commas outside brackets and strings.
fn split_top_level(s: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start, mut in_string) = (Vec::new(), 0i32, 0, false);
    for (i, c) in s.char_indices() {
        match c {
            '"' => in_string = !in_string,
            '(' | '{' | '[' | '<' if !in_string => depth += 1,
            ')' | '}' | ']' | '>' if !in_string => depth -= 1,
            ',' if depth == 0 && !in_string => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

/// The type `s` starts with (`ptr`, `{ i64, i1 }`), spaces removed.
fn leading_type(s: &str) -> Option<String> {
    let ty = split_type(s).0;
    (!ty.is_empty()).then(|| ty.split_whitespace().collect())
}

/// The type `s` ends with, spaces removed; `None` for a function type
/// (`i32 (ptr, ...)`, written for varargs calls).
pub(crate) fn trailing_type(s: &str) -> Option<String> {
    let open = match s.chars().last()? {
        ')' => return None,
        '}' => '{',
        ']' => '[',
        '>' => '<',
        _ => return s.split_whitespace().last().map(str::to_string),
    };
    // The bracket that opens the last one: scan back for the balance.
    let close = s.chars().last()?;
    let mut depth = 0i32;
    for (i, c) in s.char_indices().rev() {
        if c == close {
            depth += 1;
        } else if c == open {
            depth -= 1;
            if depth == 0 {
                return Some(s[i..].split_whitespace().collect());
            }
        }
    }
    None
}
