//! Host calls end to end on the CPU harness: warps call the device end
//! (`__gpu_std_host_call`, through [`host_call`]) over the real ring, served
//! by the launcher's server and [`HostCalls`](crate::host_ring::calls::HostCalls)
//! — files in a temp dir, several threads at once, replies longer than a
//! slot, and stdin.

use std::os::unix::ffi::OsStrExt;
use std::prelude::rust_2024::*;
use std::{format, vec};

use super::abi::{host_call, spawn};
use super::machine::{Config, Outcome, run};
use crate::host_ring::calls::FsAccess;
use crate::host_ring::testing::{TempDir, request};
use rt_abi::hostcall::*;
use rt_abi::protocol::OP_EXIT;

fn err(e: i32) -> i64 {
    -i64::from(e)
}

/// A call with no reply wanted: its status.
fn call(c: u32, head: &[u64], body: &[&[u8]]) -> i64 {
    let head: Vec<u8> = head.iter().flat_map(|w| w.to_le_bytes()).collect();
    host_call(c, &head, &request(&[], body), &mut []).0
}

/// A call with a reply of up to `cap` bytes: status, reply (≤ cap bytes), whole length.
fn call_reply(c: u32, head: &[u64], body: &[&[u8]], cap: usize) -> (i64, Vec<u8>, usize) {
    let head: Vec<u8> = head.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut reply = vec![0u8; cap];
    let (status, len) = host_call(c, &head, &request(&[], body), &mut reply);
    reply.truncate(len.min(cap));
    (status, reply, len)
}

fn open(path: &[u8], flags: u32, mode: u32) -> i64 {
    call(CALL_OPEN, &[u64::from(flags) | (u64::from(mode) << 32)], &[path])
}

fn stat(path: &[u8]) -> Result<Stat, i64> {
    match call_reply(CALL_STAT, &[1], &[path], STAT_BYTES) {
        (0, b, STAT_BYTES) => Ok(Stat::from_bytes(b.as_slice().try_into().unwrap())),
        (s, _, _) => Err(s),
    }
}

/// Writes `data` to a new file at `path` in pieces of at most
/// `MAX_TRANSFER`, reads it back with a seek, checks its size: one thread's
/// share of the work.
fn write_and_read_back(path: &[u8], data: &[u8]) {
    let f = open(path, OPEN_READ | OPEN_WRITE | OPEN_CREATE_NEW, 0o640);
    assert!(f >= 3, "open: {f}");
    assert_eq!(call(CALL_WRITE, &[f as u64], &[data]), data.len() as i64);
    assert_eq!(call(CALL_SEEK, &[f as u64, SEEK_SET, 0], &[]), 0);
    let (n, back, len) = call_reply(CALL_READ, &[f as u64, data.len() as u64 + 10], &[], data.len() + 10);
    assert_eq!((n, len), (data.len() as i64, data.len()));
    assert!(back == data, "read back differs");
    let (s, st, _) = call_reply(CALL_FSTAT, &[f as u64], &[], STAT_BYTES);
    assert_eq!(s, 0);
    let st = Stat::from_bytes(st.as_slice().try_into().unwrap());
    assert_eq!((st.size, st.kind, st.mode), (data.len() as u64, KIND_FILE, 0o100640), "the whole st_mode");
    assert_eq!(call(CALL_CLOSE, &[f as u64], &[]), 0);
    assert_eq!(call(CALL_CLOSE, &[f as u64], &[]), err(errno::EBADF));
}

fn run_ok(c: Config, main: impl FnOnce() -> i32 + Send + 'static) -> Outcome {
    let out = run(c, main);
    assert_eq!(out.exit, Some((OP_EXIT, 0)), "stderr: {}", out.output(2));
    assert!(out.host_errors.is_empty(), "{:?}", out.host_errors);
    out
}

