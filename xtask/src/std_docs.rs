//! `gpurun-dev std-docs`: std's own documentation examples for poisoning,
//! `join`'s errors, `catch_unwind`, `resume_unwind`, panic hooks, `Once`
//! and scoped threads, taken from the pinned nightly's rust-src and written
//! as one program, `examples/unwind-checks/src/bin/std-docs.rs`, that runs
//! each in turn under a `== <file>:<line>` header. The acceptance suite runs
//! it on the GPU and compares its stdout with the host's run.
//!
//! The examples are read as rustdoc reads them: fenced blocks in `///` and
//! `//!` comments (a block left open ends with its comment; a plain `//`
//! line inside is not part of it), lines starting
//! `# ` hidden but compiled, the code wrapped in `fn main` unless it has one.
//! `should_panic` examples run inside `catch_unwind` and must panic;
//! `no_run`, `ignore`, `compile_fail` and non-Rust blocks are left out, with
//! the reason written at the top of the generated file, as are the few in
//! [`LEFT_OUT`].

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The files of `library/std/src` the examples come from.
pub const SOURCES: &[&str] = &[
    "sync/poison.rs",
    "sync/poison/mutex.rs",
    "sync/poison/rwlock.rs",
    "sync/poison/condvar.rs",
    "sync/once.rs",
    "thread/mod.rs",
    "thread/join_handle.rs",
    "thread/scoped.rs",
    "panic.rs",
    "panicking.rs",
];

/// Where the generated program goes, from the repository root.
pub const OUTPUT: &str = "examples/unwind-checks/src/bin/std-docs.rs";

/// Examples rustdoc runs that this program does not: (file, a line of the
/// example's code, why). Both programs' stdout must match, so an example
/// whose output may land anywhere cannot be compared.
pub const LEFT_OUT: &[(&str, &str, &str)] = &[
    (
        "sync/once.rs",
        "println!(\"everything is ready\");",
        "prints from a thread it never joins: the line may come under a later example's header, or never",
    ),
    (
        "thread/mod.rs",
        "println!(\"Hello, world!\");",
        "prints from a thread it never joins: the line may come under a later example's header, or never",
    ),
];

/// One fenced block of a doc comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The source file, relative to `library/std/src`.
    pub file: String,
    /// The line of its opening fence, from 1.
    pub line: usize,
    /// The fence's info string (`should_panic`, `no_run`, `text`...).
    pub info: String,
    /// Its lines, without the comment's `/// ` (hidden lines still `# `).
    pub code: Vec<String>,
}

impl Block {
    fn at(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
}

/// The fenced blocks of `text`'s doc comments, as rustdoc finds them.
pub fn blocks(file: &str, text: &str) -> Vec<Block> {
    let mut found = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        let doc = if t.starts_with("////") { None } else { t.strip_prefix("///").or_else(|| t.strip_prefix("//!")) };
        let Some(doc) = doc else {
            // A plain comment or a blank line between doc lines is not part
            // of the doc, nor its end (rwlock.rs has one inside a block); code
            // ends it, and a block left open with it, as in rustdoc.
            if !(t.is_empty() || t.starts_with("//")) {
                found.extend(open.take());
            }
            continue;
        };
        let doc = doc.strip_prefix(' ').unwrap_or(doc);
        let fence = doc.trim_start().strip_prefix("```");
        match (&mut open, fence) {
            (Some(_), Some(_)) => found.extend(open.take()),
            (Some(b), None) => b.code.push(doc.to_string()),
            (None, Some(info)) => open = Some(Block { file: file.to_string(), line: i + 1, info: info.trim().to_string(), code: Vec::new() }),
            (None, None) => {}
        }
    }
    found.extend(open);
    found
}

/// What becomes of a block.
#[derive(Debug, PartialEq, Eq)]
pub enum Fate {
    /// Runs; `should_panic`: it must panic.
    Runs { should_panic: bool },
    LeftOut(String),
}

