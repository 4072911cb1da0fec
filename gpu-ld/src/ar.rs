//! The members of an rlib: an `ar` archive (rustc writes the GNU variant),
//! read with `object`'s archive reader.
use object::read::archive::ArchiveFile;

pub fn is_archive(bytes: &[u8]) -> bool {
    bytes.starts_with(&object::archive::MAGIC)
}

/// The (name, contents) of each member. The symbol table and the long-name
/// table are not members: `object` reads them, and names a member from the
/// long-name table where its header says `/<offset>`.
pub fn members(bytes: &[u8]) -> Result<Vec<(String, &[u8])>, String> {
    let archive = ArchiveFile::parse(bytes).map_err(|e| format!("not a readable archive: {e}"))?;
    let mut out = Vec::new();
    for member in archive.members() {
        let member = member.map_err(|e| format!("corrupt archive: {e}"))?;
        let data = member.data(bytes).map_err(|e| format!("archive truncated: {e}"))?;
        out.push((String::from_utf8_lossy(member.name()).into_owned(), data));
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

    fn archive(members: &[Vec<u8>]) -> Vec<u8> {
        let mut a = b"!<arch>\n".to_vec();
        a.extend(members.concat());
        a
    }

    #[test]
    fn reads_short_and_long_names() {
        // A GNU symbol table with no symbols: a 4-byte count of 0.
        let a = archive(&[
            member("/", &[0; 4]),
            member("//", b"a-very-long-member-name.rcgu.o/\nother-long-member-name.rcgu.o/\n"),
            member("lib.rmeta/", b"meta!"),
            member("/0", b"BC\xC0\xDEx"),
            member("/32", b"BC\xC0\xDE"),
        ]);
        assert!(is_archive(&a));
        let m = members(&a).unwrap();
        assert_eq!(m.len(), 3);
        assert_eq!(m[0], ("lib.rmeta".to_string(), &b"meta!"[..]));
        assert_eq!(m[1], ("a-very-long-member-name.rcgu.o".to_string(), &b"BC\xC0\xDEx"[..]));
        assert_eq!(m[2].0, "other-long-member-name.rcgu.o");
    }

    #[test]
    fn a_64_bit_symbol_table_is_not_a_member() {
        let a = archive(&[member("/SYM64/", &[0; 8]), member("x.o/", b"BC\xC0\xDE")]);
        assert_eq!(members(&a).unwrap(), [("x.o".to_string(), &b"BC\xC0\xDE"[..])]);
    }

    #[test]
    fn truncated_archives_are_errors() {
        let mut a = archive(&[member("x.o/", b"abcdef")]);
        a.truncate(a.len() - 3);
        assert!(members(&a).is_err());
        assert!(members(b"!<arch>\nnot a header").is_err());
        assert!(!is_archive(b"BC\xC0\xDE"));
    }
}
