//! What a code object is, from its first bytes: an AMDGPU ELF (`e_machine`
//! `EM_AMDGPU`, the processor in `e_flags`), NVIDIA PTX text (`.version`,
//! `.target sm_NN`), a cubin (ELF `EM_CUDA`) or a fatbinary. The vendor of
//! the backend follows from it.

pub mod amdgpu;
pub mod ptx;

use std::path::{Path, PathBuf};

use gpu_toolchain::Vendor;
use object::{Object, ObjectSection, ObjectSymbol};
use rt_abi::symbols::KERNEL_ENTRY;

use amdgpu::Feature;
pub use ptx::PtxInfo;

pub const EM_CUDA: u16 = 190;
pub const EM_AMDGPU: u16 = 224;
/// Magic of a CUDA fatbinary (`__cudaFatFormat`), little endian.
const FATBIN_MAGIC: u32 = 0xBA55_ED50;
/// The largest code object gpurun reads: 1 GiB, some 80 times the largest
/// program built here (real-crates' 13 MB of PTX), so a wrong path to a big
/// file is an error, not a wait while it is read into memory.
pub const MAX_CODE_OBJECT_BYTES: u64 = 1 << 30;
/// Bytes read first: enough for every format's header and for
/// [`ptx::looks_like_ptx`], which looks at this much text.
const HEAD_BYTES: usize = 4096;

/// A code object read from disk, with what its header says.
#[derive(Clone, Debug)]
pub struct CodeObject {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
    pub kind: Kind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    Amdgpu(AmdgpuInfo),
    Ptx(PtxInfo),
    /// An NVIDIA ELF; `sm` where the header says it plainly.
    Cubin {
        sm: Option<u32>,
    },
    Fatbin,
}

/// What an AMDGPU ELF's header and kernel descriptor say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AmdgpuInfo {
    /// `e_flags & EF_AMDGPU_MACH`.
    pub mach: u32,
    /// Its processor name (`gfx90a`, `gfx11-generic`), if known.
    pub arch: Option<&'static str>,
    pub xnack: Feature,
    pub sramecc: Feature,
    /// `e_ident[EI_ABIVERSION]` (2 = code object v4, 3 = v5, 4 = v6).
    pub abi_version: u8,
    /// Whether the kernel entry's symbol is present; `None` if the file has
    /// no symbol table to tell.
    pub has_entry: Option<bool>,
    /// From the entry's kernel descriptor (`KERNEL.kd`): compiled for wave32.
    pub wave32: Option<bool>,
    /// From the kernel descriptor: fixed private (scratch) bytes per lane.
    pub private_segment_size: Option<u32>,
}

impl AmdgpuInfo {
    /// Lanes per wavefront: the kernel descriptor's wave32 bit where present,
    /// else the processor's default.
    pub fn lanes(&self) -> u32 {
        match self.wave32 {
            Some(true) => 32,
            Some(false) => 64,
            None => gpu_toolchain::arch::amd_default_lanes(self.arch.unwrap_or("gfx900")),
        }
    }

    /// `gfx90a`, or `mach 0x..` for an unknown processor.
    pub fn arch_name(&self) -> String {
        self.arch.map_or_else(|| format!("unknown AMDGPU processor (mach {:#x})", self.mach), str::to_string)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CodeObjectError {
    #[error("cannot read {path}: {error}")]
    Read { path: PathBuf, error: std::io::Error },
    #[error("{path} is {what}, not a file: gpurun runs a code object file or a crate directory")]
    NotAFile { path: PathBuf, what: &'static str },
    #[error(
        "{path} is {size} bytes, more than the {} GiB a code object may have: is it the program?",
        MAX_CODE_OBJECT_BYTES >> 30
    )]
    TooLarge { path: PathBuf, size: u64 },
    #[error(
        "{path}: {what}. gpurun runs AMDGPU code objects (ELF) and NVIDIA PTX or cubin files built for a GPU target"
    )]
    NotGpu { path: PathBuf, what: String },
    #[error("{path}: malformed {format}: {msg}")]
    Malformed { path: PathBuf, format: &'static str, msg: String },
}

