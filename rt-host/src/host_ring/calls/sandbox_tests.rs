//! The program's current directory and `--fs-root`, on [`HostCalls`]
//! directly: the calls' semantics beneath a root, `set_current_dir` with
//! and without one, and a seeded fuzz of paths built to escape the root
//! (with a racing directory-for-symlink swap) that checks nothing outside
//! is ever read, written, created or removed.

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::prelude::rust_2024::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::{format, vec};

use super::*;
use crate::host_ring::testing::{Rng, TempDir, request};

fn err(e: i32) -> i64 {
    -i64::from(e)
}

/// Calls whose paths resolve beneath `root`.
fn rooted(root: &Path) -> HostCalls {
    let root = FsRoot::open(root).expect("openat2 is needed for --fs-root (Linux 5.6+)");
    HostCalls::with_stdin(FsAccess::All, io::empty()).with_root(root)
}

fn one(c: &mut HostCalls, call: u32, head: &[u64], path: &[u8]) -> (i64, Vec<u8>) {
    c.call(call, &request(head, &[path]))
}

fn two(c: &mut HostCalls, call: u32, a: &[u8], b: &[u8]) -> i64 {
    c.call(call, &request(&[a.len() as u64], &[a, b])).0
}

fn open(c: &mut HostCalls, path: &[u8], flags: u32) -> i64 {
    one(c, CALL_OPEN, &[u64::from(flags) | 0o644 << 32], path).0
}

fn read_all(c: &mut HostCalls, handle: i64) -> Vec<u8> {
    let (n, bytes) = c.call(CALL_READ, &request(&[handle as u64, 1 << 16], &[]));
    assert!(n >= 0, "read: {n}");
    bytes
}

fn close(c: &mut HostCalls, handle: i64) {
    assert_eq!(c.call(CALL_CLOSE, &request(&[handle as u64], &[])).0, 0);
}

fn bytes(p: &Path) -> Vec<u8> {
    p.as_os_str().as_bytes().to_vec()
}

