//! One wavefront's state, the operand accessors the instruction semantics
//! use, and the loop that runs it.

use std::sync::Arc;

use crate::arch::Arch;
use crate::decode::{Code, Inst};
use crate::dispatch::{Group, Shared};
use crate::memory::{self, PRIVATE_APERTURE, SHARED_APERTURE};
use crate::operand::{Aperture, EXEC, Half, Kind, NULL, Operand, SCALAR_FILE, VCC};

/// Why a wave stopped before its next instruction.
#[derive(Debug)]
pub enum Stop {
    /// `s_endpgm`.
    End,
    Fault(Fault),
}

/// What went wrong, as HIP will report it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// An access outside device memory (`hipErrorIllegalAddress`).
    Memory,
    /// `s_trap` (`hipErrorLaunchFailure`, as an abort on ROCm).
    Trap,
    /// An instruction the emulator does not implement.
    Unsupported,
    /// Another wave faulted first; this one was stopped.
    Aborted,
}

#[derive(Clone, Debug)]
pub struct Fault {
    pub kind: FaultKind,
    /// What happened, then where: mnemonic, address, function, wave.
    pub message: String,
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// A fault of `kind` saying `message` (the wave adds where).
pub fn fault(kind: FaultKind, message: impl Into<String>) -> Stop {
    Stop::Fault(Fault { kind, message: message.into() })
}

pub type Result<T = ()> = std::result::Result<T, Stop>;

/// A wavefront.
pub struct Wave {
    pub arch: Arch,
    /// 32 or 64.
    pub lanes: usize,
    /// The scalar file, indexed as [`crate::operand`] says.
    pub s: [u32; SCALAR_FILE],
    pub scc: bool,
    /// VGPRs: `v[register][lane]`.
    pub v: Vec<[u32; 64]>,
    /// Accumulation registers (gfx90a/gfx942).
    pub acc: Vec<[u32; 64]>,
    /// Code-object address of the instruction running.
    pub pc: u64,
    /// Where the next one is; a branch sets it.
    pub next_pc: u64,
    /// Host address where the code object's image is loaded: `s_getpc_b64`
    /// returns `image_base + pc`.
    pub image_base: u64,
    /// Each lane's private segment, `private_size` bytes apiece.
    pub scratch: Vec<u8>,
    pub private_size: u32,
    /// Global index of the wave in the launch, and its workgroup's.
    pub id: u32,
    pub workgroup: u32,
    /// Instructions executed.
    pub executed: u64,
    pub mem: memory::View,
    pub group: Arc<Group>,
    pub shared: Arc<Shared>,
}

/// The bits of a 16-bit inline float constant.
fn f16_bits(f: f64) -> u16 {
    let mag = match f.abs() {
        x if x == 0.5 => 0x3800,
        x if x == 1.0 => 0x3c00,
        x if x == 2.0 => 0x4000,
        x if x == 4.0 => 0x4400,
        x if (x - 0.159_154_94).abs() < 1e-7 => 0x3118,
        _ => 0,
    };
    if f < 0.0 { mag | 0x8000 } else { mag }
}

/// `1/(2π)`, which the hardware has as an inline constant of each width.
fn is_inv_2pi(f: f64) -> bool {
    (f.abs() - 0.159_154_94).abs() < 1e-7
}

fn f32_const(f: f64) -> u32 {
    if is_inv_2pi(f) { 0x3e22_f983 } else { (f as f32).to_bits() }
}

fn f64_const(f: f64) -> u64 {
    if is_inv_2pi(f) { 0x3fc4_5f30_6dc9_c882 } else { f.to_bits() }
}

impl Wave {
    /// EXEC, limited to the wave's lanes.
    #[inline]
    pub fn exec(&self) -> u64 {
        let e = u64::from(self.s[EXEC as usize]) | u64::from(self.s[EXEC as usize + 1]) << 32;
        e & self.lane_mask()
    }

    pub fn set_exec(&mut self, e: u64) {
        self.s[EXEC as usize] = e as u32;
        if self.lanes == 64 {
            self.s[EXEC as usize + 1] = (e >> 32) as u32;
        }
    }

    /// All the wave's lanes.
    #[inline]
    pub fn lane_mask(&self) -> u64 {
        if self.lanes == 64 { u64::MAX } else { 0xffff_ffff }
    }