impl CodeObject {
    /// Reads and classifies a code object file: only a regular file (a FIFO
    /// or a device could block or never end), its header first (anything
    /// else is refused unread), at most [`MAX_CODE_OBJECT_BYTES`].
    pub fn read(path: &Path) -> Result<CodeObject, CodeObjectError> {
        use std::io::Read;
        use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
        let read_err = |error| CodeObjectError::Read { path: path.to_path_buf(), error };
        // O_NONBLOCK: opening a FIFO with no writer returns at once instead of
        // waiting for one; the check below then refuses it.
        let mut file =
            std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path).map_err(read_err)?;
        let meta = file.metadata().map_err(read_err)?;
        let t = meta.file_type();
        if !t.is_file() {
            let what = if t.is_dir() {
                "a directory"
            } else if t.is_fifo() {
                "a FIFO (named pipe)"
            } else if t.is_char_device() {
                "a character device"
            } else if t.is_block_device() {
                "a block device"
            } else if t.is_socket() {
                "a socket"
            } else {
                "not a regular file"
            };
            return Err(CodeObjectError::NotAFile { path: path.to_path_buf(), what });
        }
        let mut bytes = Vec::new();
        (&mut file).take(HEAD_BYTES as u64).read_to_end(&mut bytes).map_err(read_err)?;
        if let Err(e) = detect(&bytes)
            && e.not_gpu
        {
            return Err(e.with_path(path));
        }
        let too_large = |size| CodeObjectError::TooLarge { path: path.to_path_buf(), size };
        if meta.len() > MAX_CODE_OBJECT_BYTES {
            return Err(too_large(meta.len()));
        }
        // The file may grow while it is read: one byte past the bound says so.
        file.take(MAX_CODE_OBJECT_BYTES + 1 - bytes.len() as u64).read_to_end(&mut bytes).map_err(read_err)?;
        if bytes.len() as u64 > MAX_CODE_OBJECT_BYTES {
            return Err(too_large(bytes.len() as u64));
        }
        Self::from_bytes(path, bytes)
    }

    pub fn from_bytes(path: &Path, bytes: Vec<u8>) -> Result<CodeObject, CodeObjectError> {
        let kind = detect(&bytes).map_err(|e| e.with_path(path))?;
        Ok(CodeObject { path: path.to_path_buf(), bytes, kind })
    }

    pub fn vendor(&self) -> Vendor {
        match self.kind {
            Kind::Amdgpu(_) => Vendor::Amd,
            _ => Vendor::Nvidia,
        }
    }

    /// A one-line description: `AMDGPU ELF for gfx90a`, `PTX 8.5 for sm_90`.
    pub fn describe(&self) -> String {
        match &self.kind {
            Kind::Amdgpu(a) => format!("an AMDGPU code object for {}", a.arch_name()),
            Kind::Ptx(p) => format!("NVIDIA PTX (ISA {}.{}) for {}", p.version.0, p.version.1, p.target),
            Kind::Cubin { sm: Some(sm) } => format!("an NVIDIA cubin for sm_{sm}"),
            Kind::Cubin { sm: None } => "an NVIDIA cubin".to_string(),
            Kind::Fatbin => "an NVIDIA fatbinary".to_string(),
        }
    }
}

/// A detection failure before the path is known.
#[derive(Debug)]
pub struct DetectError {
    not_gpu: bool,
    format: &'static str,
    msg: String,
}

impl DetectError {
    fn with_path(self, path: &Path) -> CodeObjectError {
        let path = path.to_path_buf();
        if self.not_gpu {
            CodeObjectError::NotGpu { path, what: self.msg }
        } else {
            CodeObjectError::Malformed { path, format: self.format, msg: self.msg }
        }
    }
}

/// Classifies a code object from its bytes.
pub fn detect(bytes: &[u8]) -> Result<Kind, DetectError> {
    let not_gpu = |msg: String| DetectError { not_gpu: true, format: "", msg };
    if bytes.starts_with(b"\x7fELF") {
        return detect_elf(bytes);
    }
    if bytes.len() >= 4 && u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) == FATBIN_MAGIC {
        return Ok(Kind::Fatbin);
    }
    if ptx::looks_like_ptx(bytes) {
        let text = std::str::from_utf8(bytes).map_err(|e| DetectError {
            not_gpu: false,
            format: "PTX",
            msg: format!("not UTF-8 text at byte {}", e.valid_up_to()),
        })?;
        return ptx::parse(text, KERNEL_ENTRY).map(Kind::Ptx).map_err(|msg| DetectError {
            not_gpu: false,
            format: "PTX",
            msg,
        });
    }
    if bytes.is_empty() {
        return Err(not_gpu("the file is empty".into()));
    }
    Err(not_gpu("neither an ELF file nor PTX text".into()))
}

