//! Just enough of the `ar` format to read rlibs (GNU/System V variant).
const MAGIC: &[u8] = b"!<arch>\n";

pub fn is_archive(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// The (name, contents) of each member, skipping symbol tables.
pub fn members(bytes: &[u8]) -> Result<Vec<(String, &[u8])>, String> {
    let mut out = Vec::new();
    let mut long_names: &[u8] = &[];
    let mut at = MAGIC.len();
    while at + 60 <= bytes.len() {
        let header = &bytes[at..at + 60];
        if &header[58..60] != b"`\n" {
            return Err(format!("corrupt archive member header at byte {at}"));
        }
        let field = |r: std::ops::Range<usize>| String::from_utf8_lossy(&header[r]).trim().to_string();
        let size: usize = field(48..58).parse().map_err(|_| format!("bad member size at byte {at}"))?;
        let start = at + 60;
        let data = bytes.get(start..start + size).ok_or("archive truncated")?;
        let raw_name = field(0..16);
        if raw_name == "//" {
            long_names = data;
        } else if raw_name != "/" && raw_name != "/SYM64/" {
            let name = match raw_name.strip_prefix('/').and_then(|n| n.parse::<usize>().ok()) {
                Some(off) => {
                    let rest = long_names.get(off..).ok_or("bad long-name offset")?;
                    let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
                    String::from_utf8_lossy(&rest[..end]).trim_end_matches('/').to_string()
                }
                None => raw_name.trim_end_matches('/').to_string(),
            };
            out.push((name, data));
        }
        at = start + size + (size & 1);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(name: &str, data: &[u8]) -> Vec<u8> {
        let mut h = format!("{name:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n", 0, 0, 0, 644, data.len()).into_bytes();
        h.extend_from_slice(data);
        if data.len() % 2 == 1 {
            h.push(b'\n');
        }
        h
    }

    #[test]
    fn reads_short_and_long_names() {
        let mut a = MAGIC.to_vec();
        a.extend(member("/", b"symtab"));
        a.extend(member("//", b"a-very-long-member-name.rcgu.o/\n"));
        a.extend(member("lib.rmeta/", b"meta!"));
        a.extend(member("/0", b"BC\xC0\xDEx"));
        let m = members(&a).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[0], ("lib.rmeta".to_string(), &b"meta!"[..]));
        assert_eq!(m[1].0, "a-very-long-member-name.rcgu.o");
    }

    #[test]
    fn truncated_archives_are_errors() {
        let mut a = MAGIC.to_vec();
        a.extend(member("x.o/", b"abcdef"));
        a.truncate(a.len() - 3);
        assert!(members(&a).is_err());
    }
}
