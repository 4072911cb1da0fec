//! Checks a built code object: the kernel entry is there, the idle loop
//! sleeps (`s_sleep` / `nanosleep`), the wavefront size is the arch's, and
//! nothing is left undefined. Used by `gpurun demo` (no GPU) and the
//! code-object tests; AMD objects are read with llvm-tools.
use crate::arch::{Arch, Vendor};
use crate::error::Error;
use rt_abi::symbols::KERNEL_ENTRY;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What a code object holds.
#[derive(Debug, Default, Clone)]
pub struct CodeObjectReport {
    pub path: PathBuf,
    pub bytes: u64,
    pub kernel_entry: bool,
    /// `s_sleep` (AMD) or `nanosleep` (NVIDIA) appears in the code.
    pub sleeps: bool,
    /// AMD: `.wavefront_size` of the kernel from the metadata note; NVIDIA: 32.
    pub wavefront_size: Option<u32>,
    /// AMD: the gfx arch recorded in the metadata (`amdhsa.target`); NVIDIA:
    /// the PTX `.target`.
    pub target: Option<String>,
    /// Functions or symbols referenced but not defined.
    pub undefined: Vec<String>,
    /// AMD: the kernel's arguments from the metadata note, in order, as
    /// (offset, size, value kind); `None` for NVIDIA.
    pub kernel_args: Option<Vec<KernelArg>>,
    /// AMD: the registers the kernel is given (`.vgpr_count`, AGPRs
    /// included, `.agpr_count`, `.sgpr_count`) and the highest of each file
    /// the code names. A wave is allocated the kernel's counts, and every
    /// function it calls runs in them: the kernel's must cover the code's.
    pub kernel_registers: Option<(KernelRegisters, Registers)>,
}

/// A kernel's register counts from the metadata note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelRegisters {
    /// VGPRs, AGPRs included where the arch has them (gfx90a, gfx942).
    pub vgprs: u32,
    pub agprs: u32,
    pub sgprs: u32,
}

/// One kernel argument of an AMDGPU code object's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelArg {
    pub offset: u64,
    pub size: u64,
    /// `global_buffer`, `by_value`, or a `hidden_*` kind the HIP runtime
    /// fills in itself from the launch (block counts, group sizes, ...).
    pub kind: String,
}

impl KernelArg {
    pub fn is_hidden(&self) -> bool {
        self.kind.starts_with("hidden_")
    }
}

/// The arguments the launcher passes to the kernel: one pointer, the
/// address of the `LaunchBlock` (`hipModuleLaunchKernel`'s parameter array
/// has one entry). Every other argument must be hidden.
///
/// The HIP runtime builds the whole kernarg segment from the metadata
/// (ROCm/clr): it reads one value per explicit argument from the caller
/// (`ihipLaunchKernelCommand`, `hipamd/src/hip_module.cpp`), writes each
/// hidden one at its offset from the launch (`VirtualGPU::submitKernelInternal`,
/// `rocclr/device/rocm/rocvirtual.cpp`), and copies both into a buffer of
/// `.kernarg_segment_size` bytes (264 for gfx90a's lanes program, code object
/// v5; 8 for hello-threads, which lists none). Our code reads none of the
/// hidden ones; LLVM lists them where it cannot prove that nothing the kernel
/// may call does (`gpu-ld`'s closed-world attributor proves it unless the
/// program calls code in module assembly). The launcher README ("AMD: the
/// kernel's arguments") has the offsets, what is filled in, and the sources.
pub const LAUNCHER_KERNEL_ARGS: [(u64, u64, &str); 1] = [(0, 8, "global_buffer")];

/// The hidden argument kinds the HIP runtime fills in: those of ROCclr's
/// value-kind table (`rocclr/platform/kernel_init.hpp`; the strings are all
/// in Debian's HIP 5.2.3 library). A kind it does not know fails the
/// kernel's argument metadata when the code object loads (`populateArgsV3`,
/// `rocclr/device/devkernel.cpp`), so a newer LLVM's kind must be caught
/// here. `hidden_dynamic_lds_size` is left out: runtimes before ROCm 6.1 do
/// not know it, and LLVM lists it only for a kernel that uses dynamic LDS,
/// which ours do not.
pub const RUNTIME_FILLED_HIDDEN_KINDS: [&str; 23] = [
    "hidden_none",
    "hidden_global_offset_x",
    "hidden_global_offset_y",
    "hidden_global_offset_z",
    "hidden_printf_buffer",
    "hidden_hostcall_buffer",
    "hidden_default_queue",
    "hidden_completion_action",
    "hidden_multigrid_sync_arg",
    "hidden_heap_v1",
    "hidden_block_count_x",
    "hidden_block_count_y",
    "hidden_block_count_z",
    "hidden_group_size_x",
    "hidden_group_size_y",
    "hidden_group_size_z",
    "hidden_remainder_x",
    "hidden_remainder_y",
    "hidden_remainder_z",
    "hidden_grid_dims",
    "hidden_private_base",
    "hidden_shared_base",
    "hidden_queue_ptr",
];

