//! Each `CALL_*` against a temp dir, straight on [`HostCalls`] (the ring's
//! part is in `host_ring/tests.rs`).

use std::os::unix::ffi::OsStrExt;
use std::prelude::rust_2024::*;
use std::time::Duration;
use std::{format, vec};

use super::*;
use crate::host_ring::testing::{TempDir, request};

/// The status of an error.
fn err(e: i32) -> i64 {
    -i64::from(e)
}

fn all() -> HostCalls {
    HostCalls::with_stdin(FsAccess::All, io::empty())
}

fn open(c: &HostCalls, path: &[u8], flags: u32, mode: u32) -> i64 {
    c.call(CALL_OPEN, &request(&[u64::from(flags) | (u64::from(mode) << 32)], &[path])).0
}

fn h(handle: i64) -> u64 {
    assert!(handle >= 3, "not a handle: {handle}");
    handle as u64
}

fn read(c: &HostCalls, fd: i64, want: u64) -> (i64, Vec<u8>) {
    c.call(CALL_READ, &request(&[fd as u64, want], &[]))
}

fn write(c: &HostCalls, fd: i64, bytes: &[u8]) -> i64 {
    c.call(CALL_WRITE, &request(&[fd as u64], &[bytes])).0
}

fn seek(c: &HostCalls, fd: i64, whence: u64, offset: i64) -> i64 {
    c.call(CALL_SEEK, &request(&[fd as u64, whence, offset as u64], &[])).0
}

fn stat(c: &HostCalls, path: &[u8], follow: bool) -> Result<Stat, i64> {
    match c.call(CALL_STAT, &request(&[u64::from(follow)], &[path])) {
        (0, b) => Ok(Stat::from_bytes(b.as_slice().try_into().expect("a whole Stat"))),
        (e, b) => {
            assert!(b.is_empty());
            Err(e)
        }
    }
}

fn fstat(c: &HostCalls, fd: i64) -> Stat {
    let (s, b) = c.call(CALL_FSTAT, &request(&[fd as u64], &[]));
    assert_eq!(s, 0);
    Stat::from_bytes(b.as_slice().try_into().unwrap())
}

fn simple(c: &HostCalls, call: u32, head: &[u64], body: &[&[u8]]) -> i64 {
    c.call(call, &request(head, body)).0
}

/// `(kind, name)` of each entry of a `CALL_READ_DIR` reply, sorted.
fn entries(reply: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < reply.len() {
        let kind = reply[at];
        let len = u16::from_le_bytes([reply[at + 1], reply[at + 2]]) as usize;
        out.push((kind, reply[at + 3..at + 3 + len].to_vec()));
        at += 3 + len;
    }
    assert_eq!(at, reply.len());
    out.sort();
    out
}

#[test]
fn open_write_seek_read_close() {
    let d = TempDir::new("calls-rw");
    let c = all();
    let f = open(&c, &d.path("a"), OPEN_READ | OPEN_WRITE | OPEN_CREATE, 0o600);
    assert_eq!(h(f), FIRST_HANDLE);
    assert_eq!(write(&c, f, b"hello world"), 11);
    assert_eq!(seek(&c, f, SEEK_SET, 0), 0);
    assert_eq!(read(&c, f, 5), (5, b"hello".to_vec()));
    assert_eq!(seek(&c, f, SEEK_CUR, 1), 6);
    assert_eq!(read(&c, f, 100), (5, b"world".to_vec()));
    assert_eq!(read(&c, f, 100), (0, vec![]), "end of file");
    assert_eq!(seek(&c, f, SEEK_END, -5), 6);
    assert_eq!(read(&c, f, 0), (0, vec![]));
    let st = fstat(&c, f);
    assert_eq!((st.size, st.kind, st.mode), (11, KIND_FILE, 0o100600), "the whole st_mode");
    assert_eq!(c.open_files(), 1);
    assert_eq!(simple(&c, CALL_CLOSE, &[f as u64], &[]), 0);
    assert_eq!(c.open_files(), 0);
    assert_eq!(std::fs::read(d.0.join("a")).unwrap(), b"hello world");
    // Closed and never-opened handles, the standard streams' numbers.
    assert_eq!(simple(&c, CALL_CLOSE, &[f as u64], &[]), err(errno::EBADF));
    assert_eq!(read(&c, f, 1).0, err(errno::EBADF));
    for fd in [0, 1, 2, 99, u64::MAX] {
        assert_eq!(read(&c, fd as i64, 1).0, err(errno::EBADF), "handle {fd}");
        assert_eq!(write(&c, fd as i64, b"x"), err(errno::EBADF));
        assert_eq!(seek(&c, fd as i64, SEEK_SET, 0), err(errno::EBADF));
        assert_eq!(simple(&c, CALL_FSTAT, &[fd], &[]), err(errno::EBADF));
        assert_eq!(simple(&c, CALL_SYNC, &[fd, 0], &[]), err(errno::EBADF));
        assert_eq!(simple(&c, CALL_SET_LEN, &[fd, 0], &[]), err(errno::EBADF));
    }
    // Handles are not reused.
    let g = open(&c, &d.path("a"), OPEN_READ, 0);
    assert_eq!(h(g), FIRST_HANDLE + 1);
    let g2 = open(&c, &d.path("a"), OPEN_READ, 0);
    assert_eq!(h(g2), FIRST_HANDLE + 2);
}

