//! Host-side images of what the kernel reads at start: the [`LaunchBlock`]
//! and the argument/environment tables, serialised field by field (little
//! endian, at `offset_of!` positions) so no `unsafe` byte view is needed.

use core::mem::offset_of;
use std::vec::Vec;

use rt_abi::protocol::{LaunchBlock, StrRef};

/// Bytes of a `LaunchBlock`.
pub const LAUNCH_BLOCK_BYTES: usize = size_of::<LaunchBlock>();

/// Serialises a launch block.
pub fn launch_block_bytes(lb: &LaunchBlock) -> [u8; LAUNCH_BLOCK_BYTES] {
    let mut b = [0u8; LAUNCH_BLOCK_BYTES];
    let mut put32 = |off: usize, v: u32| b[off..off + 4].copy_from_slice(&v.to_le_bytes());
    put32(offset_of!(LaunchBlock, magic), lb.magic);
    put32(offset_of!(LaunchBlock, version), lb.version);
    put32(offset_of!(LaunchBlock, num_threads), lb.num_threads);
    put32(offset_of!(LaunchBlock, lanes), lb.lanes);
    put32(offset_of!(LaunchBlock, block_warps), lb.block_warps);
    put32(offset_of!(LaunchBlock, stack_lanes), lb.stack_lanes);
    let fields64 = [
        (offset_of!(LaunchBlock, ring), lb.ring),
        (offset_of!(LaunchBlock, heap_base), lb.heap_base),
        (offset_of!(LaunchBlock, heap_size), lb.heap_size),
        (offset_of!(LaunchBlock, threads), lb.threads),
        (offset_of!(LaunchBlock, stack_size), lb.stack_size),
        (offset_of!(LaunchBlock, argc), lb.argc),
        (offset_of!(LaunchBlock, argv), lb.argv),
        (offset_of!(LaunchBlock, envc), lb.envc),
        (offset_of!(LaunchBlock, envp), lb.envp),
        (offset_of!(LaunchBlock, epoch_unix_ns), lb.epoch_unix_ns),
        (offset_of!(LaunchBlock, idle_sleep_ns), lb.idle_sleep_ns),
        (offset_of!(LaunchBlock, random_seed), lb.random_seed),
        (offset_of!(LaunchBlock, flags), lb.flags),
        (offset_of!(LaunchBlock, stacks), lb.stacks),
        (offset_of!(LaunchBlock, call_stack_size), lb.call_stack_size),
        (offset_of!(LaunchBlock, ring_tickets), lb.ring_tickets),
        (offset_of!(LaunchBlock, ring_room), lb.ring_room),
        (offset_of!(LaunchBlock, exe) + offset_of!(StrRef, ptr), lb.exe.ptr),
        (offset_of!(LaunchBlock, exe) + offset_of!(StrRef, len), lb.exe.len),
    ];
    for (off, v) in fields64 {
        b[off..off + 8].copy_from_slice(&v.to_le_bytes());
    }
    b
}

/// The argument and environment tables and their strings, laid out for a
/// device allocation at `base`: `argc` [`StrRef`]s, `envc` [`StrRef`]s, then
/// the bytes (each string followed by a NUL that `len` does not count), the
/// executable's path ([`LaunchBlock::exe`]) last.
pub struct StringTables {
    pub bytes: Vec<u8>,
    pub argc: u64,
    pub argv: u64,
    pub envc: u64,
    pub envp: u64,
    pub exe: StrRef,
}

/// Bytes [`string_tables`] needs.
pub fn string_tables_size(args: &[Vec<u8>], env: &[Vec<u8>], exe: &[u8]) -> usize {
    let refs = (args.len() + env.len()) * size_of::<StrRef>();
    refs + args.iter().chain(env).map(|s| s.len() + 1).sum::<usize>() + exe.len() + 1
}

