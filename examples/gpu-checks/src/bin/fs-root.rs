//! `gpurun run --fs-root DIR` and `set_current_dir`.
//!
//! `fs-root`: run under `--fs-root`; tries to leave the root (`..` chains,
//! `/proc`, symlinks to `/` and up) and prints each error kind, then moves
//! into a directory it made and opens files by relative paths. Prints
//! `fs-root: ok` when everything behaved as in a chroot.
//! `fs-root --cwd DIR`: without a root; `set_current_dir(DIR)`, then a
//! relative create that must land in DIR. Prints `cwd: ok`.

use std::env;
use std::fs;
use std::io::ErrorKind;
use std::path::Path;

/// Prints what happened and remembers whether it was what was expected.
struct Checker {
    failed: Vec<String>,
}

impl Checker {
    fn expect<T>(&mut self, what: &str, r: std::io::Result<T>, want: ErrorKind) {
        match r {
            Ok(_) => {
                println!("{what}: succeeded");
                self.failed.push(format!("{what} succeeded, expected {want:?}"));
            }
            Err(e) => {
                println!("{what}: {:?}", e.kind());
                if e.kind() != want {
                    self.failed.push(format!("{what}: {e} ({:?}), expected {want:?}", e.kind()));
                }
            }
        }
    }

    fn same<T: PartialEq + std::fmt::Debug>(&mut self, what: &str, got: T, want: T) {
        println!("{what}: {got:?}");
        if got != want {
            self.failed.push(format!("{what}: {got:?}, expected {want:?}"));
        }
    }

    fn done(self, name: &str) {
        if self.failed.is_empty() {
            println!("{name}: ok");
        } else {
            for f in &self.failed {
                println!("{name}: FAILED: {f}");
            }
            std::process::exit(1);
        }
    }
}

fn main() {
    let args: Vec<String> = env::args().collect();
    if let [_, flag, dir] = &args[..]
        && flag == "--cwd"
    {
        return cwd(Path::new(dir));
    }
    in_root();
}

fn in_root() {
    let mut c = Checker { failed: Vec::new() };
    let mut names: Vec<String> = env::vars().map(|(k, _)| k).collect();
    names.sort();
    println!("env: {}", names.join(" "));
    c.same("current_dir", env::current_dir().ok(), Some("/".into()));
    // The code object lies outside the root (the check's bundle).
    c.expect("current_exe", env::current_exe(), ErrorKind::NotFound);
    let work = Path::new("/fs-root-check");
    let _ = fs::remove_dir_all(work);
    fs::create_dir(work).expect("mkdir /fs-root-check");
    fs::write(work.join("inside.txt"), "inside\n").expect("write inside.txt");

    // Ways out, none of which leads anywhere outside.
    c.expect("escape ../../../../etc/passwd", fs::read("../../../../etc/passwd"), ErrorKind::NotFound);
    c.expect("escape /proc/self/environ", fs::read("/proc/self/environ"), ErrorKind::NotFound);
    c.expect("escape /proc/self/mem", fs::OpenOptions::new().write(true).open("/proc/self/mem"), ErrorKind::NotFound);
    #[allow(deprecated)]
    let linked = (fs::soft_link("../../../..", work.join("up")), fs::soft_link("/", work.join("top")));
    c.same("symlinks made", (linked.0.is_ok(), linked.1.is_ok()), (true, true));
    c.expect("escape up/etc/passwd", fs::read(work.join("up/etc/passwd")), ErrorKind::NotFound);
    c.expect("escape top/proc/self/environ", fs::read(work.join("top/proc/self/environ")), ErrorKind::NotFound);
    c.same("read up/fs-root-check/inside.txt", fs::read_to_string(work.join("up/fs-root-check/inside.txt")).ok(), Some("inside\n".into()));
    c.same("canonicalize up/fs-root-check/..", fs::canonicalize(work.join("up/fs-root-check/..")).ok(), Some("/".into()));
    let top = fs::write("../../top.txt", "x").and_then(|()| fs::read_to_string("/top.txt"));
    c.same("write ../../top.txt lands at the top", top.ok(), Some("x".into()));
    let _ = fs::remove_file("/top.txt");
    c.same("hard link", fs::hard_link(work.join("inside.txt"), work.join("hard.txt")).is_ok(), true);
    c.same("hard link reads", fs::read_to_string(work.join("hard.txt")).ok(), Some("inside\n".into()));

    // The current directory.
    c.same("set_current_dir /fs-root-check", env::set_current_dir(work).is_ok(), true);
    c.same("current_dir", env::current_dir().ok(), Some(work.into()));
    c.same("relative read inside.txt", fs::read_to_string("inside.txt").ok(), Some("inside\n".into()));
    c.same("relative write", fs::write("relative.txt", "made relative\n").is_ok(), true);
    c.same("seen from the top", fs::read_to_string("/fs-root-check/relative.txt").ok(), Some("made relative\n".into()));
    let from_thread = std::thread::spawn(|| fs::read_to_string("relative.txt").ok()).join().unwrap();
    c.same("another thread's relative read", from_thread, Some("made relative\n".into()));
    c.expect("set_current_dir missing", env::set_current_dir("missing"), ErrorKind::NotFound);
    let not_dir = env::set_current_dir("inside.txt");
    if let Err(e) = &not_dir {
        println!("set_current_dir a file says: {e}");
    }
    c.expect("set_current_dir inside.txt", not_dir, ErrorKind::NotADirectory);
    c.same("current_dir after failures", env::current_dir().ok(), Some(work.into()));
    c.same("set_current_dir ..", env::set_current_dir("..").is_ok(), true);
    c.same("current_dir", env::current_dir().ok(), Some("/".into()));
    // The code object lies outside the root (the check's bundle).
    c.expect("current_exe", env::current_exe(), ErrorKind::NotFound);
    c.same("cleaned up", fs::remove_dir_all(work).is_ok(), true);
    c.done("fs-root");
}

fn cwd(dir: &Path) {
    let mut c = Checker { failed: Vec::new() };
    // Before moving: DIR may be relative to where the program started.
    let canonical = fs::canonicalize(dir).ok();
    c.same("set_current_dir", env::set_current_dir(dir).map_err(|e| e.to_string()), Ok(()));
    c.same("current_dir is the canonical dir", env::current_dir().ok(), canonical.clone());
    c.same("relative write", fs::write("cwd-check.txt", "here\n").is_ok(), true);
    let absolute = canonical.unwrap_or_default().join("cwd-check.txt");
    c.same("landed in the directory", fs::read_to_string(&absolute).ok(), Some("here\n".into()));
    c.same("removed", fs::remove_file("cwd-check.txt").is_ok(), true);
    c.expect("set_current_dir missing", env::set_current_dir("no-such-dir"), ErrorKind::NotFound);
    c.done("cwd");
}