#[test]
fn append_truncate_set_len_sync() {
    let d = TempDir::new("calls-append");
    let c = all();
    std::fs::write(d.0.join("f"), b"0123456789").unwrap();
    let f = open(&c, &d.path("f"), OPEN_APPEND, 0);
    assert_eq!(write(&c, f, b"ab"), 2);
    assert_eq!(std::fs::read(d.0.join("f")).unwrap(), b"0123456789ab");
    assert_eq!(read(&c, f, 4).0, err(errno::EBADF), "not open for reading");
    let g = open(&c, &d.path("f"), OPEN_READ | OPEN_WRITE, 0);
    assert_eq!(simple(&c, CALL_SET_LEN, &[g as u64, 4], &[]), 0);
    assert_eq!(simple(&c, CALL_SET_LEN, &[g as u64, 6], &[]), 0);
    assert_eq!(read(&c, g, 100), (6, b"0123\0\0".to_vec()));
    assert_eq!(simple(&c, CALL_SYNC, &[g as u64, 0], &[]), 0);
    assert_eq!(simple(&c, CALL_SYNC, &[g as u64, 1], &[]), 0);
    assert_eq!(simple(&c, CALL_SYNC, &[g as u64, 2], &[]), err(errno::EINVAL));
    let t = open(&c, &d.path("f"), OPEN_WRITE | OPEN_TRUNCATE, 0);
    h(t);
    assert_eq!(std::fs::metadata(d.0.join("f")).unwrap().len(), 0);
    // Seeking: before the start, an unknown whence.
    assert_eq!(seek(&c, g, SEEK_SET, -1), err(errno::EINVAL));
    assert_eq!(seek(&c, g, SEEK_CUR, -1000), err(errno::EINVAL));
    assert_eq!(seek(&c, g, 3, 0), err(errno::EINVAL));
    assert_eq!(seek(&c, g, SEEK_SET, 100), 100);
}

#[test]
fn open_errors_are_the_os_errors() {
    let d = TempDir::new("calls-open");
    let c = all();
    std::fs::write(d.0.join("f"), b"x").unwrap();
    std::fs::create_dir(d.0.join("dir")).unwrap();
    assert_eq!(open(&c, &d.path("missing"), OPEN_READ, 0), err(errno::ENOENT));
    assert_eq!(open(&c, &d.path("f"), OPEN_WRITE | OPEN_CREATE_NEW, 0o644), err(errno::EEXIST));
    assert_eq!(open(&c, &d.path("dir"), OPEN_WRITE, 0), err(errno::EISDIR));
    assert_eq!(open(&c, &d.path("f/x"), OPEN_READ, 0), err(errno::ENOTDIR));
    // Neither read nor write, truncate without write: std's own checks.
    assert_eq!(open(&c, &d.path("f"), 0, 0), err(errno::EINVAL));
    assert_eq!(open(&c, &d.path("f"), OPEN_READ | OPEN_TRUNCATE, 0), err(errno::EINVAL));
    assert_eq!(open(&c, &d.path("f"), OPEN_READ | 64, 0), err(errno::EINVAL), "unknown flag");
    // A directory opens for reading; reading it is EISDIR.
    let dir = open(&c, &d.path("dir"), OPEN_READ, 0);
    assert_eq!(read(&c, h(dir) as i64, 10).0, err(errno::EISDIR));
    assert_eq!(fstat(&c, dir).kind, KIND_DIR);
    // Created with its mode (the umask may only take bits away).
    let n = open(&c, &d.path("new"), OPEN_WRITE | OPEN_CREATE_NEW, 0o600);
    h(n);
    assert_eq!(std::fs::metadata(d.0.join("new")).unwrap().mode() & 0o777, 0o600);
    assert_eq!(c.open_files(), 2);
}

