//! A code object loaded for the emulator: its segments copied into host
//! memory (device memory, as everywhere here) with the dynamic relocations
//! applied, the kernel descriptor read, and the text disassembled.

use std::sync::Arc;

use object::elf;
use object::read::elf::{Dyn, ElfFile64, FileHeader, ProgramHeader, Rela};
use object::{Object, ObjectSymbol};

use crate::arch::Arch;
use crate::decode::{self, Code};
use crate::memory;

const DT_RELA: i32 = 7;
const DT_RELASZ: i32 = 8;
/// AMDGPUUsage, "Relocation Records".
const R_AMDGPU_ABS64: u32 = 3;
const R_AMDGPU_RELATIVE64: u32 = 13;

/// The kernel descriptor's fields the launch reads (AMDGPUUsage, "Kernel
/// Descriptor").
#[derive(Clone, Copy, Debug, Default)]
pub struct Descriptor {
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
    pub kernarg_size: u32,
    /// Code-object address of the kernel's first instruction.
    pub entry: u64,
    pub rsrc1: u32,
    pub rsrc2: u32,
    pub rsrc3: u32,
    /// `kernel_code_properties`.
    pub properties: u16,
}

impl Descriptor {
    pub fn parse(kd: &[u8], kd_addr: u64) -> Descriptor {
        let u32_at = |o: usize| u32::from_le_bytes(kd[o..o + 4].try_into().expect("4 bytes"));
        let entry_offset = i64::from_le_bytes(kd[16..24].try_into().expect("8 bytes"));
        Descriptor {
            group_segment_fixed_size: u32_at(0),
            private_segment_fixed_size: u32_at(4),
            kernarg_size: u32_at(8),
            entry: kd_addr.wrapping_add_signed(entry_offset),
            rsrc3: u32_at(44),
            rsrc1: u32_at(48),
            rsrc2: u32_at(52),
            properties: u16::from_le_bytes([kd[56], kd[57]]),
        }
    }

    /// `COMPUTE_PGM_RSRC2.USER_SGPR_COUNT`: where the system SGPRs start.
    pub fn user_sgpr_count(&self) -> usize {
        ((self.rsrc2 >> 1) & 0x1f) as usize
    }
    pub fn enable_private_segment(&self) -> bool {
        self.rsrc2 & 1 != 0
    }
    /// `ENABLE_SGPR_WORKGROUP_ID_{X,Y,Z}`.
    pub fn workgroup_id_enabled(&self, dim: u32) -> bool {
        self.rsrc2 >> (7 + dim) & 1 != 0
    }
    pub fn workgroup_info_enabled(&self) -> bool {
        self.rsrc2 >> 10 & 1 != 0
    }
    /// VGPRs the kernel uses (granule-rounded), from `COMPUTE_PGM_RSRC1`.
    pub fn vgprs(&self, arch: Arch) -> usize {
        let blocks = (self.rsrc1 & 0x3f) as usize + 1;
        match arch {
            // gfx90a/gfx942: granule of 8 (unified VGPR/AGPR file).
            Arch::Gfx90a | Arch::Gfx942 => blocks * 8,
            // gfx11 wave32: granule of 8.
            Arch::Gfx1100 => blocks * 8,
        }
    }
    pub fn property(&self, bit: u16) -> bool {
        self.properties >> bit & 1 != 0
    }
}

/// `kernel_code_properties` bits.
pub mod props {
    pub const PRIVATE_SEGMENT_BUFFER: u16 = 0;
    pub const DISPATCH_PTR: u16 = 1;
    pub const QUEUE_PTR: u16 = 2;
    pub const KERNARG_SEGMENT_PTR: u16 = 3;
    pub const DISPATCH_ID: u16 = 4;
    pub const FLAT_SCRATCH_INIT: u16 = 5;
    pub const PRIVATE_SEGMENT_SIZE: u16 = 6;
    pub const WAVEFRONT_SIZE32: u16 = 10;
    pub const USES_DYNAMIC_STACK: u16 = 11;
}

/// The loaded image: host memory registered as device memory.
pub struct Image {
    buf: Vec<u64>,
    len: usize,
}

impl Image {
    pub fn base(&self) -> u64 {
        self.buf.as_ptr() as u64
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        let len = self.len;
        // SAFETY: `buf` holds at least `len` bytes (allocated as u64s for alignment).
        unsafe { std::slice::from_raw_parts_mut(self.buf.as_mut_ptr().cast::<u8>(), len) }
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        memory::unregister(self.base());
    }
}

/// A code object ready to launch.
pub struct Module {
    pub arch: Arch,
    pub code: Arc<Code>,
    pub image: Image,
    /// Symbols: name → code-object address and size.
    pub symbols: Vec<(String, u64, u64)>,
    /// The metadata note as `llvm-readobj --notes` prints it.
    pub notes: String,
}

/// A kernel of a module.
#[derive(Clone, Copy, Debug)]
pub struct Kernel {
    pub descriptor: Descriptor,
}