#[test]
fn root_is_the_programs_slash() {
    let t = TempDir::new("root-basics");
    let root = t.0.join("root");
    std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
    std::fs::write(root.join("sub/f"), b"inside").unwrap();
    std::fs::write(t.0.join("secret"), b"outside").unwrap();
    std::os::unix::fs::symlink("/", root.join("to-slash")).unwrap();
    std::os::unix::fs::symlink("..", root.join("to-up")).unwrap();
    std::os::unix::fs::symlink(t.0.join("secret"), root.join("to-host-secret")).unwrap();
    let mut c = rooted(&root);

    // `/` and `..` past the top are the root.
    for p in ["/sub/f", "sub/f", "../../sub/f", "/../sub/./f", "to-slash/sub/f", "to-up/to-up/sub/f", "sub/deeper/../../../sub/f"] {
        let h = open(&mut c, p.as_bytes(), OPEN_READ);
        assert!(h >= 3, "{p}: {h}");
        assert_eq!(read_all(&mut c, h), b"inside", "{p}");
        close(&mut c, h);
    }
    // What is outside is not there.
    let host_secret = bytes(&t.0.join("secret"));
    for p in [&b"../secret"[..], b"to-up/secret", b"to-host-secret", &host_secret, b"/proc/self/environ", b"/etc/passwd"] {
        assert_eq!(open(&mut c, p, OPEN_READ), err(errno::ENOENT), "{}", String::from_utf8_lossy(p));
    }
    // Metadata, listings, canonical names: the root's view.
    assert_eq!(one(&mut c, CALL_STAT, &[1], b"/sub/f").0, 0);
    assert_eq!(one(&mut c, CALL_STAT, &[0], b"to-host-secret").0, 0, "the link itself is inside");
    assert_eq!(one(&mut c, CALL_STAT, &[1], b"to-host-secret").0, err(errno::ENOENT));
    let (n, _) = one(&mut c, CALL_READ_DIR, &[], b"..");
    assert_eq!(n, 4, "the root's entries: sub and three links");
    assert_eq!(one(&mut c, CALL_CANONICALIZE, &[], b"to-slash/sub/deeper/.."), (0, b"/sub".to_vec()));
    assert_eq!(one(&mut c, CALL_CANONICALIZE, &[], b"../.."), (0, b"/".to_vec()));
    assert_eq!(one(&mut c, CALL_READLINK, &[], b"to-host-secret"), (0, host_secret.clone()), "a target is data");
    // A link whose target names a host path leads to that path inside.
    assert_eq!(two(&mut c, CALL_SYMLINK, &bytes(&t.0.join("made")), b"/out-link"), 0);
    assert_eq!(open(&mut c, b"out-link", OPEN_WRITE | OPEN_CREATE), err(errno::ENOENT), "no such directories inside");
    assert_eq!(two(&mut c, CALL_SYMLINK, b"../../made", b"up-link"), 0);
    let h = open(&mut c, b"up-link", OPEN_WRITE | OPEN_CREATE);
    assert!(h >= 3, "{h}");
    close(&mut c, h);
    assert!(root.join("made").is_file() && !t.0.join("made").exists(), "created at the top, not outside");
    // Changes beyond the top stay at the top.
    assert_eq!(one(&mut c, CALL_MKDIR, &[0o755], b"../../made-dir").0, 0);
    assert!(root.join("made-dir").is_dir() && !t.0.join("made-dir").exists());
    assert_eq!(two(&mut c, CALL_RENAME, b"sub/f", b"../moved"), 0);
    assert!(root.join("moved").exists() && !t.0.join("moved").exists());
    assert_eq!(two(&mut c, CALL_LINK, b"/moved", b"to-up/hard"), 0);
    assert!(root.join("hard").exists() && !t.0.join("hard").exists());
    assert_eq!(two(&mut c, CALL_LINK, b"to-host-secret", b"hard-to-link"), 0, "links the symlink itself");
    assert_eq!(std::fs::read_link(root.join("hard-to-link")).unwrap(), t.0.join("secret"));
    assert_eq!(one(&mut c, CALL_UNLINK, &[], b"../secret").0, err(errno::ENOENT));
    assert_eq!(one(&mut c, CALL_SET_PERM, &[0o600], b"to-host-secret").0, err(errno::ENOENT));
    assert_eq!(std::fs::read(t.0.join("secret")).unwrap(), b"outside");
    // The final-component calls on `.`, `..`, `/` and a trailing slash.
    assert_eq!(one(&mut c, CALL_RMDIR, &[], b"/").0, err(errno::EINVAL));
    assert_eq!(one(&mut c, CALL_RMDIR, &[], b"sub/..").0, err(errno::ENOTEMPTY));
    assert_eq!(one(&mut c, CALL_MKDIR, &[0o755], b"..").0, err(errno::EEXIST));
    assert_eq!(one(&mut c, CALL_UNLINK, &[], b"moved/").0, err(errno::ENOTDIR));
    assert_eq!(one(&mut c, CALL_UNLINK, &[], b"sub/").0, err(errno::EISDIR));
    assert_eq!(one(&mut c, CALL_MKDIR, &[0o755], b"new-dir/").0, 0);
    assert_eq!(one(&mut c, CALL_RMDIR, &[], b"new-dir//").0, 0);
    assert_eq!(one(&mut c, CALL_STAT, &[0], b"to-up/").0, 0, "a trailing slash follows, inside");
    assert_eq!(two(&mut c, CALL_RENAME, b"moved", b"sub/"), err(errno::ENOTDIR));
}