/// The tokens of an info string that rustdoc reads as attributes of a Rust
/// example; any other token (`text`, `sh`) makes the block not Rust.
fn rustdoc_token(t: &str) -> bool {
    let error_code = t.len() == 5 && t.starts_with('E') && t[1..].bytes().all(|b| b.is_ascii_digit());
    matches!(t, "rust" | "should_panic" | "no_run" | "ignore" | "compile_fail" | "test_harness" | "standalone_crate")
        || t.starts_with("edition")
        || t.starts_with("ignore-")
        || error_code
}

pub fn fate(b: &Block) -> Fate {
    let tokens: Vec<&str> = b.info.split(|c: char| c == ',' || c.is_whitespace()).filter(|t| !t.is_empty()).collect();
    if let Some(t) = tokens.iter().find(|t| !rustdoc_token(t)) {
        return Fate::LeftOut(format!("`{t}`, not Rust"));
    }
    let has = |t: &str| tokens.contains(&t);
    if has("compile_fail") {
        return Fate::LeftOut("compile_fail: shows code that must not compile".into());
    }
    if has("ignore") || tokens.iter().any(|t| t.starts_with("ignore-")) {
        return Fate::LeftOut("ignore: rustdoc does not build it".into());
    }
    if has("no_run") {
        return Fate::LeftOut("no_run: rustdoc builds it but never runs it".into());
    }
    if has("test_harness") {
        return Fate::LeftOut("test_harness: a #[test] crate, not a program".into());
    }
    if let Some((_, _, why)) = LEFT_OUT.iter().find(|(f, l, _)| *f == b.file && b.code.iter().any(|c| c.trim() == *l)) {
        return Fate::LeftOut((*why).to_string());
    }
    Fate::Runs { should_panic: has("should_panic") }
}

/// A line as the compiler sees it: rustdoc's hidden lines (`# x`, `#`)
/// shown, `##` unescaped.
fn unhide(line: &str) -> &str {
    let t = line.trim_start();
    if t == "#" {
        ""
    } else if let Some(rest) = t.strip_prefix("##") {
        &line[line.len() - rest.len() - 1..]
    } else if let Some(rest) = t.strip_prefix("# ") {
        rest
    } else {
        line
    }
}

/// One example as a module `name` with a `pub fn main()`, and the
/// `#![feature]`s it needs at the crate's root.
fn module(name: &str, b: &Block) -> Result<(String, Vec<String>), String> {
    let mut features = Vec::new();
    let mut inner_attrs = Vec::new();
    let mut body = Vec::new();
    for line in b.code.iter().map(|l| unhide(l)) {
        match line.strip_prefix("#![") {
            Some(rest) if rest.starts_with("feature(") => features.push(line.to_string()),
            Some(_) => inner_attrs.push(line.to_string()),
            None => body.push(line),
        }
    }
    let has_main = body.iter().any(|l| l.trim_start().starts_with("fn main("));
    let ind = |n: usize, l: &str| if l.trim().is_empty() { String::new() } else { format!("{}{l}", " ".repeat(n)) };
    let mut m = format!("// {}\nmod {name} {{\n", b.at());
    for a in &inner_attrs {
        m += &ind(4, a);
        m += "\n";
    }
    if has_main {
        if !body.iter().any(|l| l.trim_start() == "fn main() {") {
            return Err("a `fn main` with arguments or a return value".into());
        }
        for l in &body {
            let l = if l.trim_start() == "fn main() {" { l.replacen("fn main()", "pub fn main()", 1) } else { l.to_string() };
            m += &ind(4, &l);
            m += "\n";
        }
    } else if body.join("\n").trim_end().ends_with("(())") {
        // rustdoc's rule: code ending in `Ok(())` runs in a function returning a Result.
        m += "    pub fn main() {\n        fn inner() -> Result<(), impl core::fmt::Debug> {\n";
        for l in &body {
            m += &ind(12, l);
            m += "\n";
        }
        m += "        }\n        inner().unwrap()\n    }\n";
    } else {
        m += "    pub fn main() {\n";
        for l in &body {
            m += &ind(8, l);
            m += "\n";
        }
        m += "    }\n";
    }
    m += "}\n";
    Ok((m, features))
}