impl CodeObjectReport {
    /// Everything that must hold for `arch`, as a list of problems.
    pub fn problems(&self, arch: &Arch) -> Vec<String> {
        let mut p = Vec::new();
        if !self.kernel_entry {
            p.push(format!("no kernel entry `{KERNEL_ENTRY}`"));
        }
        if !self.sleeps {
            p.push("the idle loop has no sleep instruction (s_sleep / nanosleep)".into());
        }
        if self.wavefront_size != Some(arch.lanes()) {
            p.push(format!("wavefront size {:?}, expected {}", self.wavefront_size, arch.lanes()));
        }
        match &self.target {
            Some(t) if t.contains(arch.name.as_str()) => {}
            other => p.push(format!("built for {other:?}, expected {}", arch.name)),
        }
        if !self.undefined.is_empty() {
            p.push(format!("undefined symbols: {}", self.undefined.join(", ")));
        }
        if let Some((kernel, named)) = self.kernel_registers {
            // Arch VGPRs come first, in granules of 4, then the AGPRs.
            let arch_vgprs = named.vgpr.map_or(0, |v| v + 1);
            let need_v = match named.agpr {
                Some(a) => arch_vgprs.div_ceil(4) * 4 + a + 1,
                None => arch_vgprs,
            };
            if kernel.vgprs < need_v || kernel.agprs < named.agpr.map_or(0, |a| a + 1) {
                p.push(format!("the kernel is given {kernel:?} but its code names up to {}", named.to_line()));
            }
            if kernel.sgprs < named.sgpr.map_or(0, |s| s + 1) {
                p.push(format!("the kernel is given {} SGPRs but its code names up to s{:?}", kernel.sgprs, named.sgpr));
            }
        }
        if let Some(args) = &self.kernel_args {
            let explicit: Vec<(u64, u64, &str)> =
                args.iter().filter(|a| !a.is_hidden()).map(|a| (a.offset, a.size, a.kind.as_str())).collect();
            if explicit != LAUNCHER_KERNEL_ARGS {
                p.push(format!(
                    "the kernel's explicit arguments are {explicit:?}; the launcher passes {LAUNCHER_KERNEL_ARGS:?}"
                ));
            }
            let unknown: Vec<&str> = args
                .iter()
                .filter(|a| a.is_hidden() && !RUNTIME_FILLED_HIDDEN_KINDS.contains(&a.kind.as_str()))
                .map(|a| a.kind.as_str())
                .collect();
            if !unknown.is_empty() {
                p.push(format!(
                    "hidden kernel arguments the HIP runtime may not know (it would refuse the kernel): {}",
                    unknown.join(", ")
                ));
            }
        }
        p
    }
}

/// The stdout of llvm tool `tool` (in `bin`) run with `args` on `file`.
pub fn tool_output(bin: &Path, tool: &str, args: &[&str], file: &Path) -> Result<String, Error> {
    let out = Command::new(bin.join(tool)).args(args).arg(file).output().map_err(Error::spawn(tool))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        return Err(Error::Tool { tool: tool.to_string(), file: file.to_path_buf(), stderr });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Inspects `path`, a code object built for `vendor`. `llvm_bin` is the
/// llvm-tools folder (see [`crate::setup::llvm_bin`]).
pub fn inspect(path: &Path, vendor: Vendor, llvm_bin: &Path) -> Result<CodeObjectReport, Error> {
    let bytes = std::fs::metadata(path).map_err(Error::io("read", path))?.len();
    let mut r = CodeObjectReport { path: path.to_path_buf(), bytes, ..Default::default() };
    match vendor {
        Vendor::Nvidia => {
            let ptx = std::fs::read_to_string(path).map_err(Error::io("read", path))?;
            inspect_ptx(&ptx, &mut r);
        }
        Vendor::Amd => {
            let syms = tool_output(llvm_bin, "llvm-readobj", &["--dyn-syms", "--symbols"], path)?;
            let notes = tool_output(llvm_bin, "llvm-readobj", &["--notes"], path)?;
            let disasm = tool_output(llvm_bin, "llvm-objdump", &["-d"], path)?;
            inspect_amd(&syms, &notes, &disasm, &mut r);
        }
    }
    Ok(r)
}

/// The highest register of each file that machine code names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Registers {
    pub vgpr: Option<u32>,
    pub agpr: Option<u32>,
    pub sgpr: Option<u32>,
}

impl Registers {
    pub fn max(self, other: Registers) -> Registers {
        Registers { vgpr: self.vgpr.max(other.vgpr), agpr: self.agpr.max(other.agpr), sgpr: self.sgpr.max(other.sgpr) }
    }

    /// As the cache keeps it: `v75 a63 s101` (`-` for a file not used).
    pub fn to_line(self) -> String {
        let f = |v: Option<u32>| v.map_or("-".to_string(), |n| n.to_string());
        format!("v{} a{} s{}", f(self.vgpr), f(self.agpr), f(self.sgpr))
    }

    pub fn from_line(line: &str) -> Option<Registers> {
        let mut words = line.split_whitespace();
        let mut field = |prefix: char| -> Option<Option<u32>> {
            let w = words.next()?.strip_prefix(prefix)?;
            if w == "-" { Some(None) } else { w.parse().ok().map(Some) }
        };
        Some(Registers { vgpr: field('v')?, agpr: field('a')?, sgpr: field('s')? })
    }
}

/// The highest VGPR (`v75`, `v[72:75]`), AGPR and SGPR each instruction of
/// `disassembly` (`llvm-objdump -d`) names. Symbol names (`<...>`) and
/// comments are skipped; special registers (`vcc`, `exec`, `ttmp`) are not
/// numbered ones.
pub fn registers_named(disassembly: &str) -> Registers {
    let mut r = Registers::default();
    for line in disassembly.lines().filter(|l| l.starts_with(char::is_whitespace)) {
        let code = line.split("//").next().unwrap_or("");
        let code = code.split('<').next().unwrap_or("");
        let b = code.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            let at_word_start = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
            if at_word_start && matches!(c, b'v' | b'a' | b's') {
                let mut j = i + 1;
                let ranged = b.get(j) == Some(&b'[');
                if ranged {
                    // `v[72:75]`: the last number is the highest.
                    if let Some(close) = code[j..].find(']') {
                        let inner = &code[j + 1..j + close];
                        if let Some(hi) = inner.rsplit(':').next().and_then(|n| n.parse::<u32>().ok()) {
                            note(&mut r, c, hi);
                        }
                        i = j + close + 1;
                        continue;
                    }
                } else {
                    while j < b.len() && b[j].is_ascii_digit() {
                        j += 1;
                    }
                    let ends_word = j == b.len() || !(b[j].is_ascii_alphanumeric() || b[j] == b'_');
                    if j > i + 1 && ends_word
                        && let Ok(n) = code[i + 1..j].parse::<u32>()
                    {
                        note(&mut r, c, n);
                    }
                    i = j;
                    continue;
                }
            }
            i += 1;
        }
    }
    r
}