#[test]
fn set_current_dir_beneath_a_root() {
    let t = TempDir::new("root-cwd");
    std::fs::create_dir_all(t.0.join("a/b")).unwrap();
    std::fs::write(t.0.join("a/b/f"), b"f").unwrap();
    std::os::unix::fs::symlink("/a", t.0.join("link-a")).unwrap();
    let mut c = rooted(&t.0);
    assert_eq!(c.call(CALL_GETCWD, &[]), (0, b"/".to_vec()));
    assert_eq!(one(&mut c, CALL_CHDIR, &[], b"link-a/b").0, 0);
    assert_eq!(c.call(CALL_GETCWD, &[]), (0, b"/a/b".to_vec()), "the canonical name");
    let h = open(&mut c, b"f", OPEN_READ);
    assert!(h >= 3, "relative to the new directory: {h}");
    assert_eq!(one(&mut c, CALL_STAT, &[1], b"../b/f").0, 0);
    assert_eq!(one(&mut c, CALL_STAT, &[1], b"../../../../a/b/f").0, 0, "`..` stops at the root");
    assert_eq!(one(&mut c, CALL_CHDIR, &[], b"nope").0, err(errno::ENOENT));
    assert_eq!(one(&mut c, CALL_CHDIR, &[], b"f").0, err(errno::ENOTDIR));
    assert_eq!(c.call(CALL_GETCWD, &[]), (0, b"/a/b".to_vec()), "a failed chdir changes nothing");
    assert_eq!(one(&mut c, CALL_CHDIR, &[], b"../../..").0, 0);
    assert_eq!(c.call(CALL_GETCWD, &[]), (0, b"/".to_vec()));
}

#[test]
fn set_current_dir_without_a_root() {
    let t = TempDir::new("host-cwd");
    std::fs::create_dir(t.0.join("d")).unwrap();
    std::fs::write(t.0.join("d/f"), b"here").unwrap();
    std::fs::write(t.0.join("file"), b"").unwrap();
    let mut c = HostCalls::with_stdin(FsAccess::All, io::empty());
    assert_eq!(c.call(CALL_GETCWD, &[]).1, bytes(&std::env::current_dir().unwrap()), "gpurun's own at first");
    assert_eq!(c.call(CALL_CHDIR, &t.path("d")).0, 0);
    assert_eq!(c.call(CALL_GETCWD, &[]).1, bytes(&std::fs::canonicalize(t.0.join("d")).unwrap()));
    let h = open(&mut c, b"f", OPEN_READ);
    assert!(h >= 3, "{h}");
    assert_eq!(read_all(&mut c, h), b"here");
    assert_eq!(two(&mut c, CALL_RENAME, b"f", b"../g"), 0);
    assert!(t.0.join("g").exists());
    assert_eq!(two(&mut c, CALL_SYMLINK, b"../g", b"lnk"), 0);
    assert_eq!(c.call(CALL_READLINK, b"lnk"), (0, b"../g".to_vec()));
    assert_eq!(two(&mut c, CALL_LINK, b"lnk", b"hard"), 0, "links the symlink itself");
    assert!(std::fs::symlink_metadata(t.0.join("d/hard")).unwrap().is_symlink());
    assert_eq!(two(&mut c, CALL_LINK, b"../g", b"hard-g"), 0);
    assert_eq!(std::fs::metadata(t.0.join("g")).unwrap().nlink(), 2);
    assert_eq!(c.call(CALL_CHDIR, &t.path("file")).0, err(errno::ENOTDIR));
    assert_eq!(c.call(CALL_CHDIR, &t.path("missing")).0, err(errno::ENOENT));
    assert_eq!(c.call(CALL_GETCWD, &[]).1, bytes(&std::fs::canonicalize(t.0.join("d")).unwrap()));
    // The process's own directory is untouched.
    assert_ne!(std::env::current_dir().unwrap(), std::fs::canonicalize(t.0.join("d")).unwrap());
    // Read-only still moves; none refuses.
    let ro = HostCalls::with_stdin(FsAccess::ReadOnly, io::empty());
    assert_eq!(ro.call(CALL_CHDIR, &t.path("d")).0, 0);
    let none = HostCalls::with_stdin(FsAccess::None, io::empty());
    assert_eq!(none.call(CALL_CHDIR, &t.path("d")).0, err(errno::EACCES));
}

