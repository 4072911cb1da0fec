//! Helpers for the semantics' unit tests: a wave with every lane on, and
//! instructions given as LLVM prints them.
//!
//! ```ignore
//! let mut w = wave(Arch::Gfx1100);
//! w.v[2][0] = 5;
//! run(&mut w, "v_add_nc_u32_e32 v1, 7, v2").unwrap();
//! assert_eq!(w.v[1][0], 12);
//! ```

use std::sync::Arc;

use crate::arch::Arch;
use crate::decode::parse_inst;
use crate::dispatch::{Group, Shared};
use crate::memory;
use crate::operand::{EXEC, SCALAR_FILE};
use crate::wave::{Result, Wave};

/// Bytes of each lane's private segment in test waves.
pub const TEST_PRIVATE: u32 = 1024;
/// Bytes of LDS in test waves.
pub const TEST_LDS: usize = 4096;

/// A wave of `arch` at pc 0x1000, every lane on, registers zero.
pub fn wave(arch: Arch) -> Wave {
    let lanes = arch.wave_size() as usize;
    let mut s = [0u32; SCALAR_FILE];
    s[EXEC as usize] = u32::MAX;
    if lanes == 64 {
        s[EXEC as usize + 1] = u32::MAX;
    }
    Wave {
        arch,
        lanes,
        s,
        scc: false,
        v: vec![[0u32; 64]; 256],
        acc: vec![[0u32; 64]; 256],
        pc: 0x1000,
        next_pc: 0x1004,
        image_base: 0x7000_0000,
        scratch: vec![0u8; TEST_PRIVATE as usize * lanes],
        private_size: TEST_PRIVATE,
        id: 0,
        workgroup: 0,
        executed: 0,
        mem: memory::View::default(),
        group: Arc::new(Group::new(TEST_LDS, 1)),
        shared: Arc::new(Shared::new()),
    }
}

/// Runs one instruction at `w.pc` (its length: 4 bytes, 8 with a literal
/// or a 64-bit encoding; the tests' branches count from `pc + 4`), then
/// moves `pc` on as the wave loop does.
pub fn run(w: &mut Wave, asm: &str) -> Result {
    let inst = parse_inst(asm, w.pc, 4, 0).unwrap_or_else(|e| panic!("cannot parse `{asm}`: {e}"));
    w.next_pc = w.pc + 4;
    (inst.exec)(w, &inst)?;
    w.pc = w.next_pc;
    Ok(())
}

/// Host memory for a test, registered as device memory while it lives.
pub struct TestMem(pub Vec<u64>);

impl TestMem {
    pub fn new(bytes: usize) -> TestMem {
        let m = TestMem(vec![0u64; bytes.div_ceil(8)]);
        memory::register(m.addr(), bytes as u64);
        m
    }
    pub fn addr(&self) -> u64 {
        self.0.as_ptr() as u64
    }
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: the Vec's own bytes.
        unsafe { std::slice::from_raw_parts(self.0.as_ptr().cast(), self.0.len() * 8) }
    }
}

impl Drop for TestMem {
    fn drop(&mut self) {
        memory::unregister(self.addr());
    }
}