fn detect_elf(bytes: &[u8]) -> Result<Kind, DetectError> {
    let bad = |msg: &str| DetectError { not_gpu: false, format: "ELF", msg: msg.to_string() };
    if bytes.len() < 20 {
        return Err(bad("truncated header"));
    }
    let little = bytes[5] == 1;
    let u16_at = |o: usize| {
        let b = [bytes[o], bytes[o + 1]];
        if little { u16::from_le_bytes(b) } else { u16::from_be_bytes(b) }
    };
    let machine = u16_at(18);
    match machine {
        EM_AMDGPU => {}
        EM_CUDA => {
            let sm = (bytes.len() >= 52 && bytes[4] == 2)
                .then(|| u32::from_le_bytes([bytes[48], bytes[49], bytes[50], bytes[51]]) & 0xff)
                .filter(|sm| (20..=200).contains(sm));
            return Ok(Kind::Cubin { sm });
        }
        other => {
            let what = match other {
                3 => "an x86 ELF (a host program or library)".to_string(),
                62 => "an x86-64 ELF (a host program or library)".to_string(),
                183 => "an AArch64 ELF (a host program or library)".to_string(),
                40 => "an Arm ELF (a host program or library)".to_string(),
                243 => "a RISC-V ELF (a host program or library)".to_string(),
                m => format!("an ELF file for machine {m}, not a GPU"),
            };
            return Err(DetectError { not_gpu: true, format: "ELF", msg: what });
        }
    }
    if bytes[4] != 2 || !little {
        return Err(bad("an AMDGPU code object must be 64-bit little-endian"));
    }
    if bytes.len() < 64 {
        return Err(bad("truncated ELF header"));
    }
    let e_flags = u32::from_le_bytes([bytes[48], bytes[49], bytes[50], bytes[51]]);
    let mach = e_flags & amdgpu::EF_AMDGPU_MACH;
    let mut info = AmdgpuInfo {
        mach,
        arch: amdgpu::mach_name(mach),
        xnack: Feature::from_v4((e_flags & amdgpu::EF_AMDGPU_FEATURE_XNACK_V4) >> 8),
        sramecc: Feature::from_v4((e_flags & amdgpu::EF_AMDGPU_FEATURE_SRAMECC_V4) >> 10),
        abi_version: bytes[8],
        has_entry: None,
        wave32: None,
        private_segment_size: None,
    };
    read_kernel_descriptor(bytes, &mut info);
    Ok(Kind::Amdgpu(info))
}

/// Offset of `kernel_code_properties` in an AMDHSA kernel descriptor.
const KD_CODE_PROPERTIES: usize = 56;
/// `kernel_code_properties` bit: the kernel runs as wave32.
const KD_ENABLE_WAVEFRONT_SIZE32: u16 = 1 << 10;
/// The names in an ELF file's symbol tables (empty if it does not parse).
pub fn elf_symbol_names(bytes: &[u8]) -> Vec<String> {
    let Ok(file) = object::File::parse(bytes) else { return Vec::new() };
    file.symbols().chain(file.dynamic_symbols()).filter_map(|s| s.name().ok().map(str::to_string)).collect()
}

/// Offset of `private_segment_fixed_size`.
const KD_PRIVATE_SEGMENT_SIZE: usize = 4;

/// Fills in `has_entry`, `wave32` and the private segment size from the
/// symbol table, best effort: a file without sections leaves them `None`.
fn read_kernel_descriptor(bytes: &[u8], info: &mut AmdgpuInfo) {
    let Ok(file) = object::File::parse(bytes) else { return };
    let kd_name = format!("{KERNEL_ENTRY}.kd");
    let mut any_symbol = false;
    let mut found = false;
    for sym in file.symbols().chain(file.dynamic_symbols()) {
        any_symbol = true;
        let Ok(name) = sym.name() else { continue };
        if name == KERNEL_ENTRY || name == kd_name {
            found = true;
        }
        if name != kd_name {
            continue;
        }
        let Some(section) = sym.section_index().and_then(|i| file.section_by_index(i).ok()) else {
            continue;
        };
        let Ok(data) = section.data() else { continue };
        let Some(start) = sym.address().checked_sub(section.address()) else { continue };
        let Some(kd) = usize::try_from(start).ok().and_then(|s| data.get(s..s.checked_add(64)?)) else {
            continue;
        };
        let props = u16::from_le_bytes([kd[KD_CODE_PROPERTIES], kd[KD_CODE_PROPERTIES + 1]]);
        info.wave32 = Some(props & KD_ENABLE_WAVEFRONT_SIZE32 != 0);
        let p = KD_PRIVATE_SEGMENT_SIZE;
        info.private_segment_size = Some(u32::from_le_bytes([kd[p], kd[p + 1], kd[p + 2], kd[p + 3]]));
    }
    if any_symbol {
        info.has_entry = Some(found);
    }
}

#[cfg(test)]
mod tests;