#[test]
fn a_root_that_is_not_a_directory_is_refused() {
    let t = TempDir::new("root-bad");
    std::fs::write(t.0.join("f"), b"").unwrap();
    assert!(matches!(FsRoot::open(&t.0.join("f")), Err(RootError::Open { .. })));
    assert!(matches!(FsRoot::open(&t.0.join("missing")), Err(RootError::Open { .. })));
    let e = FsRoot::open(&t.0.join("missing")).unwrap_err().to_string();
    assert!(e.contains("--fs-root") && e.contains("missing"), "{e}");
}

// ---- the fuzz --------------------------------------------------------------

/// What the world outside the root looks like: each path's kind, size,
/// mode, mtime, inode and, for files, contents.
type Snapshot = BTreeMap<PathBuf, (u32, u64, i64, i64, u64, Vec<u8>)>;

fn snapshot(paths: &[PathBuf]) -> Snapshot {
    let mut s = Snapshot::new();
    for p in paths {
        let entry = match std::fs::symlink_metadata(p) {
            Ok(m) => {
                let content = if m.is_file() { std::fs::read(p).unwrap_or_default() } else { Vec::new() };
                (m.mode(), m.len(), m.mtime(), m.mtime_nsec(), m.ino(), content)
            }
            Err(_) => (0, 0, 0, 0, 0, Vec::new()),
        };
        s.insert(p.clone(), entry);
    }
    s
}

/// The stats a leak would show: of what is outside.
fn outside_stats(paths: &[PathBuf]) -> Vec<Stat> {
    let mut v = Vec::new();
    for p in paths {
        for m in [std::fs::metadata(p), std::fs::symlink_metadata(p)].into_iter().flatten() {
            v.push(stat_of(&m));
        }
    }
    v
}

const CANARY: &[u8] = b"CANARY-outside-the-root-0f3a";
/// Names that exist only outside (the fuzz never creates them inside).
const OUTSIDE_NAMES: &[&str] = &["outside-secret", "sibling", "also-secret", "root", "usr", "etc", "proc", "bin"];
/// Names the fuzz creates: distinctive, since were the sandbox broken, an
/// escape could make them anywhere, the host's `/` included (which the
/// judge watches).
const CREATE_NAMES: &[&str] = &["fz-new", "fz-new2", "fz-x", "fz-made"];
/// Final components that are no plain new name: `..`, `.`, the links.
const SPECIAL_NAMES: &[&str] = &["..", ".", "", "up", "top", "outer-abs", "secret-abs", "secret-rel", "loop-a", "procroot", "dotdots"];
const LOOKUP_NAMES: &[&str] = &[
    "..", ".", "", "d", "f.txt", "up", "top", "outer-abs", "secret-abs", "secret-rel", "loop-a", "procroot", "dotdots",
    "hl", "fz-new", "fz-new2", "fz-x", "outside-secret", "sibling", "also-secret", "root", "proc", "self", "environ", "etc",
];

struct World {
    _t: TempDir,
    outer: PathBuf,
    root: PathBuf,
    /// Paths outside the root, watched.
    watched: Vec<PathBuf>,
}