fn note(r: &mut Registers, file: u8, n: u32) {
    let slot = match file {
        b'v' => &mut r.vgpr,
        b'a' => &mut r.agpr,
        _ => &mut r.sgpr,
    };
    *slot = (*slot).max(Some(n));
}

/// PTX: `.entry` for kernels; `.extern .func` declares what is undefined.
pub fn inspect_ptx(ptx: &str, r: &mut CodeObjectReport) {
    r.kernel_entry = ptx.lines().any(|l| l.contains(".entry") && l.contains(KERNEL_ENTRY));
    r.sleeps = ptx.contains("nanosleep");
    r.wavefront_size = Some(32);
    r.target = ptx.lines().find_map(|l| l.trim().strip_prefix(".target")).map(|t| t.trim().to_string());
    r.undefined = ptx
        .lines()
        .filter(|l| l.trim_start().starts_with(".extern"))
        .filter_map(|l| l.split(|c: char| c.is_whitespace() || c == '(').filter(|w| !w.is_empty()).last().map(str::to_string))
        .collect();
}

/// AMDGPU ELF: symbols from llvm-readobj, the metadata note, the disassembly.
pub fn inspect_amd(syms: &str, notes: &str, disasm: &str, r: &mut CodeObjectReport) {
    let kd = format!("{KERNEL_ENTRY}.kd");
    r.kernel_entry = syms.lines().any(|l| l.trim() == format!("Name: {kd}") || l.trim().starts_with(&format!("Name: {kd} ")));
    r.sleeps = disasm.lines().any(|l| l.contains("s_sleep"));
    r.wavefront_size = notes
        .lines()
        .find_map(|l| l.trim().strip_prefix(".wavefront_size:"))
        .and_then(|v| v.trim().parse().ok());
    r.target = notes.lines().find_map(|l| l.trim().strip_prefix("amdhsa.target:")).map(|t| t.trim().to_string());
    r.kernel_args = Some(kernel_args(notes));
    // `    .vgpr_count:     140`, or `  - .agpr_count:     64` first in its entry.
    let count = |key: &str| {
        notes.lines().find_map(|l| l.trim().trim_start_matches("- ").strip_prefix(key)).and_then(|v| v.trim().parse().ok())
    };
    if let (Some(vgprs), Some(sgprs)) = (count(".vgpr_count:"), count(".sgpr_count:")) {
        let kernel = KernelRegisters { vgprs, agprs: count(".agpr_count:").unwrap_or(0), sgprs };
        r.kernel_registers = Some((kernel, registers_named(disasm)));
    }
    // llvm-readobj prints `Section: Undefined` for undefined symbols; the
    // first (null) symbol has an empty name.
    let mut undefined = Vec::new();
    let mut name = String::new();
    for line in syms.lines().map(str::trim) {
        if let Some(n) = line.strip_prefix("Name:") {
            // `Name: foo (12)`; the null symbol prints as `Name:  (0)`.
            let n = n.trim();
            name = if n.starts_with('(') { String::new() } else { n.split(" (").next().unwrap_or_default().to_string() };
        } else if line.starts_with("Section: Undefined") && !name.is_empty() && !undefined.contains(&name) {
            undefined.push(name.clone());
        }
    }
    r.undefined = undefined;
}

/// The `.args` of the (one) kernel in a metadata note as llvm-readobj
/// prints it: a YAML list of `.offset`, `.size`, `.value_kind` entries.
/// (`hip-emu` builds the kernarg segment from it.)
pub fn kernel_args(notes: &str) -> Vec<KernelArg> {
    let lines: Vec<&str> = notes.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    // `.args:` is a key of the kernel's map; it may open the map (`- .args:`,
    // where a kernel has no `.agpr_count`, gfx10+).
    let Some(start) = lines.iter().position(|l| l.trim().trim_start_matches("- ") == ".args:") else { return Vec::new() };
    let key = lines[start].trim_start();
    let base = indent(lines[start]) + if key.starts_with("- ") { 2 } else { 0 };
    let mut args = Vec::new();
    for line in lines[start + 1..].iter().take_while(|l| indent(l) > base || l.trim_start().starts_with("- ")) {
        let item = line.trim().trim_start_matches("- ");
        if line.trim().starts_with("- ") {
            args.push(KernelArg { offset: 0, size: 0, kind: String::new() });
        }
        let (Some(arg), Some((key, value))) = (args.last_mut(), item.split_once(':')) else { continue };
        let value = value.trim();
        match key.trim() {
            ".offset" => arg.offset = value.parse().unwrap_or(u64::MAX),
            ".size" => arg.size = value.parse().unwrap_or(u64::MAX),
            ".value_kind" => arg.kind = value.to_string(),
            _ => {}
        }
    }
    args
}

/// The PTX functions and kernels of `ptx`, each with its text.
fn ptx_functions(ptx: &str) -> Vec<(String, &str)> {
    crate::size::ptx_function_texts(ptx).into_iter().map(|(name, text)| (name.to_string(), text)).collect()
}

/// The PTX functions (and kernels) that still declare a private `.local`
/// frame (`__local_depot`). With shared stacks only the kernel entry (the
/// lane's stack pointer pair) and the overflow handler may.
pub fn ptx_private_frames(ptx: &str) -> Vec<String> {
    ptx_functions(ptx)
        .into_iter()
        .filter(|(_, body)| body.lines().any(|l| l.trim_start().starts_with(".local ") && l.contains("__local_depot")))
        .map(|(name, _)| name)
        .collect()
}