#[test]
fn stat_follows_symlinks_or_not() {
    let d = TempDir::new("calls-stat");
    let c = all();
    std::fs::write(d.0.join("f"), vec![7u8; 1234]).unwrap();
    std::os::unix::fs::symlink("f", d.0.join("link")).unwrap();
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64;
    let st = stat(&c, &d.path("link"), true).unwrap();
    assert_eq!((st.kind, st.size), (KIND_FILE, 1234));
    assert!((st.modified.0 - now).abs() < 600, "{st:?}");
    assert!(st.modified.1 < 1_000_000_000 && st.accessed.1 < 1_000_000_000);
    if st.has_created {
        assert!((st.created.0 - now).abs() < 600);
    } else {
        assert_eq!(st.created, (0, 0));
    }
    let meta = std::fs::metadata(d.0.join("f")).unwrap();
    assert_eq!(st, stat_of(&meta));
    assert_eq!(st.mode, meta.mode(), "the whole st_mode: file type and permission bits");
    let l = stat(&c, &d.path("link"), false).unwrap();
    assert_eq!((l.kind, l.size), (KIND_SYMLINK, 1));
    assert_eq!(stat(&c, &d.path("nope"), true), Err(err(errno::ENOENT)));
    assert_eq!(stat(&c, &d.path("f/x"), true), Err(err(errno::ENOTDIR)));
    assert_eq!(stat(&c, &d.0.as_os_str().as_bytes().to_vec(), true).unwrap().kind, KIND_DIR);
    assert_eq!(simple(&c, CALL_STAT, &[2], &[&d.path("f")]), err(errno::EINVAL), "follow is 0 or 1");
}

#[test]
fn unix_times_before_1970() {
    assert_eq!(unix_time(UNIX_EPOCH + Duration::new(5, 7)), (5, 7));
    assert_eq!(unix_time(UNIX_EPOCH - Duration::new(5, 0)), (-5, 0));
    assert_eq!(unix_time(UNIX_EPOCH - Duration::new(5, 250_000_000)), (-6, 750_000_000));
}

#[test]
fn read_dir_lists_entries_with_kinds() {
    let d = TempDir::new("calls-readdir");
    let c = all();
    let mut want = Vec::new();
    for i in 0..500 {
        let name = format!("entry-{i:04}-{}", "n".repeat(i % 40));
        std::fs::write(d.0.join(&name), b"").unwrap();
        want.push((KIND_FILE, name.into_bytes()));
    }
    std::fs::create_dir(d.0.join("sub")).unwrap();
    want.push((KIND_DIR, b"sub".to_vec()));
    std::os::unix::fs::symlink("sub", d.0.join("ln")).unwrap();
    want.push((KIND_SYMLINK, b"ln".to_vec()));
    want.sort();
    let (n, reply) = c.call(CALL_READ_DIR, d.0.as_os_str().as_bytes());
    assert_eq!(n, 502);
    assert!(reply.len() > 10 * RING_PAYLOAD_BYTES_FOR_TESTS);
    assert_eq!(entries(&reply), want);
    let (n, reply) = c.call(CALL_READ_DIR, &d.path("sub"));
    assert_eq!((n, reply), (0, vec![]), "`.` and `..` left out");
    assert_eq!(c.call(CALL_READ_DIR, &d.path("nope")).0, err(errno::ENOENT));
    assert_eq!(c.call(CALL_READ_DIR, &d.path("entry-0000-")).0, err(errno::ENOTDIR));
}

const RING_PAYLOAD_BYTES_FOR_TESTS: usize = rt_abi::protocol::RING_PAYLOAD_BYTES;