    /// VCC, limited to the wave's lanes.
    pub fn vcc(&self) -> u64 {
        (u64::from(self.s[VCC as usize]) | u64::from(self.s[VCC as usize + 1]) << 32) & self.lane_mask()
    }

    pub fn set_vcc(&mut self, m: u64) {
        self.s[VCC as usize] = m as u32;
        if self.lanes == 64 {
            self.s[VCC as usize + 1] = (m >> 32) as u32;
        }
    }

    /// The lanes EXEC enables, in order.
    #[inline]
    pub fn active(&self) -> impl Iterator<Item = usize> + use<> {
        let mut m = self.exec();
        std::iter::from_fn(move || {
            if m == 0 {
                return None;
            }
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(l)
        })
    }

    // ------------------------------------------------------------ scalars

    /// A 32-bit scalar source (SGPR, special register or constant).
    #[inline]
    pub fn sread(&self, o: &Operand) -> u32 {
        match o.kind {
            Kind::Scalar { index, .. } if index == NULL => 0,
            Kind::Scalar { index, .. } => self.s[index as usize],
            Kind::Int(v) => v as u32,
            Kind::Literal(v) => v,
            Kind::Float(f) => f32_const(f),
            Kind::Scc => u32::from(self.scc),
            Kind::Execz => u32::from(self.exec() == 0),
            Kind::Vccz => u32::from(self.vcc() == 0),
            Kind::Aperture(a) => (self.aperture(a) >> 32) as u32,
            Kind::Off => 0,
            Kind::Vector { .. } | Kind::Acc { .. } => self.vread(o, 0),
        }
    }

    /// A 64-bit scalar source. A 32-bit literal is zero-extended, an inline
    /// integer sign-extended; an inline float is the double's bits.
    #[inline]
    pub fn sread64(&self, o: &Operand) -> u64 {
        match o.kind {
            Kind::Scalar { index, .. } if index == NULL => 0,
            Kind::Scalar { index, .. } => {
                u64::from(self.s[index as usize]) | u64::from(self.s[index as usize + 1]) << 32
            }
            Kind::Int(v) => v as u64,
            Kind::Literal(v) => u64::from(v),
            Kind::Float(f) => f64_const(f),
            Kind::Aperture(a) => self.aperture(a),
            Kind::Execz | Kind::Vccz | Kind::Scc => u64::from(self.sread(o)),
            Kind::Off => 0,
            Kind::Vector { .. } | Kind::Acc { .. } => self.vread64(o, 0),
        }
    }

    /// Writes a 32-bit scalar destination.
    #[inline]
    pub fn swrite(&mut self, o: &Operand, v: u32) {
        match o.kind {
            Kind::Scalar { index, .. } if index == NULL => {}
            Kind::Scalar { index, .. } => self.s[index as usize] = v,
            Kind::Scc => self.scc = v != 0,
            _ => {}
        }
    }

    /// Writes a 64-bit scalar destination.
    #[inline]
    pub fn swrite64(&mut self, o: &Operand, v: u64) {
        if let Kind::Scalar { index, count } = o.kind {
            if index == NULL {
                return;
            }
            self.s[index as usize] = v as u32;
            if count >= 2 || index == EXEC || index == VCC {
                self.s[index as usize + 1] = (v >> 32) as u32;
            }
        }
    }

    /// A lane mask source: one SGPR on wave32, a pair on wave64.
    #[inline]
    pub fn mask_read(&self, o: &Operand) -> u64 {
        let v = if self.lanes == 32 { u64::from(self.sread(o)) } else { self.sread64(o) };
        v & self.lane_mask()
    }

    /// Writes a lane mask (VOPC's and carries' SDST).
    #[inline]
    pub fn mask_write(&mut self, o: &Operand, m: u64) {
        if self.lanes == 32 {
            self.swrite(o, m as u32);
        } else {
            self.swrite64(o, m);
        }
    }

    fn aperture(&self, a: Aperture) -> u64 {
        match a {
            Aperture::PrivateBase => u64::from(PRIVATE_APERTURE) << 32,
            Aperture::PrivateLimit => (u64::from(PRIVATE_APERTURE) << 32) | 0xffff_ffff,
            Aperture::SharedBase => u64::from(SHARED_APERTURE) << 32,
            Aperture::SharedLimit => (u64::from(SHARED_APERTURE) << 32) | 0xffff_ffff,
        }
    }