/// The generated program and what went into it.
pub struct Corpus {
    pub source: String,
    /// Blocks found, and how many run.
    pub found: usize,
    pub kept: usize,
    /// (where, why) for each block left out.
    pub left_out: Vec<(String, String)>,
}

/// The generated program for the std sources under `std_src`
/// (`library/std/src`).
pub fn generate(std_src: &Path) -> Result<Corpus, String> {
    let mut all = Vec::new();
    for f in SOURCES {
        let path = std_src.join(f);
        let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        all.extend(blocks(f, &text));
    }
    let (mut modules, mut features, mut runs, mut left_out) = (String::new(), BTreeSet::new(), Vec::new(), Vec::new());
    for b in &all {
        let should_panic = match fate(b) {
            Fate::Runs { should_panic } => should_panic,
            Fate::LeftOut(why) => {
                left_out.push((b.at(), why));
                continue;
            }
        };
        let name = format!("ex{:03}", runs.len() + 1);
        match module(&name, b) {
            Ok((m, f)) => {
                modules += "\n";
                modules += &m;
                features.extend(f);
                runs.push((b.at(), should_panic, name));
            }
            Err(why) => left_out.push((b.at(), why)),
        }
    }
    let mut s = String::new();
    let _ = writeln!(s, "//! GENERATED by `gpurun-dev std-docs` (xtask/src/std_docs.rs): do not edit.");
    let _ = writeln!(s, "//! std's documentation examples from the pinned nightly's rust-src");
    let _ = writeln!(s, "//! (`library/std/src/`: {}),", SOURCES.join(", "));
    let _ = writeln!(s, "//! each run in turn under a `== <file>:<line>` header; a `should_panic`");
    let _ = writeln!(s, "//! example must panic (caught), any other must return. Each starts with");
    let _ = writeln!(s, "//! std's default panic hook. `cargo test -p xtask --test std_docs` fails");
    let _ = writeln!(s, "//! when this file is not what the generator writes.");
    let _ = writeln!(s, "//!");
    let _ = writeln!(s, "//! {} code blocks found, {} run here, {} left out:", all.len(), runs.len(), left_out.len());
    for (at, why) in &left_out {
        let _ = writeln!(s, "//! - {at}: {why}");
    }
    for f in &features {
        s += f;
        s += "\n";
    }
    s += "#![allow(unused, deprecated)]\n";
    s += &modules;
    s += "\n/// Each example: where it is, whether it must panic, its `main`.\nconst EXAMPLES: &[(&str, bool, fn())] = &[\n";
    for (at, should_panic, name) in &runs {
        let _ = writeln!(s, "    ({at:?}, {should_panic}, {name}::main),");
    }
    s += "];\n";
    let _ = write!(
        s,
        r#"
fn main() {{
    println!("std-docs: {{}} of std's documentation examples, {} left out", EXAMPLES.len());
    let mut wrong = Vec::new();
    for &(at, should_panic, example) in EXAMPLES {{
        println!("== {{at}}");
        let panicked = std::panic::catch_unwind(example).is_err();
        // The next example starts with std's default hook, as in a doctest of its own.
        drop(std::panic::take_hook());
        if panicked != should_panic {{
            println!("std-docs: {{at}} {{}}", if panicked {{ "panicked" }} else {{ "returned, but it should panic" }});
            wrong.push(at);
        }}
    }}
    println!("std-docs: {{}} of {{}} as documented", EXAMPLES.len() - wrong.len(), EXAMPLES.len());
    if !wrong.is_empty() {{
        std::process::exit(1);
    }}
}}
"#,
        left_out.len()
    );
    Ok(Corpus { source: s, found: all.len(), kept: runs.len(), left_out })
}

