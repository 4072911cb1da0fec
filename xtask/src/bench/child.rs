//! Running one benchmark process: its stdout read line by line as it comes
//! (JSON rows kept, `~ln VARIANT ...` lines of the println benchmark counted,
//! everything else dropped, so a flood of output costs no memory), the end
//! of its stderr kept for error messages, and a time limit.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

/// Lines of stderr kept.
const STDERR_TAIL: usize = 40;

/// What one process did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Objects with a `benchmark` field, from lines starting with `{`.
    pub rows: Vec<Map<String, Value>>,
    /// `~ln VARIANT ...` lines per VARIANT.
    pub lines: HashMap<String, u64>,
    /// From spawning the process to its first line on stdout.
    pub first_line: Option<Duration>,
    /// Its exit code (None: killed by a signal, or by the time limit).
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// The last lines of stderr.
    pub stderr_tail: Vec<String>,
    pub elapsed: Duration,
}

impl Outcome {
    /// Why the run failed, or None if it exited 0 in time.
    pub fn failure(&self, limit: Duration) -> Option<String> {
        if self.timed_out {
            return Some(format!("timed out after {} s", limit.as_secs()));
        }
        if self.exit_code == Some(0) {
            return None;
        }
        let code = self.exit_code.map_or("killed by a signal".to_string(), |c| format!("exit code {c}"));
        // gpurun's --json status (the last stderr line) names the error best.
        let status: Option<Value> = self.stderr_tail.last().and_then(|l| serde_json::from_str(l).ok());
        let reason = status
            .as_ref()
            .and_then(|s| s.get("error").and_then(Value::as_str).or_else(|| s.get("status").and_then(Value::as_str)))
            .map(str::to_string)
            .or_else(|| self.stderr_tail.iter().rev().find(|l| !l.trim().is_empty() && !l.starts_with('{')).cloned());
        // A timeout report names the threads still running and where.
        let threads: Vec<String> = status
            .as_ref()
            .and_then(|s| s.get("threads")?.as_array().cloned())
            .unwrap_or_default()
            .iter()
            .take(4)
            .map(|t| {
                let name = t.get("name").and_then(Value::as_str).unwrap_or("?");
                let state = t.get("state").and_then(Value::as_str).unwrap_or("?");
                format!("{} \"{name}\" {state}", t.get("index").and_then(Value::as_u64).unwrap_or(0))
            })
            .collect();
        let reason = match (reason, threads.is_empty()) {
            (Some(r), false) => Some(format!("{}; still running: {}", r.trim(), threads.join(", "))),
            (r, _) => r,
        };
        // A panic's own message says more than "aborted".
        let tail = &self.stderr_tail;
        let panic = tail.iter().position(|l| l.contains("panicked at")).map(|i| {
            let next = tail.get(i + 1).filter(|l| !l.starts_with('{')).map_or("", |l| l.trim());
            format!("{} {next}", tail[i].trim()).trim_end().to_string()
        });
        let reason = match (panic, reason) {
            (Some(p), Some(r)) => Some(format!("{}: {p}", r.trim())),
            (p, r) => p.or(r),
        };
        Some(match reason {
            Some(r) => format!("{code}: {}", r.trim()),
            None => code,
        })
    }
}