#[test]
fn directories_and_names() {
    let d = TempDir::new("calls-dirs");
    let c = all();
    assert_eq!(simple(&c, CALL_MKDIR, &[0o700], &[&d.path("sub")]), 0);
    assert_eq!(std::fs::metadata(d.0.join("sub")).unwrap().mode() & 0o7777, 0o700);
    assert_eq!(simple(&c, CALL_MKDIR, &[0o755], &[&d.path("sub")]), err(errno::EEXIST));
    assert_eq!(simple(&c, CALL_MKDIR, &[0o755], &[&d.path("no/such")]), err(errno::ENOENT));
    std::fs::write(d.0.join("sub/f"), b"abc").unwrap();
    assert_eq!(simple(&c, CALL_RMDIR, &[], &[&d.path("sub")]), err(errno::ENOTEMPTY));
    assert_eq!(simple(&c, CALL_RMDIR, &[], &[&d.path("sub/f")]), err(errno::ENOTDIR));
    assert_eq!(simple(&c, CALL_UNLINK, &[], &[&d.path("sub")]), err(errno::EISDIR));
    // Rename and copy: head = the first path's length.
    let (from, to) = (d.path("sub/f"), d.path("g"));
    assert_eq!(simple(&c, CALL_RENAME, &[from.len() as u64], &[&from, &to]), 0);
    assert!(!d.0.join("sub/f").exists());
    let copy = d.path("sub/copy");
    assert_eq!(simple(&c, CALL_COPY, &[to.len() as u64], &[&to, &copy]), 3, "bytes copied");
    assert_eq!(std::fs::read(d.0.join("sub/copy")).unwrap(), b"abc");
    assert_eq!(simple(&c, CALL_COPY, &[from.len() as u64], &[&from, &copy]), err(errno::ENOENT));
    assert_eq!(simple(&c, CALL_RENAME, &[from.len() as u64], &[&from, &to]), err(errno::ENOENT));
    assert_eq!(simple(&c, CALL_UNLINK, &[], &[&d.path("sub/copy")]), 0);
    assert_eq!(simple(&c, CALL_UNLINK, &[], &[&d.path("sub/copy")]), err(errno::ENOENT));
    assert_eq!(simple(&c, CALL_RMDIR, &[], &[&d.path("sub")]), 0);
    assert!(!d.0.join("sub").exists());
    // Permissions (type bits in the mode are ignored, as chmod does).
    assert_eq!(simple(&c, CALL_SET_PERM, &[0o100444], &[&to]), 0);
    assert_eq!(std::fs::metadata(d.0.join("g")).unwrap().mode() & 0o7777, 0o444);
    assert_eq!(stat(&c, &to, true).unwrap().mode, 0o100444);
    assert_eq!(simple(&c, CALL_SET_PERM, &[0o640], &[&to]), 0);
    assert_eq!(stat(&c, &to, true).unwrap().mode, 0o100640);
    assert_eq!(simple(&c, CALL_SET_PERM, &[0o640], &[&d.path("nope")]), err(errno::ENOENT));
}

#[test]
fn cwd_links_and_canonical_paths() {
    let d = TempDir::new("calls-links");
    let c = all();
    let (s, cwd) = c.call(CALL_GETCWD, &[]);
    assert_eq!(s, 0);
    assert_eq!(cwd, std::env::current_dir().unwrap().as_os_str().as_bytes());
    std::fs::create_dir(d.0.join("sub")).unwrap();
    std::fs::write(d.0.join("f"), b"").unwrap();
    std::os::unix::fs::symlink("sub/../f", d.0.join("link")).unwrap();
    assert_eq!(c.call(CALL_READLINK, &d.path("link")), (0, b"sub/../f".to_vec()));
    assert_eq!(c.call(CALL_READLINK, &d.path("f")).0, err(errno::EINVAL), "not a link");
    assert_eq!(c.call(CALL_READLINK, &d.path("nope")).0, err(errno::ENOENT));
    let canon = std::fs::canonicalize(d.0.join("f")).unwrap();
    assert_eq!(c.call(CALL_CANONICALIZE, &d.path("link")), (0, canon.as_os_str().as_bytes().to_vec()));
    assert_eq!(c.call(CALL_CANONICALIZE, &d.path("sub/../f")).1, canon.as_os_str().as_bytes());
    assert_eq!(c.call(CALL_CANONICALIZE, &d.path("nope")).0, err(errno::ENOENT));
    // Relative paths start at the launcher's working directory.
    let (s, _) = c.call(CALL_STAT, &request(&[1], &[b"."]));
    assert_eq!(s, 0);
}