fn world(name: &str) -> World {
    let t = TempDir::new(name);
    let outer = std::fs::canonicalize(&t.0).unwrap();
    let root = outer.join("root");
    std::fs::create_dir_all(root.join("d")).unwrap();
    std::fs::write(outer.join("outside-secret"), CANARY).unwrap();
    std::fs::set_permissions(outer.join("outside-secret"), std::fs::Permissions::from_mode(0o640)).unwrap();
    std::fs::create_dir(outer.join("sibling")).unwrap();
    std::fs::write(outer.join("sibling/also-secret"), CANARY).unwrap();
    std::fs::write(root.join("f.txt"), b"inside").unwrap();
    std::fs::write(root.join("d/f.txt"), b"inside d").unwrap();
    std::fs::hard_link(root.join("f.txt"), root.join("hl")).unwrap();
    let link = |target: &Path, name: &str| std::os::unix::fs::symlink(target, root.join(name)).unwrap();
    link(Path::new(".."), "up");
    link(Path::new("/"), "top");
    link(&outer, "outer-abs");
    link(&outer.join("outside-secret"), "secret-abs");
    link(Path::new("../outside-secret"), "secret-rel");
    link(Path::new("loop-b"), "loop-a");
    link(Path::new("loop-a"), "loop-b");
    link(Path::new("/proc/self/root"), "procroot");
    link(Path::new("../../../../../../.."), "dotdots");
    let mut watched = vec![outer.clone(), outer.join("outside-secret"), outer.join("sibling"), outer.join("sibling/also-secret")];
    // What an escape would create: next to the root, and at the host's top.
    for n in CREATE_NAMES {
        watched.push(outer.join(n));
        watched.push(Path::new("/").join(n));
    }
    World { _t: t, outer, root, watched }
}

/// A path built to escape: `..` chains, absolute host paths, the planted
/// links, `/proc`, NUL, too long; its last component from `last` when the
/// call creates it.
fn escape_path(rng: &mut Rng, w: &World, creates: bool) -> Vec<u8> {
    let pick = |rng: &mut Rng, names: &[&str]| names[(rng.next() % names.len() as u64) as usize].to_string();
    match rng.next() % 24 {
        0 => bytes(&w.outer.join("outside-secret")),
        1 => format!("/proc/self/root{}", w.outer.join("outside-secret").display()).into_bytes(),
        2 => [&b"/proc/self/"[..], if rng.next() % 2 == 0 { b"environ" } else { b"mem" }].concat(),
        3 => "../".repeat(1 + (rng.next() % 3000) as usize).into_bytes(),
        4 => vec![b'a'; MAX_PATH - 10 + (rng.next() % 20) as usize],
        5 => b"d/\0/../../outside-secret".to_vec(),
        6 => format!("{}/{}", w.outer.display(), pick(rng, CREATE_NAMES)).into_bytes(),
        _ => {
            let n = 1 + rng.next() % 5;
            let mut parts: Vec<String> = (0..n).map(|_| pick(rng, LOOKUP_NAMES)).collect();
            if creates {
                let last = if rng.next() % 4 == 0 { SPECIAL_NAMES } else { CREATE_NAMES };
                *parts.last_mut().unwrap() = pick(rng, last);
            }
            let mut p = parts.join("/");
            if rng.next() % 3 == 0 {
                p.insert(0, '/');
            }
            if rng.next() % 8 == 0 {
                p.push('/');
            }
            if p.is_empty() { b".".to_vec() } else { p.into_bytes() }
        }
    }
}

/// Checks after one call: nothing outside changed; what came back is the
/// root's.
struct Judge {
    before: Snapshot,
    leak_stats: Vec<Stat>,
    root: PathBuf,
}

impl Judge {
    fn new(w: &World) -> Judge {
        let mut leak_paths = w.watched.clone();
        leak_paths.extend(["/", "/etc", "/proc", "/proc/self", "/tmp"].map(PathBuf::from));
        leak_paths.push(w.outer.parent().unwrap().to_path_buf());
        Judge { before: snapshot(&w.watched), leak_stats: outside_stats(&leak_paths), root: w.root.clone() }
    }