/// `library/std/src` of the rust-src of the `rustc` rustup picks here (the
/// pinned nightly, `rust-toolchain.toml`): upstream's std, not the patched
/// copy of `target/gpu-toolchain`.
pub fn std_src() -> Result<PathBuf, String> {
    let out = std::process::Command::new("rustc")
        .args(["--print", "sysroot"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .map_err(|e| format!("cannot run rustc: {e}"))?;
    if !out.status.success() {
        return Err(format!("`rustc --print sysroot` failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let src = sysroot.join("lib/rustlib/src/rust/library/std/src");
    if src.is_dir() {
        Ok(src)
    } else {
        Err(format!("no {}: install rust-src (`rustup component add rust-src`; rust-toolchain.toml lists it)", src.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(info: &str, code: &[&str]) -> Block {
        Block { file: "f.rs".into(), line: 1, info: info.into(), code: code.iter().map(|s| s.to_string()).collect() }
    }

    #[test]
    fn blocks_come_from_doc_comments_and_end_with_them() {
        let text = "/// Text.\n///\n/// ```should_panic\n/// let a = 1;\n// a plain comment\n/// # let b = 2;\n/// ```\n// ```\n// not a doc\n//! ```\n//! open();\nfn f() {}\n//! after();\n";
        let b = blocks("x.rs", text);
        assert_eq!(b.len(), 2, "{b:?}");
        assert_eq!((b[0].line, b[0].info.as_str(), b[0].code.clone()), (3, "should_panic", vec!["let a = 1;".into(), "# let b = 2;".into()]));
        assert_eq!((b[1].line, b[1].code.clone()), (10, vec!["open();".to_string()]));
    }

    #[test]
    fn fates_follow_rustdoc_attributes() {
        assert_eq!(fate(&block("", &[])), Fate::Runs { should_panic: false });
        assert_eq!(fate(&block("rust,should_panic", &[])), Fate::Runs { should_panic: true });
        assert_eq!(fate(&block("edition2021", &[])), Fate::Runs { should_panic: false });
        assert!(matches!(fate(&block("text", &[])), Fate::LeftOut(w) if w.contains("not Rust")));
        assert!(matches!(fate(&block("compile_fail,E0373", &[])), Fate::LeftOut(w) if w.starts_with("compile_fail")));
        assert!(matches!(fate(&block("no_run", &[])), Fate::LeftOut(w) if w.starts_with("no_run")));
        assert!(matches!(fate(&block("ignore", &[])), Fate::LeftOut(w) if w.starts_with("ignore")));
    }

    #[test]
    fn hidden_lines_compile_and_features_go_to_the_root() {
        let b = block("", &["#![feature(x)]", "# #![allow(y)]", "let a = 1;", "# let b = a;", "#", "## not hidden"]);
        let (m, f) = module("ex001", &b).unwrap();
        assert_eq!(f, vec!["#![feature(x)]".to_string()]);
        assert_eq!(m, "// f.rs:1\nmod ex001 {\n    #![allow(y)]\n    pub fn main() {\n        let a = 1;\n        let b = a;\n\n        # not hidden\n    }\n}\n");
    }

    #[test]
    fn code_ending_in_ok_returns_a_result_and_own_main_is_kept() {
        let (m, _) = module("e", &block("", &["f()?;", "Ok::<(), String>(())"])).unwrap();
        assert!(m.contains("fn inner() -> Result<(), impl core::fmt::Debug> {\n            f()?;"), "{m}");
        let (m, _) = module("e", &block("", &["fn main() {", "    go();", "}"])).unwrap();
        assert!(m.contains("    pub fn main() {\n        go();\n    }\n"), "{m}");
        assert!(module("e", &block("", &["fn main() -> Result<(), E> {", "}"])).is_err());
    }
}
