//! `gpu-check/modes.ptx` is hand-written PTX that plays the runtime's part
//! of the host–device contract (launch block, thread table, ring). Each of
//! its offsets and constants is annotated with what it stands for; this
//! test holds every annotation to `rt_abi::protocol`, so the contract
//! cannot change without the check kernel failing here first.
use std::mem::{offset_of, size_of};

use rt_abi::protocol::{
    LaunchBlock, OP_EXIT, OP_WRITE, RING_SLOT_BYTES, RING_SLOTS_OFFSET, RingHeader, RingSlotHeader, THREAD_RUNNING,
    ThreadSlotPublic, WAIT_SLEEP,
};

/// What an annotation's name stands for.
fn value_of(name: &str) -> Option<u64> {
    let (name, plus) = match name.split_once('+') {
        Some((n, k)) => (n, k.parse::<u64>().ok()?),
        None => (name, 0),
    };
    let v = match name {
        "LaunchBlock.ring" => offset_of!(LaunchBlock, ring),
        "LaunchBlock.argc" => offset_of!(LaunchBlock, argc),
        "LaunchBlock.threads" => offset_of!(LaunchBlock, threads),
        "ThreadSlotPublic.state" => offset_of!(ThreadSlotPublic, state),
        "ThreadSlotPublic.wait" => offset_of!(ThreadSlotPublic, wait),
        "ThreadSlotPublic.name_len" => offset_of!(ThreadSlotPublic, name_len),
        "ThreadSlotPublic.name" => offset_of!(ThreadSlotPublic, name),
        "LaunchBlock.ring_tickets" => offset_of!(LaunchBlock, ring_tickets),
        "RingHeader.capacity" => offset_of!(RingHeader, capacity),
        "RingSlotHeader.seq" => offset_of!(RingSlotHeader, seq),
        "RingSlotHeader.op" => offset_of!(RingSlotHeader, op),
        "RingSlotHeader.thread" => offset_of!(RingSlotHeader, thread),
        "RingSlotHeader.len" => offset_of!(RingSlotHeader, len),
        "RingSlotHeader.flags" => offset_of!(RingSlotHeader, flags),
        "RingSlotHeader.arg0" => offset_of!(RingSlotHeader, arg0),
        "payload" => size_of::<RingSlotHeader>(),
        "RING_SLOT_SHIFT" => RING_SLOT_BYTES.trailing_zeros() as usize,
        "RING_SLOTS_OFFSET" => RING_SLOTS_OFFSET,
        "THREAD_RUNNING" => THREAD_RUNNING as usize,
        "WAIT_SLEEP" => WAIT_SLEEP as usize,
        "OP_WRITE" => OP_WRITE as usize,
        "OP_EXIT" => OP_EXIT as usize,
        _ => return None,
    };
    Some(v as u64 + plus)
}

/// The `+K` of the line's `[%rdN+K]` (0 for `[%rdN]`).
fn address_offset(code: &str) -> Option<u64> {
    let inside = &code[code.find("[%rd")? + 1..code.find(']')?];
    Some(inside.split_once('+').map_or(Some(0), |(_, k)| k.trim().parse().ok())?)
}

/// The last operand when it is a number (`st.global.u32 [%rd4], 2;`, `shl.b64 %rd12, %rd12, 8;`).
fn immediate(code: &str) -> Option<u64> {
    code.trim_end().trim_end_matches(';').rsplit(',').next()?.trim().parse().ok()
}

#[test]
fn every_offset_and_constant_matches_the_protocol() {
    let ptx = include_str!("../gpu-check/modes.ptx");
    let mut checked = 0;
    for (n, line) in ptx.lines().enumerate() {
        let (code, note) = line.split_once("//").unwrap_or((line, ""));
        if code.contains("[%rd") {
            assert!(note.contains("off="), "line {}: a memory access without `// off=`: {line}", n + 1);
        }
        for word in note.split_whitespace() {
            if let Some(name) = word.strip_prefix("off=") {
                if name == "-" {
                    continue;
                }
                let want = value_of(name).unwrap_or_else(|| panic!("line {}: unknown name `{name}`", n + 1));
                assert_eq!(address_offset(code), Some(want), "line {}: {name} is at {want}: {line}", n + 1);
                checked += 1;
            } else if let Some(name) = word.strip_prefix("val=") {
                let want = value_of(name).unwrap_or_else(|| panic!("line {}: unknown name `{name}`", n + 1));
                assert_eq!(immediate(code), Some(want), "line {}: {name} is {want}: {line}", n + 1);
                checked += 1;
            }
        }
    }
    assert!(checked >= 35, "only {checked} annotations checked");
}

#[test]
fn a_wrong_offset_is_caught() {
    assert_eq!(address_offset("    ld.global.u64 %rd2, [%rd1+16];"), Some(16));
    assert_eq!(address_offset("    ld.volatile.global.u64 %rd14, [%rd13];"), Some(0));
    assert_eq!(immediate("    st.global.u32 [%rd13+16], 1;"), Some(1));
    assert_ne!(value_of("LaunchBlock.argc"), Some(16));
    assert_eq!(value_of("payload+8"), Some(size_of::<RingSlotHeader>() as u64 + 8));
    assert_eq!(value_of("LaunchBlock.nonsense"), None);
}