#[test]
fn malformed_requests_are_einval() {
    let d = TempDir::new("calls-bad");
    let c = all();
    let f = open(&c, &d.path("f"), OPEN_READ | OPEN_WRITE | OPEN_CREATE, 0o644);
    for call in [0, CALL_MAX + 1, 99, u32::MAX] {
        assert_eq!(c.call(call, &request(&[f as u64], &[])), (err(errno::EINVAL), vec![]), "call {call}");
    }
    // Heads too short: each call given one byte less than its head.
    for call in 1..=CALL_MAX {
        let words = head_words_of(call).unwrap();
        if words > 0 {
            let r = request(&vec![f as u64; words], &[]);
            assert_eq!(c.call(call, &r[..r.len() - 1]).0, err(errno::EINVAL), "call {call}");
            assert_eq!(c.call(call, &[]).0, err(errno::EINVAL), "call {call}");
        }
    }
    // A body where the call has none.
    assert_eq!(c.call(CALL_READ, &request(&[f as u64, 1], &[b"x"])).0, err(errno::EINVAL));
    assert_eq!(c.call(CALL_GETCWD, b"x").0, err(errno::EINVAL));
    assert_eq!(c.call(CALL_CLOSE, &request(&[f as u64], &[b"x"])).0, err(errno::EINVAL));
    // Paths: empty, NUL inside, too long.
    let long = vec![b'a'; MAX_PATH + 1];
    for call in [CALL_READ_DIR, CALL_RMDIR, CALL_UNLINK, CALL_READLINK, CALL_CANONICALIZE] {
        assert_eq!(c.call(call, b"").0, err(errno::EINVAL), "call {call}");
        assert_eq!(c.call(call, b"a\0b").0, err(errno::EINVAL), "call {call}");
        assert_eq!(c.call(call, &long).0, err(errno::ENAMETOOLONG), "call {call}");
    }
    assert_eq!(open(&c, b"", OPEN_READ, 0), err(errno::EINVAL));
    assert_eq!(open(&c, &long, OPEN_READ, 0), err(errno::ENAMETOOLONG));
    assert_eq!(stat(&c, b"f\0", true), Err(err(errno::EINVAL)));
    assert_eq!(simple(&c, CALL_MKDIR, &[0o755], &[b""]), err(errno::EINVAL));
    assert_eq!(simple(&c, CALL_SET_PERM, &[0o755], &[b"\0"]), err(errno::EINVAL));
    // Two paths: a first length past the body, an empty second path.
    let p = d.path("f");
    for call in [CALL_RENAME, CALL_COPY, CALL_SYMLINK, CALL_LINK] {
        assert_eq!(simple(&c, call, &[p.len() as u64 + 1], &[&p]), err(errno::EINVAL));
        assert_eq!(simple(&c, call, &[u64::MAX], &[&p, &p]), err(errno::EINVAL));
        assert_eq!(simple(&c, call, &[p.len() as u64], &[&p]), err(errno::EINVAL));
        assert_eq!(simple(&c, call, &[0], &[&p]), err(errno::EINVAL));
        assert_eq!(simple(&c, call, &[p.len() as u64], &[&p, &long]), err(errno::ENAMETOOLONG));
    }
    // The file is still fine after all that.
    assert_eq!(write(&c, f, b"ok"), 2);
}

#[test]
fn transfers_are_capped() {
    let d = TempDir::new("calls-cap");
    let c = all();
    let f = open(&c, &d.path("big"), OPEN_READ | OPEN_WRITE | OPEN_CREATE, 0o644);
    let big = vec![0x5a; MAX_TRANSFER as usize + 50];
    assert_eq!(write(&c, f, &big), MAX_TRANSFER as i64, "a write of at most MAX_TRANSFER");
    assert_eq!(write(&c, f, &big[..100]), 100);
    assert_eq!(seek(&c, f, SEEK_SET, 0), 0);
    let (n, bytes) = read(&c, f, u64::MAX);
    assert_eq!((n, bytes.len()), (MAX_TRANSFER as i64, MAX_TRANSFER as usize));
    assert_eq!(read(&c, f, u64::MAX).0, 100);
}