    fn judge(&self, c: &mut HostCalls, w: &World, what: &str, call: u32, status: i64, reply: &[u8]) {
        assert_eq!(snapshot(&w.watched), self.before, "{what}: changed something outside the root");
        if status < 0 {
            return;
        }
        match call {
            CALL_OPEN => {
                let link = std::fs::read_link(format!("/proc/self/fd/{}", c.file(status as u64).unwrap().as_raw_fd())).unwrap();
                assert!(link.starts_with(&self.root), "{what}: opened {}", link.display());
                let (n, data) = c.call(CALL_READ, &request(&[status as u64, 4096], &[]));
                assert!(n < 0 || !data.windows(CANARY.len()).any(|x| x == CANARY), "{what}: read the canary");
                close(c, status);
            }
            CALL_STAT => {
                let st = Stat::from_bytes(reply.try_into().unwrap());
                assert!(!self.leak_stats.contains(&st), "{what}: the metadata of something outside: {st:?}");
            }
            CALL_READ_DIR => {
                for name in OUTSIDE_NAMES {
                    let len = (name.len() as u16).to_le_bytes();
                    let listed = reply.windows(name.len() + 2).any(|x| x[2..] == *name.as_bytes() && x[0..2] == len);
                    assert!(!listed, "{what}: listed {name}, which is outside");
                }
            }
            CALL_CANONICALIZE | CALL_GETCWD => {
                assert_eq!(reply.first(), Some(&b'/'), "{what}");
                let inside = self.root.join(std::ffi::OsStr::from_bytes(&reply[1..]));
                assert!(std::fs::symlink_metadata(&inside).is_ok(), "{what}: {} is not inside", inside.display());
            }
            _ => {}
        }
    }
}

/// The files beneath the root (not following links) hold no canary.
fn no_canary_inside(root: &Path) {
    for e in std::fs::read_dir(root).unwrap().flatten() {
        let m = e.path().symlink_metadata().unwrap();
        if m.is_dir() {
            no_canary_inside(&e.path());
        } else if m.is_file() {
            let data = std::fs::read(e.path()).unwrap_or_default();
            assert!(!data.windows(CANARY.len()).any(|x| x == CANARY), "{} holds the canary", e.path().display());
        }
    }
}

use std::os::fd::AsRawFd;

#[test]
fn fuzz_paths_never_leave_the_root() {
    let w = world("root-fuzz");
    let judge = Judge::new(&w);
    let mut c = rooted(&w.root);
    let mut rng = Rng(0x5A4D_B0C5_0000_0042);
    let calls = [
        CALL_OPEN, CALL_STAT, CALL_READ_DIR, CALL_MKDIR, CALL_RMDIR, CALL_UNLINK, CALL_RENAME, CALL_COPY, CALL_SET_PERM, CALL_READLINK,
        CALL_CANONICALIZE, CALL_CHDIR, CALL_GETCWD, CALL_SYMLINK, CALL_LINK,
    ];
    let opens = [
        OPEN_READ,
        OPEN_WRITE | OPEN_CREATE,
        OPEN_WRITE | OPEN_CREATE_NEW,
        OPEN_APPEND | OPEN_CREATE,
        OPEN_READ | OPEN_WRITE | OPEN_TRUNCATE,
    ];
    let (mut ok, mut swapped) = (0, false);
    for i in 0..6000 {
        // Now and then the world changes under the program: a directory
        // becomes a symlink out (to the root's parent, to `/`) and back.
        if rng.next() % 16 == 0 {
            let d = w.root.join("d");
            if swapped {
                let _ = std::fs::remove_file(&d);
                let _ = std::fs::rename(w.root.join("d-away"), &d);
            } else if std::fs::symlink_metadata(&d).is_ok_and(|m| m.is_dir()) && std::fs::rename(&d, w.root.join("d-away")).is_ok() {
                let target = if rng.next() % 2 == 0 { w.outer.clone() } else { PathBuf::from("/") };
                std::os::unix::fs::symlink(target, &d).unwrap();
            }
            swapped = !swapped;
        }
        let call = calls[(rng.next() % calls.len() as u64) as usize];
        let creates = matches!(call, CALL_OPEN | CALL_MKDIR | CALL_RENAME | CALL_COPY | CALL_SYMLINK | CALL_LINK);
        let a = escape_path(&mut rng, &w, false);
        let b = escape_path(&mut rng, &w, creates);
        let mode = [0o755u64, 0o700, 0o644, 0o600][(rng.next() % 4) as usize];
        let req = match call {
            CALL_OPEN => request(&[u64::from(opens[(rng.next() % opens.len() as u64) as usize]) | 0o644 << 32], &[&b]),
            CALL_STAT => request(&[rng.next() % 2], &[&a]),
            CALL_MKDIR => request(&[mode], &[&b]),
            CALL_SET_PERM => request(&[mode], &[&a]),
            CALL_RENAME | CALL_COPY | CALL_LINK => request(&[a.len() as u64], &[&a, &b]),
            // A symlink's target is any text, outside paths included.
            CALL_SYMLINK => request(&[a.len() as u64], &[&a, &b]),
            CALL_GETCWD => Vec::new(),
            _ => a.clone(),
        };
        let (status, reply) = c.call(call, &req);
        let what = format!("case {i}: call {call} {:?} {:?} -> {status}", String::from_utf8_lossy(&a), String::from_utf8_lossy(&b));
        judge.judge(&mut c, &w, &what, call, status, &reply);
        ok += usize::from(status >= 0);
        if i % 500 == 0 {
            no_canary_inside(&w.root);
        }
    }
    no_canary_inside(&w.root);
    // The fuzz did things, not only fail (about 600 succeed; how many
    // depends on the length of the temporary folder's name, which the
    // long paths' limits meet).
    assert!(ok > 450, "only {ok} calls succeeded");
}