fn files_dirs_and_stdin(lanes: u32) {
    let d = TempDir::new(&format!("harness-{lanes}"));
    let sub = d.path("sub");
    let input: Vec<u8> = (0..5000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let mut cfg = Config::new(4, lanes);
    cfg.stdin = input.clone();
    cfg.ring_capacity = 16;
    let out = run_ok(cfg, move || {
        assert_eq!(call(CALL_MKDIR, &[0o755], &[&sub]), 0);
        assert_eq!(call(CALL_MKDIR, &[0o755], &[&sub]), err(errno::EEXIST));
        let file = |name: &str| [&sub[..], b"/", name.as_bytes()].concat();
        // Main's file: 50 KB, a request of 261 packets and a reply fetched
        // with OP_CALL_MORE.
        let big: Vec<u8> = (0..50_000u32).map(|i| (i % 251) as u8).collect();
        write_and_read_back(&file("main"), &big);
        // Two threads at once: their requests interleave on the ring.
        let workers: Vec<_> = (1..=2u8)
            .map(|t| {
                let path = file(&format!("t{t}"));
                spawn(move || {
                    let data = vec![b'0' + t; 20_000 + usize::from(t) * 777];
                    write_and_read_back(&path, &data);
                })
                .expect("a free warp")
            })
            .collect();
        for w in workers {
            w.join();
        }
        assert_eq!(stat(&file("t2")).unwrap().size, 21_554);
        assert_eq!(stat(&file("missing")), Err(err(errno::ENOENT)));
        // The directory: three entries; a buffer too small still learns the length.
        let (n, list, len) = call_reply(CALL_READ_DIR, &[], &[&sub], 4096);
        assert_eq!((n, len), (3, 3 * 3 + 4 + 2 + 2));
        let mut names = Vec::new();
        let mut at = 0;
        while at < list.len() {
            let l = usize::from(u16::from_le_bytes([list[at + 1], list[at + 2]]));
            assert_eq!(list[at], KIND_FILE);
            names.push(list[at + 3..at + 3 + l].to_vec());
            at += 3 + l;
        }
        names.sort();
        assert_eq!(names, [b"main".to_vec(), b"t1".to_vec(), b"t2".to_vec()]);
        let (n, part, len) = call_reply(CALL_READ_DIR, &[], &[&sub], 5);
        assert_eq!((n, part.len(), len), (3, 5, 17));
        // Rename, copy, remove.
        let (a, b) = (file("main"), file("moved"));
        assert_eq!(call(CALL_RENAME, &[a.len() as u64], &[&a, &b]), 0);
        assert_eq!(call(CALL_COPY, &[b.len() as u64], &[&b, &a]), 50_000);
        for name in ["main", "moved", "t1", "t2"] {
            assert_eq!(call(CALL_UNLINK, &[], &[&file(name)]), 0, "{name}");
        }
        assert_eq!(call(CALL_RMDIR, &[], &[&sub]), 0);
        assert_eq!(stat(&sub), Err(err(errno::ENOENT)));
        // The launcher's working directory.
        let (s, cwd, len) = call_reply(CALL_GETCWD, &[], &[], 4096);
        assert_eq!((s, len), (0, cwd.len()));
        assert_eq!(cwd, std::env::current_dir().unwrap().as_os_str().as_bytes());
        // Bad requests are errors for the caller, not for the run.
        assert_eq!(call(CALL_MAX + 1, &[], &[]), err(errno::EINVAL));
        assert_eq!(call(CALL_UNLINK, &[], &[b""]), err(errno::EINVAL));
        assert_eq!(call(CALL_READ, &[12345, 10], &[]), err(errno::EBADF));
        // Stdin to its end, in reads of at most 300 bytes (the first ones
        // find nothing yet and are asked again by the device end).
        let mut got = Vec::new();
        loop {
            let (n, bytes, _) = call_reply(CALL_STDIN_READ, &[300], &[], 300);
            assert!(n >= 0, "stdin: {n}");
            if n == 0 {
                break;
            }
            assert!(n <= 300 && bytes.len() == n as usize);
            got.extend_from_slice(&bytes);
        }
        assert!(got == input, "stdin differs");
        0
    });
    // 2 mkdirs, 3 × 7 per file, 2 stats, ...: all through the ring.
    assert!(out.calls > 40, "{} calls", out.calls);
    assert!(!d.0.join("sub").exists());
}
crate::tests::lanes_test!(files_dirs_and_stdin);

/// The machine's `fs` policy reaches the server.
#[test]
fn read_only_machine() {
    let d = TempDir::new("harness-ro");
    std::fs::write(d.0.join("f"), b"data").unwrap();
    let (f, g) = (d.path("f"), d.path("g"));
    let mut cfg = Config::new(2, 32);
    cfg.fs = FsAccess::ReadOnly;
    run_ok(cfg, move || {
        assert_eq!(open(&g, OPEN_WRITE | OPEN_CREATE, 0o644), err(errno::EACCES));
        assert_eq!(call(CALL_UNLINK, &[], &[&f]), err(errno::EACCES));
        let h = open(&f, OPEN_READ, 0);
        assert!(h >= 3);
        let (n, data, _) = call_reply(CALL_READ, &[h as u64, 100], &[], 100);
        assert_eq!((n, &data[..]), (4, &b"data"[..]));
        // An empty stdin is at its end.
        assert_eq!(call_reply(CALL_STDIN_READ, &[10], &[], 10).0, 0);
        0
    });
    assert!(!d.0.join("g").exists());
    assert_eq!(std::fs::read(d.0.join("f")).unwrap(), b"data");
}

/// A request the host would take as a protocol violation (past
/// `MAX_REQUEST`) is refused by the device end itself: an over-long path is
/// `ENAMETOOLONG`, an over-long write `EINVAL`, and the run goes on.
#[test]
fn over_long_requests_are_refused_on_the_device() {
    let d = TempDir::new("harness-long");
    let f = d.path("f");
    run_ok(Config::new(2, 32), move || {
        let long_path = vec![b'a'; MAX_REQUEST as usize + 1];
        assert_eq!(call(CALL_UNLINK, &[], &[&long_path]), err(errno::ENAMETOOLONG));
        let h = open(&f, OPEN_WRITE | OPEN_CREATE, 0o644);
        assert!(h >= 3, "open: {h}");
        let big = vec![0u8; MAX_REQUEST as usize];
        assert_eq!(call(CALL_WRITE, &[h as u64], &[&big]), err(errno::EINVAL));
        assert_eq!(call(CALL_WRITE, &[h as u64], &[b"still served"]), 12);
        0
    });
}

/// Long replies through a ring of 4 slots, 3 threads at once: more fetches
/// would be in flight than the ring has slots, so a thread reads its own
/// older replies before waiting for a slot they hold (it never waits on
/// itself), and every byte comes back where it belongs.
#[test]
fn long_replies_through_a_tiny_ring() {
    let d = TempDir::new("harness-tiny-ring");
    let paths: Vec<Vec<u8>> = (0..3).map(|t| d.path(&format!("f{t}"))).collect();
    let mut cfg = Config::new(4, 32);
    cfg.ring_capacity = 4;
    run_ok(cfg, move || {
        let workers: Vec<_> = paths
            .into_iter()
            .enumerate()
            .map(|(t, path)| {
                spawn(move || {
                    let data: Vec<u8> = (0..10_000u32).map(|i| (i as usize * 7 + t) as u8).collect();
                    write_and_read_back(&path, &data);
                })
                .expect("a free warp")
            })
            .collect();
        for w in workers {
            w.join();
        }
        0
    });
}

/// A thread blocked in a host call (opening a FIFO nobody writes) while
/// another prints many rings' worth of lines: the device end waits through
/// `STATUS_PENDING` and `OP_CALL_WAIT`, the lines all arrive meanwhile, and
/// the call ends when a writer comes.
#[test]
fn a_thread_blocked_on_a_fifo_holds_up_no_output() {
    let d = TempDir::new("harness-fifo");
    let fifo = d.0.join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success());
    assert!(made, "mkfifo");
    let mut cfg = Config::new(3, 32);
    cfg.ring_capacity = 16;
    let out = run_ok(cfg, move || {
        let path = fifo.as_os_str().as_bytes().to_vec();
        let reader = spawn(move || {
            let f = open(&path, OPEN_READ, 0);
            assert!(f >= 3, "open of the FIFO: {f}");
            let (n, bytes, _) = call_reply(CALL_READ, &[f as u64, 100], &[], 100);
            assert_eq!((n, &bytes[..]), (6, &b"hello\n"[..]));
        })
        .expect("a free warp");
        for i in 0..200 {
            super::abi::println(&format!("line {i}"));
        }
        // The host side writes: the reader's open and read end.
        use std::io::Write;
        let mut w = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
        w.write_all(b"hello\n").unwrap();
        reader.join();
        0
    });
    let lines: Vec<String> = out.writes.iter().map(|w| String::from_utf8_lossy(&w.bytes).into_owned()).collect();
    let want: Vec<String> = (0..200).map(|i| format!("line {i}\n")).collect();
    assert_eq!(lines, want);
}