#[test]
fn read_only_refuses_every_change() {
    let d = TempDir::new("calls-ro");
    std::fs::write(d.0.join("f"), b"keep").unwrap();
    std::fs::create_dir(d.0.join("dir")).unwrap();
    std::os::unix::fs::symlink("f", d.0.join("link")).unwrap();
    let c = HostCalls::with_stdin(FsAccess::ReadOnly, io::Cursor::new(b"in".to_vec()));
    let f = open(&c, &d.path("f"), OPEN_READ, 0);
    assert_eq!(read(&c, h(f) as i64, 10), (4, b"keep".to_vec()));
    for flags in [OPEN_WRITE, OPEN_READ | OPEN_WRITE, OPEN_APPEND, OPEN_READ | OPEN_TRUNCATE, OPEN_WRITE | OPEN_CREATE, OPEN_WRITE | OPEN_CREATE_NEW] {
        assert_eq!(open(&c, &d.path("f"), flags, 0o644), err(errno::EACCES), "flags {flags}");
        assert_eq!(open(&c, &d.path("new"), flags, 0o644), err(errno::EACCES), "flags {flags}");
    }
    let (p, q) = (d.path("f"), d.path("g"));
    assert_eq!(write(&c, f, b"x"), err(errno::EACCES));
    assert_eq!(simple(&c, CALL_SET_LEN, &[f as u64, 0], &[]), err(errno::EACCES));
    assert_eq!(simple(&c, CALL_MKDIR, &[0o755], &[&q]), err(errno::EACCES));
    assert_eq!(simple(&c, CALL_RMDIR, &[], &[&d.path("dir")]), err(errno::EACCES));
    assert_eq!(simple(&c, CALL_UNLINK, &[], &[&p]), err(errno::EACCES));
    assert_eq!(simple(&c, CALL_RENAME, &[p.len() as u64], &[&p, &q]), err(errno::EACCES));
    assert_eq!(simple(&c, CALL_COPY, &[p.len() as u64], &[&p, &q]), err(errno::EACCES));
    assert_eq!(simple(&c, CALL_SET_PERM, &[0o777], &[&p]), err(errno::EACCES));
    assert_eq!(simple(&c, CALL_SYMLINK, &[p.len() as u64], &[&p, &q]), err(errno::EACCES));
    assert_eq!(simple(&c, CALL_LINK, &[p.len() as u64], &[&p, &q]), err(errno::EACCES));
    // Reading stays allowed, and moving about.
    assert_eq!(c.call(CALL_CHDIR, &d.path("dir")).0, 0);
    assert_eq!(stat(&c, &p, true).unwrap().size, 4);
    assert_eq!(fstat(&c, f).size, 4);
    assert_eq!(seek(&c, f, SEEK_SET, 1), 1);
    assert_eq!(simple(&c, CALL_SYNC, &[f as u64, 0], &[]), 0);
    assert_eq!(c.call(CALL_READ_DIR, &d.0.as_os_str().as_bytes().to_vec()).0, 3);
    assert_eq!(c.call(CALL_READLINK, &d.path("link")), (0, b"f".to_vec()));
    assert_eq!(c.call(CALL_CANONICALIZE, &p).0, 0);
    assert_eq!(c.call(CALL_GETCWD, &[]).0, 0);
    assert_eq!(simple(&c, CALL_CLOSE, &[f as u64], &[]), 0);
    assert_eq!(stdin_all(&c), b"in");
    // Nothing changed.
    assert_eq!(std::fs::read(d.0.join("f")).unwrap(), b"keep");
    assert_eq!(std::fs::read_dir(&d.0).unwrap().count(), 3);
}

#[test]
fn no_access_refuses_every_file_call() {
    let d = TempDir::new("calls-none");
    std::fs::write(d.0.join("f"), b"x").unwrap();
    let c = HostCalls::with_stdin(FsAccess::None, io::Cursor::new(b"stdin stays".to_vec()));
    let p = d.path("f");
    for call in 1..=CALL_MAX {
        if matches!(call, CALL_GETCWD | CALL_STDIN_READ) {
            continue;
        }
        let words = head_words_of(call).unwrap();
        let mut head = vec![0u64; words];
        if call == CALL_OPEN {
            head[0] = u64::from(OPEN_READ);
        }
        let two_paths = matches!(call, CALL_RENAME | CALL_COPY | CALL_SYMLINK | CALL_LINK);
        if two_paths {
            head[0] = p.len() as u64;
        }
        let r = c.call(call, &request(&head, &[&p[..], if two_paths { &p[..] } else { &[][..] }]));
        assert_eq!(r, (err(errno::EACCES), vec![]), "call {call}");
    }
    assert_eq!(c.call(CALL_GETCWD, &[]).0, 0);
    assert_eq!(stdin_all(&c), b"stdin stays");
    assert_eq!(c.call(CALL_MAX + 1, &[]).0, err(errno::EINVAL), "unknown stays EINVAL");
    // The denied default is the same, with an empty stdin.
    let mut denied = HostCalls::denied();
    assert_eq!(denied.access(), FsAccess::None);
    assert_eq!(open(&mut denied, &p, OPEN_READ, 0), err(errno::EACCES));
    assert_eq!(stdin_all(&mut denied), b"");
}