#[test]
fn a_racing_swap_never_leads_out() {
    let w = world("root-race");
    let judge = Judge::new(&w);
    let mut c = rooted(&w.root);
    let stop = Arc::new(AtomicBool::new(false));
    let racer = {
        let (root, outer, stop) = (w.root.clone(), w.outer.clone(), stop.clone());
        std::thread::spawn(move || {
            let (race, away) = (root.join("race"), root.join("race-away"));
            std::fs::create_dir(&race).unwrap();
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                if std::fs::rename(&race, &away).is_ok() {
                    let _ = std::os::unix::fs::symlink(&outer, &race);
                    let _ = std::fs::remove_file(&race);
                    let _ = std::fs::rename(&away, &race);
                    swaps += 1;
                }
            }
            swaps
        })
    };
    let names = ["race/x", "race/new", "race/../x", "race/made", "race/outside-secret", "race/sibling/also-secret"];
    let mut rng = Rng(0x0DD_BA11);
    let start = std::time::Instant::now();
    let mut n = 0;
    while start.elapsed() < std::time::Duration::from_millis(1500) {
        let p = names[(rng.next() % names.len() as u64) as usize].as_bytes();
        let q = names[(rng.next() % names.len() as u64) as usize].as_bytes();
        let (call, req) = match rng.next() % 7 {
            0 => (CALL_OPEN, request(&[u64::from(OPEN_WRITE | OPEN_CREATE) | 0o644 << 32], &[p])),
            1 => (CALL_OPEN, request(&[u64::from(OPEN_READ)], &[p])),
            2 => (CALL_MKDIR, request(&[0o755], &[p])),
            3 => (CALL_UNLINK, p.to_vec()),
            4 => (CALL_RENAME, request(&[p.len() as u64], &[p, q])),
            5 => (CALL_STAT, request(&[1], &[p])),
            _ => (CALL_RMDIR, p.to_vec()),
        };
        let (status, reply) = c.call(call, &req);
        judge.judge(&mut c, &w, &format!("race call {call} {:?}", String::from_utf8_lossy(p)), call, status, &reply);
        n += 1;
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = racer.join().unwrap();
    no_canary_inside(&w.root);
    assert!(n > 100 && swaps > 100, "{n} calls against {swaps} swaps");
}