    // ------------------------------------------------------------ vectors

    /// A 32-bit vector source in `lane` (a VGPR's lane, or a scalar or
    /// constant, the same in every lane). A 16-bit half (`v1.h`) reads as
    /// its 16 bits.
    #[inline]
    pub fn vread(&self, o: &Operand, lane: usize) -> u32 {
        match o.kind {
            Kind::Vector { index, half, .. } => {
                let v = self.v[index as usize][lane];
                match half {
                    Half::Full => v,
                    Half::Lo => v & 0xffff,
                    Half::Hi => v >> 16,
                }
            }
            Kind::Acc { index, .. } => self.acc[index as usize][lane],
            _ => self.sread(o),
        }
    }

    /// A 64-bit vector source in `lane`.
    #[inline]
    pub fn vread64(&self, o: &Operand, lane: usize) -> u64 {
        match o.kind {
            Kind::Vector { index, .. } => {
                let i = index as usize;
                u64::from(self.v[i][lane]) | u64::from(self.v[i + 1][lane]) << 32
            }
            Kind::Acc { index, .. } => {
                let i = index as usize;
                u64::from(self.acc[i][lane]) | u64::from(self.acc[i + 1][lane]) << 32
            }
            _ => self.sread64(o),
        }
    }

    /// A 16-bit vector source (an inline float is the half's bits).
    #[inline]
    pub fn vread16(&self, o: &Operand, lane: usize) -> u16 {
        match o.kind {
            Kind::Float(f) => f16_bits(f),
            _ => self.vread(o, lane) as u16,
        }
    }

    /// Writes a 32-bit vector destination in `lane`; a 16-bit half keeps
    /// the other half.
    #[inline]
    pub fn vwrite(&mut self, o: &Operand, lane: usize, val: u32) {
        match o.kind {
            Kind::Vector { index, half, .. } => {
                let r = &mut self.v[index as usize][lane];
                *r = match half {
                    Half::Full => val,
                    Half::Lo => (*r & 0xffff_0000) | (val & 0xffff),
                    Half::Hi => (*r & 0xffff) | (val << 16),
                };
            }
            Kind::Acc { index, .. } => self.acc[index as usize][lane] = val,
            _ => self.swrite(o, val),
        }
    }

    /// Writes a 64-bit vector destination in `lane`.
    #[inline]
    pub fn vwrite64(&mut self, o: &Operand, lane: usize, val: u64) {
        match o.kind {
            Kind::Vector { index, .. } => {
                let i = index as usize;
                self.v[i][lane] = val as u32;
                self.v[i + 1][lane] = (val >> 32) as u32;
            }
            Kind::Acc { index, .. } => {
                let i = index as usize;
                self.acc[i][lane] = val as u32;
                self.acc[i + 1][lane] = (val >> 32) as u32;
            }
            _ => self.swrite64(o, val),
        }
    }

    /// Register `n` of a multi-register VGPR operand (`v[4:7]`, n = 2 is
    /// `v6`), in `lane`.
    #[inline]
    pub fn vreg(&self, o: &Operand, n: usize, lane: usize) -> u32 {
        match o.kind {
            Kind::Vector { index, .. } => self.v[index as usize + n][lane],
            Kind::Acc { index, .. } => self.acc[index as usize + n][lane],
            _ => 0,
        }
    }

    #[inline]
    pub fn set_vreg(&mut self, o: &Operand, n: usize, lane: usize, val: u32) {
        match o.kind {
            Kind::Vector { index, .. } => self.v[index as usize + n][lane] = val,
            Kind::Acc { index, .. } => self.acc[index as usize + n][lane] = val,
            _ => {}
        }
    }

    /// An `f32` source with its `abs`/`neg` modifiers applied.
    #[inline]
    pub fn fread(&self, o: &Operand, lane: usize) -> f32 {
        let mut f = f32::from_bits(self.vread(o, lane));
        if o.abs {
            f = f.abs();
        }
        if o.neg { -f } else { f }
    }