/// The bytes each PTX function carves from its lane's shared stack (the
/// frame `gpu-ld` gave it): the `add.s64 %rd, %rd, -N` that lowers the
/// stack pointer, which the function read from its lane's pair (the
/// linker's pair protocol: it follows the first read of
/// `__gpu_stack_slot`) or was given as its second-to-last parameter (the
/// argument protocol, where the slot is read only on the overflow path).
/// Functions that never read the slot have no moved frame and are not
/// listed.
pub fn ptx_shared_frames(ptx: &str) -> Vec<(String, u64)> {
    let lowered = |l: &str, from: Option<&str>| {
        let rest = l.trim().strip_prefix("add.s64")?;
        let mut operands = rest.trim_end_matches(';').split(',').map(str::trim).skip(1);
        let (base, n) = (operands.next()?, operands.next()?);
        if from.is_some_and(|f| f != base) {
            return None;
        }
        n.strip_prefix('-')?.parse::<u64>().ok()
    };
    ptx_functions(ptx)
        .into_iter()
        .filter_map(|(name, body)| {
            let mut lines = body.lines().skip_while(|l| !l.contains("[__gpu_stack_slot]"));
            lines.next()?;
            if let Some(bytes) = lines.take(4).find_map(|l| lowered(l, None)) {
                return Some((name, bytes));
            }
            // The argument protocol: `ld.param.b64 %rdS, [<sp param>]`, then
            // `add.s64 %rdF, %rdS, -N`.
            let header_end = body.find('{')?;
            let params: Vec<&str> = body[..header_end]
                .lines()
                .filter_map(|l| l.trim().strip_prefix(".param .b64 "))
                .map(|p| p.trim_end_matches(',').trim())
                .filter(|p| !p.contains("func_retval"))
                .collect();
            let sp = params.len().checked_sub(2).map(|i| params[i])?;
            let loaded = body[header_end..].lines().find_map(|l| {
                let rest = l.trim().strip_prefix("ld.param.b64")?;
                let (reg, from) = rest.trim_end_matches(';').split_once(',')?;
                (from.trim() == format!("[{sp}]")).then(|| reg.trim())
            })?;
            let bytes = body[header_end..].lines().find_map(|l| lowered(l, Some(loaded)))?;
            Some((name, bytes))
        })
        .collect()
}

/// The PTX functions that check their depth on the driver's call stack
/// (`stacksave`, which `gpu-ld` adds to every function on a call-graph
/// cycle).
pub fn ptx_depth_checked(ptx: &str) -> Vec<String> {
    ptx_functions(ptx)
        .into_iter()
        .filter(|(_, body)| body.lines().any(|l| l.trim_start().starts_with("stacksave.")))
        .map(|(name, _)| name)
        .collect()
}

/// The PTX functions with a system-scope memory access (`ld`/`st`/`atom`/`red`
/// `.sys`, not fences). With device-scope atomics only the host-call ring's
/// functions may have one.
pub fn ptx_system_scope_accesses(ptx: &str) -> Vec<String> {
    let is_sys_access = |l: &str| {
        let op = l.split_whitespace().next().unwrap_or("");
        ["ld.", "st.", "atom.", "red."].iter().any(|p| op.starts_with(p)) && op.split('.').any(|part| part == "sys")
    };
    ptx_functions(ptx).into_iter().filter(|(_, body)| body.lines().any(is_sys_access)).map(|(name, _)| name).collect()
}

/// The functions of an AMDGPU disassembly (`llvm-objdump -d`), each with
/// the text of its body.
pub fn amd_functions(disasm: &str) -> Vec<(String, &str)> {
    let mut starts: Vec<(String, usize)> = Vec::new();
    let mut offset = 0;
    for line in disasm.split_inclusive('\n') {
        // `0000000000001000 <name>:`
        let t = line.trim_end();
        if let Some((addr, rest)) = t.split_once(" <")
            && addr.chars().all(|c| c.is_ascii_hexdigit())
            && let Some(name) = rest.strip_suffix(">:")
        {
            starts.push((name.to_string(), offset));
        }
        offset += line.len();
    }
    let ends: Vec<usize> = starts.iter().skip(1).map(|s| s.1).chain([disasm.len()]).collect();
    starts.into_iter().zip(ends).map(|((name, from), to)| (name, &disasm[from..to])).collect()
}

/// The addresses through which AMDGPU code reaches symbol `name`: its
/// global-offset-table slots (the `R_AMDGPU_ABS64` relocations of
/// `llvm-readobj -r`: an exported global is reached through one) and its own
/// address (`llvm-readobj --symbols`).
pub fn amd_symbol_addresses(relocs: &str, syms: &str, name: &str) -> Vec<u64> {
    let hex = |w: &str| u64::from_str_radix(w.trim_start_matches("0x"), 16).ok();
    let mut out: Vec<u64> = relocs
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() >= 3 && w[1].starts_with("R_AMDGPU_") && w[2] == name).then(|| hex(w[0])).flatten()
        })
        .collect();
    let mut current = "";
    for line in syms.lines().map(str::trim) {
        if let Some(n) = line.strip_prefix("Name:") {
            current = n.trim().split(" (").next().unwrap_or_default();
        } else if let Some(v) = line.strip_prefix("Value:")
            && current == name
            && let Some(addr) = hex(v.trim())
            && addr != 0
            && !out.contains(&addr)
        {
            out.push(addr);
        }
    }
    out
}