impl Module {
    /// Loads the code object in `bytes` for `arch`.
    pub fn load(bytes: &[u8], arch: Arch) -> Result<Module, String> {
        let file = ElfFile64::<object::Endianness>::parse(bytes).map_err(|e| format!("not an ELF code object: {e}"))?;
        let endian = file.endian();
        let header = file.elf_header();
        if header.e_machine(endian) != elf::EM_AMDGPU {
            return Err("not an AMDGPU code object (ELF machine is not EM_AMDGPU)".into());
        }
        let segments = header.program_headers(endian, bytes).map_err(|e| e.to_string())?;
        let mut end = 0u64;
        for p in segments.iter().filter(|p| p.p_type(endian) == elf::PT_LOAD) {
            end = end.max(p.p_vaddr(endian) + p.p_memsz(endian));
        }
        let len = end as usize;
        let mut image = Image { buf: vec![0u64; len.div_ceil(8)], len };
        for p in segments.iter().filter(|p| p.p_type(endian) == elf::PT_LOAD) {
            let data = p.data(endian, bytes).map_err(|_| "a segment lies outside the file")?;
            let at = p.p_vaddr(endian) as usize;
            image.bytes_mut()[at..at + data.len()].copy_from_slice(data);
        }
        let base = image.base();
        let symbols: Vec<(String, u64, u64)> = file
            .symbols()
            .chain(file.dynamic_symbols())
            .filter_map(|s| Some((s.name().ok()?.to_string(), s.address(), s.size())))
            .collect();
        // Dynamic relocations: RELATIVE64 (base + addend) and ABS64 (symbol + addend).
        // By symbol-table index (the iterator skips the null symbol 0).
        let dynsyms: std::collections::HashMap<usize, u64> =
            file.dynamic_symbols().map(|s| (s.index().0, s.address())).collect();
        for p in segments.iter().filter(|p| p.p_type(endian) == elf::PT_DYNAMIC) {
            let Ok(Some(dyns)) = p.dynamic(endian, bytes) else { continue };
            let (mut rela, mut relasz) = (0u64, 0u64);
            for d in dyns {
                match d.tag32(endian) {
                    Some(DT_RELA) => rela = d.val(endian),
                    Some(DT_RELASZ) => relasz = d.val(endian),
                    _ => {}
                }
            }
            let count = relasz as usize / 24;
            for n in 0..count {
                let off = rela as usize + n * 24;
                let r: &elf::Rela64<object::Endianness> =
                    object::pod::from_bytes(&image.bytes_mut()[off..off + 24]).map_err(|_| "bad relocation")?.0;
                let (at, kind, sym, addend) =
                    (r.r_offset(endian) as usize, r.r_type(endian, false).0, r.r_sym(endian, false), r.r_addend(endian));
                let value = match kind {
                    R_AMDGPU_RELATIVE64 => base.wrapping_add_signed(addend),
                    R_AMDGPU_ABS64 => {
                        let s = dynsyms.get(&(sym as usize)).copied().unwrap_or(0);
                        // An undefined symbol (address 0) stays null, as the loader leaves it.
                        if s == 0 { 0 } else { (base + s).wrapping_add_signed(addend) }
                    }
                    other => return Err(format!("relocation type {other} at {at:#x} is not supported")),
                };
                image.bytes_mut()[at..at + 8].copy_from_slice(&value.to_le_bytes());
            }
        }
        memory::register(base, len as u64);
        // The disassembler reads a file.
        let tmp = std::env::temp_dir().join(format!("amd-emu-{}-{:x}.elf", std::process::id(), base));
        std::fs::write(&tmp, bytes).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
        let code = decode::disassemble(&tmp, arch.name());
        let notes = decode::notes(&tmp);
        let _ = std::fs::remove_file(&tmp);
        Ok(Module { arch, code: Arc::new(code?), image, symbols, notes: notes? })
    }

    /// The code-object address and size of symbol `name`.
    pub fn symbol(&self, name: &str) -> Option<(u64, u64)> {
        self.symbols.iter().find(|(n, _, _)| n == name).map(|&(_, a, s)| (a, s))
    }

    /// The kernel whose descriptor is `name.kd`.
    pub fn kernel(&self, name: &str) -> Option<Kernel> {
        let (kd, _) = self.symbol(&format!("{name}.kd"))?;
        let bytes = self.image_bytes(kd, 64)?;
        Some(Kernel { descriptor: Descriptor::parse(bytes, kd) })
    }

    /// `len` bytes of the loaded image at code-object address `addr`.
    pub fn image_bytes(&self, addr: u64, len: usize) -> Option<&[u8]> {
        let end = (addr as usize).checked_add(len)?;
        if end > self.image.len() {
            return None;
        }
        // SAFETY: in bounds of the image, which lives as long as `self`.
        Some(unsafe { std::slice::from_raw_parts((self.image.base() + addr) as *const u8, len) })
    }
}