    /// An `f64` source with its modifiers; a 32-bit literal is the high half.
    #[inline]
    pub fn fread64(&self, o: &Operand, lane: usize) -> f64 {
        let bits = match o.kind {
            Kind::Literal(v) => u64::from(v) << 32,
            _ => self.vread64(o, lane),
        };
        let mut f = f64::from_bits(bits);
        if o.abs {
            f = f.abs();
        }
        if o.neg { -f } else { f }
    }

    // ------------------------------------------------------------ memory

    fn access_fault(&self, what: &str, addr: u64, len: usize, lane: usize) -> Stop {
        fault(
            FaultKind::Memory,
            format!("memory access fault: lane {lane} {what} {len} bytes at {addr:#x}, which is not device memory"),
        )
    }

    /// The host address of a global access of `len` bytes at `addr`.
    #[inline]
    pub fn global_ptr(&mut self, addr: u64, len: usize, lane: usize) -> Result<*mut u8> {
        if self.mem.contains(addr, len as u64) {
            Ok(addr as *mut u8)
        } else {
            Err(self.access_fault("accessed", addr, len, lane))
        }
    }

    /// The host address of `len` bytes at offset `off` of `lane`'s private
    /// segment.
    #[inline]
    pub fn scratch_ptr(&mut self, off: u64, len: usize, lane: usize) -> Result<*mut u8> {
        let size = u64::from(self.private_size);
        if off.checked_add(len as u64).is_none_or(|end| end > size) {
            return Err(fault(
                FaultKind::Memory,
                format!(
                    "memory access fault: lane {lane} accessed {len} bytes at offset {off:#x} of its private \
                     segment, which has {size} bytes (a stack overflow?)"
                ),
            ));
        }
        let base = lane as u64 * size + off;
        // The check above keeps it inside `scratch`.
        Ok(self.scratch[base as usize..].as_mut_ptr())
    }

    /// The host address of `len` bytes at offset `off` of the workgroup's LDS.
    #[inline]
    pub fn lds_ptr(&mut self, off: u64, len: usize, lane: usize) -> Result<*mut u8> {
        let size = self.group.lds_size() as u64;
        if off.checked_add(len as u64).is_none_or(|end| end > size) {
            return Err(fault(
                FaultKind::Memory,
                format!("memory access fault: lane {lane} accessed {len} bytes at LDS offset {off:#x} (LDS has {size} bytes)"),
            ));
        }
        Ok(self.group.lds_ptr(off as usize))
    }

    /// The host address of a flat access: the private or shared aperture,
    /// else global memory.
    #[inline]
    pub fn flat_ptr(&mut self, addr: u64, len: usize, lane: usize) -> Result<*mut u8> {
        match (addr >> 32) as u32 {
            PRIVATE_APERTURE => self.scratch_ptr(addr & 0xffff_ffff, len, lane),
            SHARED_APERTURE => self.lds_ptr(addr & 0xffff_ffff, len, lane),
            _ => self.global_ptr(addr, len, lane),
        }
    }

    // ------------------------------------------------------------ running

    /// Runs until `s_endpgm` or a fault.
    pub fn run(&mut self, code: &Code) -> std::result::Result<(), Fault> {
        loop {
            let Some(inst) = code.at(self.pc) else {
                return Err(Fault {
                    kind: FaultKind::Memory,
                    message: format!(
                        "wave {} jumped to {:#x}, which is not an instruction of the code object (in or after {})",
                        self.id,
                        self.pc,
                        code.function_at(self.pc)
                    ),
                });
            };
            self.next_pc = self.pc + u64::from(inst.len);
            match (inst.exec)(self, inst) {
                Ok(()) => {}
                Err(Stop::End) => return Ok(()),
                Err(Stop::Fault(f)) => return Err(self.locate(f, inst, code)),
            }
            self.pc = self.next_pc;
            self.executed += 1;
            if self.executed & 0x3ff == 0 && self.shared.aborted() {
                return Err(Fault { kind: FaultKind::Aborted, message: "stopped: another wave faulted".into() });
            }
        }
    }

    /// Adds where `f` happened.
    pub fn locate(&self, f: Fault, inst: &Inst, code: &Code) -> Fault {
        Fault {
            kind: f.kind,
            message: format!(
                "{} (`{}` at {:#x} in {}, wave {})",
                f.message,
                inst.mnemonic,
                inst.addr,
                code.function_at(inst.addr),
                self.id
            ),
        }
    }
}