pub fn string_tables(base: u64, args: &[Vec<u8>], env: &[Vec<u8>], exe: &[u8]) -> StringTables {
    let nrefs = args.len() + env.len();
    let mut refs = Vec::with_capacity(nrefs * 16);
    let mut strings = Vec::new();
    let strings_base = base + (nrefs * size_of::<StrRef>()) as u64;
    for s in args.iter().chain(env) {
        let ptr = strings_base + strings.len() as u64;
        refs.extend_from_slice(&ptr.to_le_bytes());
        refs.extend_from_slice(&(s.len() as u64).to_le_bytes());
        strings.extend_from_slice(s);
        strings.push(0);
    }
    let exe_ref = StrRef { ptr: strings_base + strings.len() as u64, len: exe.len() as u64 };
    strings.extend_from_slice(exe);
    strings.push(0);
    refs.extend_from_slice(&strings);
    StringTables {
        bytes: refs,
        argc: args.len() as u64,
        argv: base,
        envc: env.len() as u64,
        envp: base + (args.len() * size_of::<StrRef>()) as u64,
        exe: exe_ref,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use rt_abi::protocol::{ABI_VERSION, LAUNCH_MAGIC};

    #[test]
    fn launch_block_fields_land_at_their_offsets() {
        let lb = LaunchBlock {
            magic: LAUNCH_MAGIC,
            version: ABI_VERSION,
            num_threads: 7,
            lanes: 32,
            ring: 0x1111,
            flags: 0x2222,
            block_warps: 2,
            stack_lanes: 32,
            stacks: 0x3333,
            call_stack_size: 0x4444,
            ring_tickets: 0x5555,
            ring_room: 0x6666,
            exe: StrRef { ptr: 0x7777, len: 0x8888 },
            ..Default::default()
        };
        let b = launch_block_bytes(&lb);
        assert_eq!(&b[0..4], b"GPUT");
        assert_eq!(u32::from_le_bytes(b[8..12].try_into().unwrap()), 7);
        assert_eq!(u32::from_le_bytes(b[12..16].try_into().unwrap()), 32);
        assert_eq!(u64::from_le_bytes(b[16..24].try_into().unwrap()), 0x1111);
        let f = offset_of!(LaunchBlock, stack_lanes);
        assert_eq!(u32::from_le_bytes(b[f..f + 4].try_into().unwrap()), 32);
        let f = offset_of!(LaunchBlock, flags);
        assert_eq!(u64::from_le_bytes(b[f..f + 8].try_into().unwrap()), 0x2222);
        let c = offset_of!(LaunchBlock, call_stack_size);
        assert_eq!(u64::from_le_bytes(b[c..c + 8].try_into().unwrap()), 0x4444);
        let t = offset_of!(LaunchBlock, ring_tickets);
        assert_eq!(u64::from_le_bytes(b[t..t + 8].try_into().unwrap()), 0x5555);
        let r = offset_of!(LaunchBlock, ring_room);
        assert_eq!(u64::from_le_bytes(b[r..r + 8].try_into().unwrap()), 0x6666);
        let e = offset_of!(LaunchBlock, exe);
        assert_eq!(e, LAUNCH_BLOCK_BYTES - 16, "the last field");
        assert_eq!(u64::from_le_bytes(b[e..e + 8].try_into().unwrap()), 0x7777);
        assert_eq!(u64::from_le_bytes(b[e + 8..e + 16].try_into().unwrap()), 0x8888);
        let s = offset_of!(LaunchBlock, stacks);
        assert_eq!(u64::from_le_bytes(b[s..s + 8].try_into().unwrap()), 0x3333);
        let w = offset_of!(LaunchBlock, block_warps);
        assert_eq!(u32::from_le_bytes(b[w..w + 4].try_into().unwrap()), 2);
    }

    #[test]
    fn string_tables_point_into_themselves() {
        let args = vec![b"prog".to_vec(), b"--x".to_vec()];
        let env = vec![b"A=1".to_vec()];
        let base = 0x7000_0000;
        let t = string_tables(base, &args, &env, b"/bin/prog.elf");
        assert_eq!(t.bytes.len(), string_tables_size(&args, &env, b"/bin/prog.elf"));
        assert_eq!((t.argc, t.envc, t.argv, t.envp), (2, 1, base, base + 32));
        let read = |i: usize| {
            let r = &t.bytes[i * 16..i * 16 + 16];
            let ptr = u64::from_le_bytes(r[..8].try_into().unwrap()) - base;
            let len = u64::from_le_bytes(r[8..].try_into().unwrap());
            t.bytes[ptr as usize..(ptr + len) as usize].to_vec()
        };
        assert_eq!(read(0), b"prog");
        assert_eq!(read(1), b"--x");
        assert_eq!(read(2), b"A=1");
        let exe = (t.exe.ptr - base) as usize;
        assert_eq!(&t.bytes[exe..exe + t.exe.len as usize + 1], b"/bin/prog.elf\0");
    }
}