/// Runs `cmd` to its end or for at most `limit` (then kills it).
pub fn run(mut cmd: Command, limit: Duration) -> std::io::Result<Outcome> {
    let start = Instant::now();
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    let child = Arc::new(Mutex::new(child));
    let finished = Arc::new(AtomicBool::new(false));
    let timed_out = Arc::new(AtomicBool::new(false));

    let watchdog = {
        let (child, finished, timed_out) = (child.clone(), finished.clone(), timed_out.clone());
        std::thread::spawn(move || {
            while !finished.load(Ordering::Acquire) {
                if start.elapsed() >= limit {
                    timed_out.store(true, Ordering::Release);
                    let _ = child.lock().unwrap().kill();
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    let err_reader = std::thread::spawn(move || {
        let mut tail: Vec<String> = Vec::new();
        let mut r = BufReader::new(stderr);
        let mut buf = Vec::new();
        while r.read_until(b'\n', &mut buf).map(|n| n > 0).unwrap_or(false) {
            if tail.len() == STDERR_TAIL {
                tail.remove(0);
            }
            tail.push(String::from_utf8_lossy(&buf).trim_end().to_string());
            buf.clear();
        }
        tail
    });

    let mut out = Outcome::default();
    let mut r = BufReader::with_capacity(1 << 16, stdout);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match r.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        out.first_line.get_or_insert_with(|| start.elapsed());
        take_line(&mut out, &buf);
    }
    // Drain whatever is left (a line without a newline was handled above).
    let _ = r.read_to_end(&mut Vec::new());
    let status = loop {
        if let Some(s) = child.lock().unwrap().try_wait()? {
            break s;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    finished.store(true, Ordering::Release);
    let _ = watchdog.join();
    out.stderr_tail = err_reader.join().unwrap_or_default();
    out.exit_code = status.code();
    out.timed_out = timed_out.load(Ordering::Acquire);
    out.elapsed = start.elapsed();
    Ok(out)
}

fn take_line(out: &mut Outcome, raw: &[u8]) {
    let line = String::from_utf8_lossy(raw);
    let line = line.trim();
    if let Some(rest) = line.strip_prefix("~ln ") {
        let variant = rest.split(' ').next().unwrap_or_default();
        *out.lines.entry(variant.to_string()).or_default() += 1;
    } else if line.starts_with('{') {
        if let Ok(Value::Object(row)) = serde_json::from_str::<Value>(line) {
            if row.contains_key("benchmark") {
                out.rows.push(row);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c").arg(script);
        c
    }

    #[test]
    fn keeps_rows_counts_lines_and_times_the_first_line() {
        let o = run(
            sh(r#"echo hello; echo '~ln a 0 1'; echo '~ln a 1 1'; echo '~ln b 0 0'; echo '{"benchmark":"yield","p50":1}'; echo '{"other":1}'; echo oops >&2; exit 0"#),
            Duration::from_secs(20),
        )
        .unwrap();
        assert_eq!(o.rows.len(), 1);
        assert_eq!(o.rows[0]["benchmark"], "yield");
        assert_eq!(o.lines["a"], 2);
        assert_eq!(o.lines["b"], 1);
        assert!(o.first_line.is_some());
        assert_eq!(o.stderr_tail, ["oops"]);
        assert_eq!(o.failure(Duration::from_secs(20)), None);
    }

    #[test]
    fn failures_say_why() {
        let o = run(sh("echo 'gpurun: no GPU found' >&2; exit 3"), Duration::from_secs(20)).unwrap();
        assert_eq!(o.failure(Duration::from_secs(20)).unwrap(), "exit code 3: gpurun: no GPU found");
        let json = r#"echo 'noise' >&2; echo '{"status":"fault","error":"illegal address"}' >&2; exit 5"#;
        let o = run(sh(json), Duration::from_secs(20)).unwrap();
        assert_eq!(o.failure(Duration::from_secs(20)).unwrap(), "exit code 5: illegal address");
        let panic = r#"echo "thread 'w' (3) panicked at src/x.rs:1:2:" >&2; echo 'no more' >&2; echo '{"status":"aborted"}' >&2; exit 101"#;
        let o = run(sh(panic), Duration::from_secs(20)).unwrap();
        assert_eq!(o.failure(Duration::from_secs(20)).unwrap(), "exit code 101: aborted: thread 'w' (3) panicked at src/x.rs:1:2: no more");
        let hang = r#"echo '{"status":"timeout","error":"timeout after 5s","threads":[{"index":0,"name":"main","state":"blocked in join","last_line":null}]}' >&2; exit 124"#;
        let o = run(sh(hang), Duration::from_secs(20)).unwrap();
        assert_eq!(o.failure(Duration::from_secs(20)).unwrap(), "exit code 124: timeout after 5s; still running: 0 \"main\" blocked in join");
    }

    #[test]
    fn a_process_past_its_limit_is_killed() {
        let t = Instant::now();
        let o = run(sh("echo started; exec sleep 30"), Duration::from_millis(300)).unwrap();
        assert!(o.timed_out);
        assert!(t.elapsed() < Duration::from_secs(10));
        assert!(o.failure(Duration::from_millis(300)).unwrap().starts_with("timed out"));
    }
}