#[test]
fn access_names() {
    for a in [FsAccess::All, FsAccess::ReadOnly, FsAccess::None] {
        assert_eq!(a.name().parse::<FsAccess>(), Ok(a));
    }
    assert!("readonly".parse::<FsAccess>().is_err());
    assert_eq!(FsAccess::default(), FsAccess::All);
}

/// Reads the calls' stdin to its end as the device does (asking again
/// after `-EAGAIN`).
fn stdin_all(c: &HostCalls) -> Vec<u8> {
    let mut out = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (s, b) = c.call(CALL_STDIN_READ, &request(&[7], &[]));
        match s {
            0 => return out,
            n if n > 0 => {
                assert_eq!(n as usize, b.len());
                assert!(b.len() <= 7);
                out.extend_from_slice(&b);
            }
            e => {
                assert_eq!(e, err(errno::EAGAIN));
                assert!(b.is_empty());
                assert!(std::time::Instant::now() < deadline, "stdin never came");
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }
}

/// A stdin fed through a channel: `read` blocks until bytes (or the end,
/// when the sender is dropped) come, like a terminal or a pipe.
struct ChannelStdin(std::sync::mpsc::Receiver<Vec<u8>>, Vec<u8>);

impl Read for ChannelStdin {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.1.is_empty() {
            match self.0.recv() {
                Ok(b) => self.1 = b,
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.1.len());
        buf[..n].copy_from_slice(&self.1[..n]);
        self.1.drain(..n);
        Ok(n)
    }
}

#[test]
fn stdin_never_blocks_the_server() {
    let (tx, rx) = std::sync::mpsc::channel();
    let c = HostCalls::with_stdin(FsAccess::All, ChannelStdin(rx, Vec::new()));
    let want = request(&[100], &[]);
    // Nothing has come: EAGAIN, at once, again and again.
    for _ in 0..3 {
        let t = std::time::Instant::now();
        assert_eq!(c.call(CALL_STDIN_READ, &want), (err(errno::EAGAIN), vec![]));
        assert!(t.elapsed() < Duration::from_secs(1));
    }
    assert_eq!(c.call(CALL_STDIN_READ, &request(&[0], &[])), (0, vec![]), "zero bytes wanted");
    tx.send(b"first line\n".to_vec()).unwrap();
    let got = loop {
        match c.call(CALL_STDIN_READ, &request(&[4], &[])) {
            (s, _) if s == err(errno::EAGAIN) => std::thread::sleep(Duration::from_millis(1)),
            r => break r,
        }
    };
    assert_eq!(got, (4, b"firs".to_vec()), "at most what was wanted");
    assert_eq!(c.call(CALL_STDIN_READ, &want), (7, b"t line\n".to_vec()), "what is buffered, no more");
    assert_eq!(c.call(CALL_STDIN_READ, &want).0, err(errno::EAGAIN));
    tx.send(b"second".to_vec()).unwrap();
    drop(tx);
    assert_eq!(stdin_all(&c), b"second");
    assert_eq!(c.call(CALL_STDIN_READ, &want), (0, vec![]), "the end stays the end");
    assert_eq!(c.call(CALL_STDIN_READ, &request(&[1], &[b"x"])).0, err(errno::EINVAL), "no body");
}

struct FailingStdin;
impl Read for FailingStdin {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        Err(io::Error::from_raw_os_error(errno::EIO))
    }
}

