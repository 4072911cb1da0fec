//! An AMD GPU ISA emulator that runs gpu-ld's code objects unchanged, so
//! that our AMD code executes in CI without AMD hardware.
//!
//! - [`decode`]: LLVM's disassembler (`llvm-objdump`) decodes; we parse its
//!   text into [`decode::Inst`]s.
//! - [`ops`]: the semantics, per AMD's ISA documents, by mnemonic.
//! - [`wave`]: one wavefront's registers and the loop that runs it.
//! - [`memory`]: device memory is host memory; flat apertures for scratch
//!   and LDS; accesses outside registered memory fault.
//! - [`kernel`]: loading a code object (segments, relocations, kernel
//!   descriptor); [`dispatch`]: a launch, one host thread per wave.
//!
//! What it does not model: timing and the hardware's memory ordering (every
//! access is sequentially ordered), caches, and instructions our code
//! objects do not use (an unknown one stops the run, naming it).

pub mod arch;
pub mod coverage;
pub mod decode;
pub mod dispatch;
pub mod kernel;
pub mod memory;
pub mod operand;
pub mod ops;
pub mod wave;

pub use arch::Arch;