/// The AMDGPU functions that compute one of `addresses` (from
/// [`amd_symbol_addresses`]) the way code reaches a global:
/// `s_getpc_b64 s[a:b]` then `s_add_u32 sa, sa, LO` and `s_addc_u32 sb, sb,
/// HI`, the address being that of the instruction after `s_getpc_b64` plus
/// `HI:LO`. With shared stacks every function with a moved frame reads
/// `__gpu_stack_slot` so; without, only the runtime's own stack code does.
pub fn amd_functions_reaching(disasm: &str, addresses: &[u64]) -> Vec<String> {
    // `\ts_add_u32 s4, s4, 0x25e99c   // 00000000E44C: 8004FF04 0025E99C`
    let parse = |l: &str| -> Option<(String, Vec<String>, u64)> {
        let (code, comment) = l.split_once("//")?;
        let at = u64::from_str_radix(comment.trim().split(':').next()?.trim(), 16).ok()?;
        let mut words = code.split_whitespace();
        let op = words.next()?.to_string();
        let operands = words.collect::<Vec<_>>().join(" ").split(',').map(|o| o.trim().to_string()).collect();
        Some((op, operands, at))
    };
    let number = |o: &str| {
        let o = o.trim_start_matches("lit(").trim_end_matches(')');
        match o.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).ok(),
            None => o.parse::<i64>().ok().map(|n| n as u32 as u64),
        }
    };
    amd_functions(disasm)
        .into_iter()
        .filter(|(_, body)| {
            let lines: Vec<_> = body.lines().filter_map(parse).collect();
            lines.iter().enumerate().any(|(i, (op, regs, at))| {
                if op != "s_getpc_b64" {
                    return false;
                }
                let Some((lo_reg, hi_reg)) = regs[0].strip_prefix("s[").and_then(|r| r.trim_end_matches(']').split_once(':')) else {
                    return false;
                };
                let (lo_reg, hi_reg) = (format!("s{lo_reg}"), format!("s{hi_reg}"));
                let find = |ops: &[&str], reg: &str| {
                    lines[i + 1..].iter().take(4).find(|(o, r, _)| ops.contains(&o.as_str()) && r.len() == 3 && r[0] == reg && r[1] == reg)
                };
                let (Some(lo), Some(hi)) = (find(&["s_add_u32", "s_add_co_u32"], &lo_reg), find(&["s_addc_u32", "s_add_co_ci_u32"], &hi_reg)) else {
                    return false;
                };
                let (Some(lo), Some(hi)) = (number(&lo.1[2]), number(&hi.1[2])) else { return false };
                addresses.contains(&(at + 4).wrapping_add(lo | (hi << 32)))
            })
        })
        .map(|(name, _)| name)
        .collect()
}

/// The AMDGPU functions with system-scope cache maintenance: what LLVM emits
/// for system-scope acquires and releases on gfx90a (`buffer_invl2`,
/// `buffer_wbl2`) and gfx942 (the same with both `sc0` and `sc1`; agent
/// scope sets only `sc1`). With device-scope atomics only the host-call
/// ring's functions may have it.
pub fn amd_system_scope_functions(disasm: &str) -> Vec<String> {
    let is_system = |l: &str| {
        let code = l.split("//").next().unwrap_or("");
        let mut words = code.split_whitespace().skip_while(|w| !w.starts_with("buffer_"));
        let Some(op) = words.next() else { return false };
        let rest: Vec<&str> = words.collect();
        let both_sc = rest.contains(&"sc0") && rest.contains(&"sc1");
        match op {
            "buffer_wbl2" | "buffer_invl2" => rest.is_empty() || both_sc,
            "buffer_inv" => both_sc,
            _ => false,
        }
    };
    amd_functions(disasm).into_iter().filter(|(_, body)| body.lines().any(is_system)).map(|(name, _)| name).collect()
}

/// The whole-wave call `gpu-ld` links into AMD code objects for
/// `gpu_lanes::for_each_lane` (`gpu-ld/src/amd_lanes.rs`), checked
/// in the disassembly: it turns every lane of a `wave`-lane wavefront on
/// (`s_or_saveexec_b64 .., -1`, `_b32` on wave32) after reading its
/// arguments and before giving each lane its lane id (`v_mbcnt_lo`, and
/// `_hi` on wave64) and work-item id (`v31`), calls the lane function
/// (`s_swappc_b64`), and restores the caller's `EXEC` after the call and
/// before returning. The problems found, empty when it is all there.
pub fn amd_whole_wave_call_problems(disasm: &str, wave: u32) -> Vec<String> {
    let name = "__gpu_amd_whole_wave_call";
    let functions = amd_functions(disasm);
    let Some((_, body)) = functions.iter().find(|(n, _)| n == name) else {
        return vec![format!("no `{name}` in the code object: gpu_lanes runs lane 0 only")];
    };
    let ops: Vec<String> = body
        .lines()
        .map(|l| l.split("//").next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty() && !l.ends_with(">:"))
        .collect();
    let find = |pred: &dyn Fn(&str) -> bool| ops.iter().position(|l| pred(l));
    let (b, exec) = if wave == 64 { ("b64", "exec,") } else { ("b32", "exec_lo,") };
    let mut p = Vec::new();
    let read_args = find(&|l| l.starts_with("v_readfirstlane_b32") && l.ends_with(", v1"));
    let on = find(&|l| l.starts_with(&format!("s_or_saveexec_{b} ")) && l.ends_with(", -1"));
    let lane_lo = find(&|l| l.starts_with("v_mbcnt_lo_u32_b32"));
    let lane_hi = find(&|l| l.starts_with("v_mbcnt_hi_u32_b32"));
    let item = find(&|l| (l.starts_with("v_add_u32") || l.starts_with("v_add_nc_u32")) && l.contains(" v31,"));
    let call = find(&|l| l.starts_with("s_swappc_b64 s[30:31]"));
    let off = ops.iter().rposition(|l| l.starts_with(&format!("s_mov_{b} {exec}")));
    let ret = ops.iter().rposition(|l| l.starts_with("s_setpc_b64 s[30:31]"));
    let (Some(on), Some(call), Some(off), Some(ret)) = (on, call, off, ret) else {
        return vec![format!(
            "`{name}` lacks the {wave}-lane EXEC handling (all lanes on: {on:?}, call: {call:?}, EXEC restored: {off:?}, return: {ret:?})"
        )];
    };
    if !read_args.is_some_and(|r| r < on) {
        p.push(format!("`{name}` does not read its arguments before turning every lane on"));
    }
    if !lane_lo.is_some_and(|l| on < l && l < call) {
        p.push(format!("`{name}` gives no lane its id (v_mbcnt_lo) between turning the lanes on and the call"));
    }
    if wave == 64 && !lane_hi.is_some_and(|l| on < l && l < call) {
        p.push(format!("`{name}` lacks v_mbcnt_hi on wave64"));
    }
    if wave == 32 && lane_hi.is_some() {
        p.push(format!("`{name}` has v_mbcnt_hi on wave32"));
    }
    if !item.is_some_and(|i| on < i && i < call) {
        p.push(format!("`{name}` gives no lane its work-item id (v31) before the call"));
    }
    if !(call < off && off < ret) {
        p.push(format!("`{name}` does not restore EXEC after the call and before returning"));
    }
    if ops[off + 1..ret].iter().any(|l| l.starts_with("s_or_saveexec") || l.starts_with("s_swappc")) {
        p.push(format!("`{name}` changes EXEC or calls again after restoring it"));
    }
    p
}

