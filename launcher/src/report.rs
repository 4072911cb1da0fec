//! Reports for a run that did not end by itself: which threads were still
//! running or blocked (from the thread table's public headers) and the last
//! line each printed (from the ring server); and the final status as JSON.

use std::collections::HashMap;
use std::mem::offset_of;

use rt_abi::protocol::{
    THREAD_CLAIMED, THREAD_EXITED, THREAD_FINISHED, THREAD_FREE, THREAD_RUNNING, THREAD_SLOT_BYTES, ThreadSlotPublic,
    wait_reason_name,
};

use crate::backend::{DeviceInfo, LaunchPlan};

/// One thread-table slot's public header, as read (garbage tolerated).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotHeader {
    pub index: u32,
    pub state: u32,
    pub wait: u32,
    pub name: Option<String>,
}

/// Parses the public headers of a copy of the thread table.
pub fn parse_thread_table(table: &[u8], num_threads: u32) -> Vec<SlotHeader> {
    let name_cap = size_of::<[u8; 48]>();
    let at = |b: &[u8], off: usize| u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]]);
    table
        .chunks_exact(THREAD_SLOT_BYTES)
        .take(num_threads as usize)
        .enumerate()
        .map(|(i, s)| {
            let name_len = (at(s, offset_of!(ThreadSlotPublic, name_len)) as usize).min(name_cap);
            let n = offset_of!(ThreadSlotPublic, name);
            let name = (name_len > 0).then(|| String::from_utf8_lossy(&s[n..n + name_len]).into_owned());
            SlotHeader {
                index: i as u32,
                state: at(s, offset_of!(ThreadSlotPublic, state)),
                wait: at(s, offset_of!(ThreadSlotPublic, wait)),
                name,
            }
        })
        .collect()
}

/// A thread's state in words.
pub fn state_name(state: u32, wait: u32) -> String {
    match state {
        THREAD_FREE => "idle".into(),
        THREAD_CLAIMED => "being spawned".into(),
        THREAD_RUNNING => wait_reason_name(wait).into(),
        THREAD_FINISHED => "finished, not yet joined".into(),
        THREAD_EXITED => "exited".into(),
        s => format!("unreadable state {s}"),
    }
}

/// A thread worth naming in a report.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ThreadReport {
    pub index: u32,
    pub name: Option<String>,
    pub state: String,
    pub last_line: Option<String>,
}

/// Threads still running or blocked, from the thread table where it could
/// be read, else from what the ring saw (threads that printed and did not
/// exit).
pub fn live_threads(
    table: Option<&[SlotHeader]>,
    last_lines: &HashMap<u32, String>,
    exited: &[u32],
) -> Vec<ThreadReport> {
    match table {
        Some(t) => t
            .iter()
            .filter(|s| matches!(s.state, THREAD_CLAIMED | THREAD_RUNNING) || s.state > THREAD_EXITED)
            .map(|s| ThreadReport {
                index: s.index,
                name: s.name.clone(),
                state: state_name(s.state, s.wait),
                last_line: last_lines.get(&s.index).cloned(),
            })
            .collect(),
        None => {
            let mut v: Vec<_> = last_lines
                .iter()
                .filter(|(i, _)| !exited.contains(i))
                .map(|(i, l)| ThreadReport {
                    index: *i,
                    name: None,
                    state: "state unknown".into(),
                    last_line: Some(l.clone()),
                })
                .collect();
            v.sort_by_key(|t| t.index);
            v
        }
    }
}

/// Lines describing `threads`, at most `max` of them.
pub fn describe_threads(threads: &[ThreadReport], max: usize) -> String {
    let mut s = String::new();
    for t in threads.iter().take(max) {
        let name = t.name.as_ref().map(|n| format!(" \"{n}\"")).unwrap_or_default();
        let last =
            t.last_line.as_ref().map_or_else(|| "nothing printed".to_string(), |l| format!("last printed: {l:?}"));
        s.push_str(&format!("\n    thread {}{name}: {}; {last}", t.index, t.state));
    }
    if threads.len() > max {
        s.push_str(&format!("\n    ... and {} more (--json lists all)", threads.len() - max));
    }
    s
}

/// The final status of `gpurun run`, for `--json`.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct RunStatus {
    /// `exited`, `aborted`, `timeout`, `fault`, `protocol_error` or `error`.
    pub status: String,
    /// gpurun's own exit status (0..=255: a program's code's low 8 bits).
    pub exit_code: i32,
    /// The program's code (from `OP_EXIT`/`OP_ABORT`), if it sent one.
    pub program_exit_code: Option<i32>,
    /// Whether the kernel ended before gpurun did.
    pub kernel_finished: bool,
    pub elapsed_s: f64,
    pub code_object: Option<String>,
    pub device: Option<DeviceInfo>,
    pub launch: Option<LaunchPlan>,
    pub stack_size: Option<u64>,
    pub heap_size: Option<u64>,
    pub error: Option<String>,
    /// Threads still running or blocked (timeout and fault reports).
    pub threads: Vec<ThreadReport>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use rt_abi::protocol::{WAIT_JOIN, WAIT_LOCK};

    fn slot(state: u32, wait: u32, name: &str) -> Vec<u8> {
        let mut s = vec![0u8; THREAD_SLOT_BYTES];
        s[0..4].copy_from_slice(&state.to_le_bytes());
        s[4..8].copy_from_slice(&wait.to_le_bytes());
        s[8..12].copy_from_slice(&(name.len() as u32).to_le_bytes());
        s[16..16 + name.len()].copy_from_slice(name.as_bytes());
        s
    }

    #[test]
    fn reads_the_public_headers() {
        let mut table = slot(THREAD_RUNNING, WAIT_JOIN, "main");
        table.extend(slot(THREAD_FREE, 0, ""));
        table.extend(slot(THREAD_RUNNING, WAIT_LOCK, ""));
        let mut garbage = slot(77, 0, "");
        garbage[8..12].copy_from_slice(&u32::MAX.to_le_bytes()); // name_len garbage
        table.extend(garbage);
        let t = parse_thread_table(&table, 4);
        assert_eq!(t.len(), 4);
        assert_eq!(t[0].name.as_deref(), Some("main"));
        let lines = HashMap::from([(2, "working".to_string())]);
        let live = live_threads(Some(&t), &lines, &[]);
        assert_eq!(live.iter().map(|t| t.index).collect::<Vec<_>>(), vec![0, 2, 3]);
        assert_eq!(live[0].state, "blocked in join");
        assert_eq!(live[1].state, "blocked on a lock");
        assert_eq!(live[1].last_line.as_deref(), Some("working"));
        assert!(live[2].state.contains("unreadable"));
        let text = describe_threads(&live, 2);
        assert!(text.contains("thread 0 \"main\": blocked in join; nothing printed"), "{text}");
        assert!(text.contains("and 1 more"), "{text}");
    }

    #[test]
    fn short_tables_are_fine() {
        assert!(parse_thread_table(&[1, 2, 3], 8).is_empty());
        let lines = HashMap::from([(1, "a".to_string()), (0, "b".to_string())]);
        let live = live_threads(None, &lines, &[1]);
        assert_eq!(live.len(), 1);
        assert_eq!(live[0].index, 0);
    }
}