#[test]
fn stdin_errors_and_read_ahead() {
    let c = HostCalls::with_stdin(FsAccess::All, FailingStdin);
    let want = request(&[10], &[]);
    let r = loop {
        match c.call(CALL_STDIN_READ, &want) {
            (s, _) if s == err(errno::EAGAIN) => std::thread::sleep(Duration::from_millis(1)),
            r => break r,
        }
    };
    assert_eq!(r, (err(errno::EIO), vec![]));
    // An endless stdin is read ahead only so far.
    let c = HostCalls::with_stdin(FsAccess::All, io::repeat(b'y'));
    let first = loop {
        match c.call(CALL_STDIN_READ, &request(&[u64::MAX], &[])) {
            (s, _) if s == err(errno::EAGAIN) => std::thread::sleep(Duration::from_millis(1)),
            r => break r,
        }
    };
    assert!(first.0 > 0 && first.1.iter().all(|&b| b == b'y'));
    std::thread::sleep(Duration::from_millis(100));
    let buffered = {
        let stdin = c.stdin.lock().unwrap();
        let Stdin::Reading(shared) = &*stdin else { unreachable!("the reader runs") };
        shared.buf.lock().unwrap().data.len()
    };
    assert!(buffered <= STDIN_BUFFERED + STDIN_CHUNK, "{buffered} bytes read ahead");
    let (n, b) = c.call(CALL_STDIN_READ, &request(&[u64::MAX], &[]));
    assert!(n > 0 && n as u64 <= MAX_TRANSFER && b.len() == n as usize);
    drop(c); // the reader stops at its next turn
}

#[test]
fn errno_mapping() {
    assert_eq!(errno_of(io::Error::from_raw_os_error(errno::ENOENT)), errno::ENOENT);
    assert_eq!(errno_of(io::Error::from(ErrorKind::NotFound)), errno::ENOENT);
    assert_eq!(errno_of(io::Error::from(ErrorKind::InvalidInput)), errno::EINVAL);
    assert_eq!(errno_of(io::Error::from(ErrorKind::IsADirectory)), errno::EISDIR);
    assert_eq!(errno_of(io::Error::other("no code")), errno::EIO);
}

#[test]
fn open_past_the_limit_is_emfile() {
    // Other tests of this process open files meanwhile: the host's own
    // limit must not be what this one meets (gpurun raises it the same way).
    raise_fd_limit();
    let d = TempDir::new("calls-emfile");
    std::fs::write(d.0.join("f"), b"x").unwrap();
    let c = all();
    let handles: Vec<i64> = (0..MAX_OPEN_FILES).map(|_| open(&c, &d.path("f"), OPEN_READ, 0)).collect();
    assert!(handles.iter().all(|&f| f >= 3), "{:?}", handles.iter().find(|&&f| f < 3));
    assert_eq!(c.open_files(), MAX_OPEN_FILES);
    // One more: EMFILE, what the host's own open says at its limit; the
    // files already open still work.
    assert_eq!(open(&c, &d.path("f"), OPEN_READ, 0), err(errno::EMFILE));
    assert_eq!(read(&c, handles[0], 10), (1, b"x".to_vec()));
    // A close makes room for one.
    assert_eq!(simple(&c, CALL_CLOSE, &[h(handles[7])], &[]), 0);
    assert!(open(&c, &d.path("f"), OPEN_READ, 0) >= 3);
    assert_eq!(open(&c, &d.path("f"), OPEN_READ, 0), err(errno::EMFILE));
    // A failed open takes no place.
    assert_eq!(simple(&c, CALL_CLOSE, &[h(handles[8])], &[]), 0);
    assert_eq!(open(&c, &d.path("missing"), OPEN_READ, 0), err(errno::ENOENT));
    assert!(open(&c, &d.path("f"), OPEN_READ, 0) >= 3);
}

#[test]
fn the_hosts_own_emfile_is_the_programs_error() {
    assert_eq!(errno_of(io::Error::from_raw_os_error(errno::EMFILE)), errno::EMFILE);
    assert_eq!(errno_of(io::Error::from_raw_os_error(errno::ENFILE)), errno::ENFILE);
}

#[test]
fn a_read_within_a_small_budget_is_short() {
    let d = TempDir::new("calls-short");
    std::fs::write(d.0.join("f"), vec![7u8; 5000]).unwrap();
    let c = all();
    let f = open(&c, &d.path("f"), OPEN_READ, 0);
    let (n, bytes) = c.call_within(CALL_READ, &request(&[h(f), 5000], &[]), 300);
    assert_eq!((n, bytes.len()), (300, 300));
    assert_eq!(read(&c, f, 10_000).0, 4700);
}