/// The addresses of the AMDGPU functions of `disasm` (`llvm-objdump -d`).
pub fn amd_function_addresses(disasm: &str) -> Vec<(String, u64)> {
    disasm
        .lines()
        .filter_map(|l| {
            let (addr, rest) = l.trim_end().split_once(" <")?;
            let name = rest.strip_suffix(">:")?;
            Some((name.to_string(), u64::from_str_radix(addr, 16).ok()?))
        })
        .collect()
}

/// The functions of `disasm` that take the address of `target` (an
/// address) pc-relatively, as a call to a function of the same code object
/// does: `s_getpc_b64 s[N:N+1]` then `s_add_u32 sN, sN, OFFSET`, whose sum,
/// the `s_add_u32`'s address plus `OFFSET`, is `target`. (Linked code
/// objects keep no relocations for these, so the disassembly shows numbers.)
pub fn amd_functions_referencing(disasm: &str, target: u64) -> Vec<String> {
    // `\ts_add_u32 s4, s4, 0x115a74   // 0000000A1B5C: 8004FF04 00115A74`
    let address = |l: &str| l.split("//").nth(1)?.trim().split(':').next().and_then(|a| u64::from_str_radix(a, 16).ok());
    amd_functions(disasm)
        .into_iter()
        .filter(|(_, body)| {
            let lines: Vec<&str> = body.lines().collect();
            lines.windows(2).any(|w| {
                let code = |l: &str| l.split("//").next().unwrap_or("").trim().to_string();
                let (getpc, add) = (code(w[0]), code(w[1]));
                let Some(reg) = getpc.strip_prefix("s_getpc_b64 s[").and_then(|r| r.split(':').next()) else { return false };
                let Some(offset) = add.strip_prefix(&format!("s_add_u32 s{reg}, s{reg}, ")) else { return false };
                let offset = offset.trim();
                let value = match offset.strip_prefix("0x") {
                    Some(h) => u32::from_str_radix(h, 16).ok(),
                    None => offset.parse::<i64>().ok().map(|v| v as u32),
                };
                match (value, address(w[1])) {
                    (Some(v), Some(at)) => at.wrapping_add(v as i32 as i64 as u64) == target,
                    _ => false,
                }
            })
        })
        .map(|(name, _)| name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_highest_register_of_each_file() {
        let dis = "\n_RNvCs1v2s3_4main:\n\tv_mov_b32_e32 v5, s101 // 000000000000: 7E0A0265 <foo_v99>\n\
                   \tglobal_load_dwordx4 v[72:75], v[0:1], off\n\tv_accvgpr_write_b32 a63, v1\n\
                   \ts_mov_b64 exec, vcc\n\ts_load_dwordx2 s[4:5], s[0:1], 0x0\n\ts_nop 4\n";
        assert_eq!(registers_named(dis), Registers { vgpr: Some(75), agpr: Some(63), sgpr: Some(101) });
        assert_eq!(registers_named("\ts_endpgm\n"), Registers::default());
        let r = Registers { vgpr: Some(75), agpr: None, sgpr: Some(101) };
        assert_eq!(Registers::from_line(&r.to_line()), Some(r));
    }

    #[test]
    fn finds_functions_with_private_frames() {
        let ptx = ".visible .entry __gpu_start(
.param .u64 p
)
{
	.local .align 8 .b8 \t__local_depot0[2080];
}
                   .func (.param .b64 func_retval0) f(
)
{
	.reg .b64 %rd<3>;
}
                   .func g(
)
{
	.local .align 4 .b8 \t__local_depot2[16];
}
";
        assert_eq!(ptx_private_frames(ptx), vec!["__gpu_start".to_string(), "g".to_string()]);
    }

    #[test]
    fn reads_the_frames_carved_from_the_shared_stack() {
        let ptx = ".func a(\n)\n{\n\tld.global.b64 \t%rd1, [__gpu_stack_slot];\n\tld.b64 \t%rd2, [%rd1];\n\
                   \tld.b64 \t%rd3, [%rd1+8];\n\tadd.s64 \t%rd4, %rd2, -10384;\n}\n\
                   .func b(\n)\n{\n\tadd.s64 \t%rd4, %rd2, -16;\n}\n";
        assert_eq!(ptx_shared_frames(ptx), vec![("a".to_string(), 10384)]);
        // The argument protocol: the stack pointer is the second-to-last
        // parameter (the limit the last); the slot is read on the overflow
        // path. d reads no slot: no moved frame, whatever its arithmetic.
        let ptx = ".func (.param .b64 func_retval0) c(\n\t.param .b64 $p0,\n\t.param .b64 $p1,\n\t.param .b64 $p2\n)\n{\n\
                   \tld.param.b64 \t%rd1, [$p0];\n\tld.param.b64 \t%rd2, [$p1];\n\tadd.s64 \t%rd3, %rd1, -8;\n\
                   \tadd.s64 \t%rd4, %rd2, -48;\n\tand.b64 \t%rd5, %rd4, -16;\n\tret;\n\
                   $L__BB0_1:\n\tld.global.b64 \t%rd6, [__gpu_stack_slot];\n\tst.b64 \t[%rd6], %rd2;\n}\n\
                   .func d(\n\t.param .b64 $p0,\n\t.param .b64 $p1,\n\t.param .b64 $p2\n)\n{\n\tld.param.b64 \t%rd1, [$p1];\n\tadd.s64 \t%rd2, %rd1, -8;\n}\n";
        assert_eq!(ptx_shared_frames(ptx), vec![("c".to_string(), 48)]);
    }

    #[test]
    fn finds_functions_with_system_scope_accesses() {
        let ptx = ".extern .func (.param .b32 r) memcmp;\n.func a(\n)\n{\n\tfence.acq_rel.sys;\n\tld.relaxed.gpu.b64 %rd1, [x];\n}\n\
                   .func b(\n)\n{\n\tatom.relaxed.sys.global.add.u64 %rd1, [x], 1;\n}\n\
                   .func c(\n)\n{\n\tst.relaxed.sys.b32 [x], 1;\n}\n";
        assert_eq!(ptx_system_scope_accesses(ptx), vec!["b".to_string(), "c".to_string()]);
    }

    #[test]
    fn finds_amd_functions_with_system_scope_cache_maintenance() {
        let d = "hello.elf:\tfile format elf64-amdgpu\n\nDisassembly of section .text:\n\n\
                 0000000000001000 <a>:\n\ts_waitcnt vmcnt(0)                                         // 000000001000: BF8C0F70\n\
                 \tbuffer_wbl2                                                // 000000001004: E0A00000 00000000\n\n\
                 0000000000001100 <b>:\n\tbuffer_wbinvl1_vol\n\tbuffer_wbl2 sc1\n\tbuffer_inv sc1\n\n\
                 0000000000001200 <c>:\n\tbuffer_inv sc0 sc1\n";
        assert_eq!(amd_functions(d).iter().map(|f| f.0.as_str()).collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(amd_system_scope_functions(d), vec!["a".to_string(), "c".to_string()]);
    }

    /// As gfx90a code reaches `__gpu_stack_slot` through its GOT slot
    /// (literal command's cdylib-threads, gpu-ld's shared stacks).
    #[test]
    fn finds_amd_functions_reaching_a_global() {
        let relocs = "Relocations [\n  Section (7) .rela.dyn {\n    0x26CDE8 R_AMDGPU_ABS64 __gpu_stack_slot 0x0\n    \
                      0x26CDF0 R_AMDGPU_ABS64 other 0x0\n  }\n]\n";
        let syms = "Symbol {\n  Name: __gpu_stack_slot (1)\n  Value: 0x26F000\n}\nSymbol {\n  Name: x (9)\n  Value: 0x10\n}\n";
        let addrs = amd_symbol_addresses(relocs, syms, "__gpu_stack_slot");
        assert_eq!(addrs, [0x26CDE8, 0x26F000]);
        let d = "0000000000e440 <a>:\n\
                 \ts_getpc_b64 s[4:5]                                         // 00000000E448: BE841C00\n\
                 \ts_add_u32 s4, s4, 0x25e99c                                 // 00000000E44C: 8004FF04 0025E99C\n\
                 \ts_addc_u32 s5, s5, lit(0x0)                                // 00000000E454: 8205FF05 00000000\n\
                 \ts_load_dwordx2 s[4:5], s[4:5], 0x0                         // 00000000E45C: C0060102 00000000\n\n\
                 0000000000e6e0 <b>:\n\
                 \ts_getpc_b64 s[4:5]                                         // 00000000E6E8: BE841C00\n\
                 \ts_add_u32 s4, s4, 0x25f9ac                                 // 00000000E6EC: 8004FF04 0025F9AC\n\
                 \ts_addc_u32 s5, s5, lit(0x0)                                // 00000000E6F4: 8205FF05 00000000\n\n\
                 0000000000e700 <c>:\n\
                 \ts_getpc_b64 s[6:7]                                         // 00000000E708: BE861C00\n\
                 \ts_add_u32 s6, s6, 0x2608f4                                 // 00000000E70C: 8006FF06 002608F4\n\
                 \ts_addc_u32 s7, s7, 0                                       // 00000000E714: 8207FF07 00000000\n";
        // a: 0xE44C + 0x25E99C = 0x26CDE8 (the GOT slot); b: elsewhere;
        // c: 0xE70C + 0x2608F4 = 0x26F000 (the symbol itself).
        assert_eq!(amd_functions_reaching(d, &addrs), ["a", "c"]);
    }

    #[test]
    fn amd_symbols_null_entry_is_not_undefined_but_a_real_one_is() {
        let syms = "Symbol {\n  Name:  (0)\n  Section: Undefined (0x0)\n}\nSymbol {\n  Name: __gpu_start.kd (13)\n  Section: .rodata\n}\nSymbol {\n  Name: memcmp (40)\n  Section: Undefined (0x0)\n}\n";
        let notes = "amdhsa.kernels:\n  - .args:\n      - .address_space:  generic\n        .offset:         0\n        .size:           8\n        .value_kind:     global_buffer\n    .wavefront_size: 64\namdhsa.target:   amdgcn-amd-amdhsa--gfx90a\n";
        let mut r = CodeObjectReport::default();
        inspect_amd(syms, notes, "  s_sleep 1\n", &mut r);
        assert!(r.kernel_entry && r.sleeps);
        assert_eq!(r.undefined, vec!["memcmp".to_string()]);
        let problems = r.problems(&Arch::parse("gfx90a").unwrap());
        assert_eq!(problems, vec!["undefined symbols: memcmp".to_string()]);
    }

    /// The kernel's arguments as gfx90a's lanes program's metadata lists them
    /// (code object v5): one pointer the launcher passes, then hidden ones
    /// the HIP runtime fills (264 bytes of kernarg segment in all).
    #[test]
    fn amd_kernel_arguments_are_one_pointer_and_hidden_ones() {
        let notes = "amdhsa.kernels:\n  - .agpr_count:     64\n    .args:\n      - .address_space:  generic\n        .offset:         0\n        .size:           8\n        .value_kind:     global_buffer\n      - .offset:         8\n        .size:           4\n        .value_kind:     hidden_block_count_x\n      - .offset:         208\n        .size:           8\n        .value_kind:     hidden_queue_ptr\n    .group_segment_fixed_size: 0\n    .kernarg_segment_size: 264\n    .wavefront_size: 64\namdhsa.target:   amdgcn-amd-amdhsa--gfx90a\n";
        let args = kernel_args(notes);
        let kinds: Vec<&str> = args.iter().map(|a| a.kind.as_str()).collect();
        assert_eq!(kinds, ["global_buffer", "hidden_block_count_x", "hidden_queue_ptr"]);
        assert_eq!((args[2].offset, args[2].size), (208, 8));
        let mut r = CodeObjectReport {
            kernel_entry: true,
            sleeps: true,
            wavefront_size: Some(64),
            target: Some("amdgcn-amd-amdhsa--gfx90a".into()),
            kernel_args: Some(args.clone()),
            ..Default::default()
        };
        let gfx90a = Arch::parse("gfx90a").unwrap();
        assert!(r.problems(&gfx90a).is_empty());
        // A second explicit argument (a kernel signature the launcher does
        // not fill) is a problem.
        r.kernel_args.as_mut().unwrap().insert(1, KernelArg { offset: 8, size: 4, kind: "by_value".into() });
        assert!(r.problems(&gfx90a)[0].contains("explicit arguments"), "{:?}", r.problems(&gfx90a));
        // A hidden kind older HIP runtimes do not know.
        let mut args = args;
        args.push(KernelArg { offset: 128, size: 4, kind: "hidden_dynamic_lds_size".into() });
        r.kernel_args = Some(args);
        assert_eq!(
            r.problems(&gfx90a),
            ["hidden kernel arguments the HIP runtime may not know (it would refuse the kernel): \
              hidden_dynamic_lds_size"]
        );
    }

    #[test]
    fn amd_kernel_registers_must_cover_what_the_code_names() {
        let notes = "amdhsa.kernels:\n  - .agpr_count:     64\n    .sgpr_count:     108\n    .vgpr_count:     140\n    .wavefront_size: 64\n";
        let ok = "f:\n\tv_mov_b32_e32 v75, s101 // 0000: 00\n\tv_accvgpr_write_b32 a63, v1\n";
        let mut r = CodeObjectReport::default();
        inspect_amd("", notes, ok, &mut r);
        let gfx90a = Arch::parse("gfx90a").unwrap();
        let registers = |r: &CodeObjectReport| r.problems(&gfx90a).into_iter().filter(|p| p.contains("the kernel is given")).count();
        assert_eq!(r.kernel_registers.map(|(k, _)| (k.vgprs, k.agprs, k.sgprs)), Some((140, 64, 108)));
        assert_eq!(registers(&r), 0, "{:?}", r.problems(&gfx90a));
        // v76 needs 80 arch VGPRs + 64 AGPRs = 144 > 140.
        inspect_amd("", notes, &ok.replace("v75", "v76"), &mut r);
        assert_eq!(registers(&r), 1);
        inspect_amd("", notes, &ok.replace("s101", "s108"), &mut r);
        assert_eq!(registers(&r), 1);
    }

    #[test]
    fn ptx_extern_functions_are_undefined() {
        let ptx = ".version 7.8\n.target sm_90\n.extern .func (.param .b32 r) memcmp\n.visible .entry __gpu_start(\n\tnanosleep.u32 %r1;\n";
        let mut r = CodeObjectReport::default();
        inspect_ptx(ptx, &mut r);
        assert!(r.kernel_entry && r.sleeps);
        assert_eq!(r.undefined, vec!["memcmp".to_string()]);
        assert!(r.problems(&Arch::parse("sm_90").unwrap()).iter().any(|p| p.contains("memcmp")));
    }

    #[test]
    fn finds_the_whole_wave_call_and_its_exec_handling() {
        let f = |body: &str| format!("d.elf:\tfile format elf64-amdgpu\n\n0000000000001000 <__gpu_amd_whole_wave_call>:\n{body}\n0000000000001100 <next>:\n\ts_endpgm\n");
        let good = "\ts_waitcnt vmcnt(0)\n\tv_readfirstlane_b32 s16, v0\n\tv_readfirstlane_b32 s17, v1\n\ts_or_saveexec_b64 s[22:23], -1 // 0: BE\n\
                    \tv_mbcnt_lo_u32_b32 v2, -1, 0\n\tv_mbcnt_hi_u32_b32 v2, -1, v2\n\tv_add_u32_e32 v31, s20, v2\n\ts_swappc_b64 s[30:31], s[16:17]\n\
                    \ts_mov_b64 exec, s[16:17]\n\ts_setpc_b64 s[30:31]\n";
        assert_eq!(amd_whole_wave_call_problems(&f(good), 64), Vec::<String>::new());
        // Without the EXEC change, or with EXEC never restored: a problem.
        let no_on = good.replace("\ts_or_saveexec_b64 s[22:23], -1 // 0: BE\n", "");
        assert!(amd_whole_wave_call_problems(&f(&no_on), 64)[0].contains("EXEC handling"));
        let no_off = good.replace("\ts_mov_b64 exec, s[16:17]\n", "");
        assert!(amd_whole_wave_call_problems(&f(&no_off), 64)[0].contains("EXEC handling"));
        // wave64 code checked as wave32 (the EXEC width differs).
        assert!(!amd_whole_wave_call_problems(&f(good), 32).is_empty());
        assert!(amd_whole_wave_call_problems("", 64)[0].contains("lane 0 only"));
    }

    #[test]
    fn finds_pc_relative_references() {
        let d = "0000000000001000 <a>:\n\ts_getpc_b64 s[4:5]                 // 000000001000: BE841C00\n\
                 \ts_add_u32 s4, s4, 0x1fc                 // 000000001004: 8004FF04 000001FC\n\
                 \ts_addc_u32 s5, s5, 0\n\ts_swappc_b64 s[30:31], s[4:5]\n\
                 0000000000001200 <b>:\n\ts_getpc_b64 s[16:17]   // 000000001200: BE901C00\n\
                 \ts_add_u32 s16, s16, 0xffffff00   // 000000001204: 8010FF10 FFFFFF00\n\ts_endpgm\n";
        assert_eq!(amd_function_addresses(d), vec![("a".to_string(), 0x1000), ("b".to_string(), 0x1200)]);
        assert_eq!(amd_functions_referencing(d, 0x1200), vec!["a".to_string()]);
        assert_eq!(amd_functions_referencing(d, 0x1104), vec!["b".to_string()]);
        assert!(amd_functions_referencing(d, 0x1000).is_empty());
    }
}
