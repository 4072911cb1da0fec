//! `gpu-ld`: the GPU linker for rustc's `llbc` linker flavor, for nvptx64
//! and amdgcn.
//!
//! rustc hands the link to "the bitcode linker" with `--export-symbol NAME`,
//! bitcode `.o` files, `.rlib` archives of bitcode, `--target`,
//! `--target-cpu`, `-O<n>` and `-o OUT`. The rustup component that does this
//! (`llvm-bitcode-linker`) cannot be had here and links nvptx only, so this
//! is our own, made of llvm-tools: unpack the archives, `llvm-link` all
//! bitcode, `opt` (internalize everything but the exports and the kernel
//! entry, then optimize; on amdgcn, AMD's attributor last, over the whole
//! program as a closed world: [`amd_marks`]), rewrites of the optimized IR
//! ([`shared_stack`]: frames in global memory; [`device_scope`]: atomics at
//! device scope; [`call_stack`]: recursion checks its depth; on nvptx
//! [`rmw_order`]: fences that LLVM 22 leaves out of ordered
//! read-modify-writes, and [`block_shared`]: the runtime's launch-wide
//! constants in shared memory), then
//! - nvptx64: `llc` to PTX, one part per core ([`split`]), PTX repairs and
//!   shorter local names ([`ptx_fixup`]), and the text written shorter for
//!   the same machine code (`gpu_toolchain::ptx_compact`);
//! - amdgcn: shorter local names ([`ir_names`]), the attributor's marks
//!   kept true for the calls the rewrites added ([`amd_marks`]), `llc` (in
//!   cached parts where the module is large: [`amd_parts`]) to an object and
//!   `rust-lld -flavor gnu -shared` to the code object (an ELF shared
//!   object, as the HIP runtime loads).
//!
//! It also takes the command line rustc gives a `gnu-lld` linker, which is
//! what rustc's built-in `amdgcn-amd-amdhsa` target uses: with
//! `-Clinker=gpu-ld -Clinker-plugin-lto`, rustc runs the fat LTO that target
//! requires and hands over the one merged module as bitcode, with the
//! exports in a `--version-script`, the CPU and LTO level as
//! `-plugin-opt=mcpu=gfx90a` / `-plugin-opt=O2`, and ld's flags (`-shared`,
//! `-z noexecstack`, `--gc-sections`, `-O1`, ...), which mean nothing here.
//! No `--target` comes then: a `gfx` CPU means amdgcn. The same rewrites
//! run, so that target gets shared stacks and device-scope atomics too.
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use gpu_toolchain::compile::AMD_ARG_ALLOCA_COST;
use rt_abi::symbols::KERNEL_ENTRY;

pub mod amd_lanes;
pub mod amd_marks;
pub mod amd_parts;
mod ar;
pub mod block_shared;
pub mod call_stack;
mod error;
pub mod debug_locations;
pub use error::LinkError;
pub mod device_scope;
pub mod int128_float;
pub mod ir_names;
mod ir_text;
pub mod lanes_wanted;
pub mod ptx_fixup;
pub mod rmw_order;
pub mod shared_stack;
pub mod split;
pub mod unwind;
pub mod v0_names;

/// Symbols kept even when rustc names none (it passes no exports for
/// executables): the runtime's kernel entry, the shadow-stack slot and
/// overflow handlers that [`shared_stack`] and [`call_stack`] refer to
/// after optimization, and
/// the thread table's copy and the warps' private state that
/// [`block_shared`] finds by name (internal, `opt` would split or rename
/// them).
pub const ALWAYS_EXPORTED: &[&str] = &[
    KERNEL_ENTRY,
    shared_stack::SLOT_SYMBOL,
    shared_stack::OVERFLOW_SYMBOL,
    rt_abi::symbols::CALL_STACK_OVERFLOW,
    block_shared::THREAD_TABLE_SYMBOL,
    block_shared::WARP_PRIVATE_SYMBOL,
];

/// The largest stack frame (bytes) of a function the whole-program `opt` may
/// inline into its callers; `GPU_INLINE_MAX_STACK=N` changes it. Frames live
/// in global memory here ([`shared_stack`]), and a big callee's frame inlined
/// into a caller is paid on every path through the caller: regex-automata's
/// `meta::strategy::new` took 11 KB of configuration structs that way, and
/// was the slowest function for ptxas in real-crates. At 1024 that part
/// compiled in 10.1 s instead of 13.9 s, and all 16 parts in 107 s of CPU
/// instead of 128 (ptxas 13.0 on 2 cores); the benchmark rows did not move
/// (see the commit that set it).
pub const INLINE_MAX_STACK: u64 = 1024;

/// Default cap on the kernel's registers per lane. Uncapped, the runtime's
/// kernel takes 255 on sm_90, so an H100 holds 8 thread warps per SM; at 64
/// it holds 32 per SM (4,224 threads) and single-thread code was measured
/// 3-5 % slower (scripts/gpu-spawn-profile.sh). `--max-registers N` (a
/// `-C link-arg`) or `GPU_NVPTX_MAX_REGISTERS=N` changes it; 0 = no cap.
pub const DEFAULT_MAX_REGISTERS: u32 = 64;

/// nvptx: the PTX ISA `llc` writes for sm_90 and sm_90a (`-mattr=+ptx86`):
/// 8.6 is the first with one-sided fences, `fence.release` and
/// `fence.acquire` (sm_90). At 7.8, LLVM's default for sm_90, every release
/// or acquire fence is a `fence.acq_rel`: a `MEMBAR.GPU` that waits for the
/// thread's writes *and* empties the SM's L1. A release fence then costs
/// 181 ns instead of 335 on an H100, and an acquire fence has no wait of
/// its own (bench-results/floors/2026-11-25-…-release-costs.txt); every
/// unlock, `Arc` drop and handoff has one. The PTX needs a driver of CUDA
/// 12.7 or newer (`gpurun run` says so on an older one);
/// `GPU_NVPTX_PTX_ISA=NN` (e.g. 78) builds for an older ISA, where the
/// fences go back to `fence.acq_rel`. Older GPUs (sm_80, ...) have no
/// one-sided fences, and LLVM's default for newer ones (sm_100: 8.6, sm_120:
/// 8.7) has them already: both keep LLVM's default ISA.
pub const SPLIT_FENCES_PTX_ISA: u32 = 86;

/// The PTX ISA `llc` is asked for when `cpu` is the target (`sm_90`):
/// [`SPLIT_FENCES_PTX_ISA`] for sm_90 and sm_90a, else none (LLVM's default).
pub fn default_ptx_isa(cpu: &str) -> Option<u32> {
    matches!(cpu, "sm_90" | "sm_90a").then_some(SPLIT_FENCES_PTX_ISA)
}

/// `llc`'s arguments for PTX besides the CPU, level and files: the wide
/// float conversions ([`int128_float::LLC_NVPTX_ARGS`]) and the PTX ISA,
/// `GPU_NVPTX_PTX_ISA` if set, else [`default_ptx_isa`].
pub(crate) fn nvptx_llc_args(cpu: &str) -> Result<Vec<String>, LinkError> {
    let mut args: Vec<String> = int128_float::LLC_NVPTX_ARGS.iter().map(|a| a.to_string()).collect();
    if let Some(n) = env_number::<u32>("GPU_NVPTX_PTX_ISA")?.or_else(|| default_ptx_isa(cpu)) {
        args.push(format!("-mattr=+ptx{n}"));
    }
    Ok(args)
}

/// What the link is for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Target {
    /// `nvptx64-nvidia-cuda`: PTX out.
    #[default]
    Nvptx,
    /// `amdgcn-amd-amdhsa`: an AMDGPU code object (ELF) out.
    Amdgcn,
}

impl Target {
    /// The calling-convention keyword of kernels in LLVM IR.
    pub fn kernel_keyword(self) -> &'static str {
        match self {
            Target::Nvptx => " ptx_kernel ",
            Target::Amdgcn => " amdgpu_kernel ",
        }
    }
    /// The address space of `alloca`s (the data layout's `A`), if not 0.
    pub fn alloca_space(self) -> Option<&'static str> {
        match self {
            Target::Nvptx => None,
            Target::Amdgcn => Some("5"),
        }
    }
    /// LLVM's name for the scope of all threads of one GPU.
    pub fn device_scope(self) -> &'static str {
        match self {
            Target::Nvptx => "device",
            Target::Amdgcn => "agent",
        }
    }
    /// The CPU when rustc names none.
    fn default_cpu(self) -> &'static str {
        match self {
            Target::Nvptx => "sm_70",
            Target::Amdgcn => "gfx90a",
        }
    }
}

/// A parsed linker command line.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct LinkArgs {
    pub target: Target,
    pub inputs: Vec<PathBuf>,
    pub exports: Vec<String>,
    pub output: Option<PathBuf>,
    pub target_cpu: Option<String>,
    pub opt_level: Option<String>,
    /// `--max-registers N`: the nvptx kernel's register cap (0 = none).
    pub max_registers: Option<u32>,
    /// `--inline-threshold=N`: LLVM's inliner threshold for the whole-program
    /// optimization (before the target's multiplier); also
    /// `GPU_INLINE_THRESHOLD=N`. None: LLVM's default for the level.
    pub inline_threshold: Option<u32>,
    /// `--private-stacks`: keep stack frames in private memory (see
    /// [`shared_stack`]); also `GPU_PRIVATE_STACKS=1`.
    pub private_stacks: bool,
    /// `--system-scope`: leave std's atomics at system scope (see
    /// [`device_scope`]); also `GPU_SYSTEM_SCOPE=1`.
    pub system_scope: bool,
    /// `--version-script FILE` (gnu-lld flavor): its `global:` symbols are
    /// exports, read when linking ([`version_script_globals`]).
    pub version_scripts: Vec<PathBuf>,
    /// Flags we do not use, reported with `GPU_LD_VERBOSE=1`.
    pub ignored: Vec<String>,
}

pub fn parse_args(args: &[OsString]) -> Result<LinkArgs, LinkError> {
    let mut out = LinkArgs::default();
    let mut target_given = false;
    // gnu-lld flavor: `-plugin-opt=O<n>` is the LTO level; `-O<n>` is then
    // ld's own (rustc always passes `-O1`) and does not count.
    let (mut lto_level, mut ld_level) = (None, None);
    let mut it = args.iter().map(|a| a.to_string_lossy().into_owned());
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| it.next().ok_or_else(|| LinkError::Usage(format!("{flag} needs a value")));
        match arg.as_str() {
            // gnu-lld flavor, flags with a separate value we do not use.
            "-z" | "-flavor" | "-m" | "-soname" => {
                let v = value(&arg)?;
                out.ignored.push(format!("{arg} {v}"));
            }
            "--version-script" => out.version_scripts.push(PathBuf::from(value("--version-script")?)),
            a if a.starts_with("--version-script=") => out.version_scripts.push(PathBuf::from(&a["--version-script=".len()..])),
            a if a.starts_with("-plugin-opt=") || a.starts_with("--plugin-opt=") => {
                let opt = a.split_once('=').map_or("", |(_, o)| o);
                if let Some(cpu) = opt.strip_prefix("mcpu=") {
                    out.target_cpu = Some(cpu.to_string());
                } else if let Some(n) = opt.strip_prefix('O').filter(|n| n.len() == 1) {
                    lto_level = Some(n.to_string());
                } else {
                    out.ignored.push(a.to_string());
                }
            }
            "-o" => out.output = Some(PathBuf::from(value("-o")?)),
            "--export-symbol" => out.exports.push(value("--export-symbol")?),
            "--target-cpu" => out.target_cpu = Some(value("--target-cpu")?),
            a if a.starts_with("--max-registers=") => {
                let n = &a["--max-registers=".len()..];
                out.max_registers = Some(n.parse().map_err(|_| LinkError::Usage(format!("--max-registers needs a number, not `{n}`")))?);
            }
            a if a.starts_with("--inline-threshold=") => {
                let n = &a["--inline-threshold=".len()..];
                out.inline_threshold = Some(n.parse().map_err(|_| LinkError::Usage(format!("--inline-threshold needs a number, not `{n}`")))?);
            }
            "--private-stacks" => out.private_stacks = true,
            "--system-scope" => out.system_scope = true,
            // Library search paths: every input comes as a full path.
            "-L" => {
                value("-L")?;
            }
            "--target" => {
                target_given = true;
                let t = value("--target")?;
                out.target = if t.starts_with("nvptx64") {
                    Target::Nvptx
                } else if t.starts_with("amdgcn") {
                    Target::Amdgcn
                } else {
                    return Err(LinkError::Usage(format!("this linker links nvptx64 and amdgcn only, not {t}")));
                };
            }
            a if a.starts_with("-O") && a.len() == 3 => ld_level = Some(a[2..].to_string()),
            a if a.starts_with('-') => out.ignored.push(a.to_string()),
            a => out.inputs.push(PathBuf::from(a)),
        }
    }
    out.opt_level = lto_level.or(ld_level);
    // gnu-lld flavor: no `--target`; amdgcn CPUs are `gfx...`.
    if !target_given && out.target_cpu.as_deref().is_some_and(|c| c.starts_with("gfx")) {
        out.target = Target::Amdgcn;
    }
    if out.output.is_none() {
        return Err(LinkError::Usage("no output file (-o) given".into()));
    }
    Ok(out)
}

/// The symbols a linker version script makes global: those listed under
/// `global:` (rustc writes `{ global: a; b; local: *; };`).
pub fn version_script_globals(script: &str) -> Vec<String> {
    let mut globals = Vec::new();
    let mut in_global = false;
    for item in script.split(|c| c == ';' || c == '{' || c == '}') {
        let mut item = item.trim();
        // A scope label opens its list: `global: a` or `local: *`.
        if let Some((label, rest)) = item.split_once(':') {
            in_global = label.trim() == "global";
            item = rest.trim();
        }
        if in_global && !item.is_empty() && !item.contains('*') {
            globals.push(item.trim_matches('"').to_string());
        }
    }
    globals
}

/// Entry point of the `gpu-ld` binary; returns the exit code.
pub fn main_with_args(args: Vec<OsString>) -> i32 {
    match parse_args(&args).and_then(|a| link(&a)) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("gpu-ld: error: {e}");
            e.exit_code()
        }
    }
}

/// Where llvm-tools are: `$GPU_TOOLCHAIN` (set by `gpurun build`), else the
/// sysroot of the `rustc` on PATH.
fn llvm_bin() -> Result<PathBuf, LinkError> {
    if let Some(tc) = std::env::var_os("GPU_TOOLCHAIN") {
        if let Some(bin) = gpu_toolchain::setup::llvm_bin(Path::new(&tc)) {
            return Ok(bin);
        }
    }
    let out = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .map_err(|source| LinkError::Spawn { tool: "rustc".into(), source })?;
    let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    gpu_toolchain::setup::llvm_bin(&sysroot).ok_or(LinkError::NoLlvmTools { sysroot })
}

fn run(tool: &Path, args: &[OsString]) -> Result<(), LinkError> {
    let verbose = std::env::var_os("GPU_LD_VERBOSE").is_some();
    if verbose {
        eprintln!("gpu-ld: {} {}", tool.display(), args.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" "));
    }
    let started = std::time::Instant::now();
    let out = Command::new(tool).args(args).output().map_err(|source| LinkError::Spawn { tool: tool.into(), source })?;
    if verbose {
        let name = tool.file_name().unwrap_or_default().to_string_lossy();
        eprintln!("gpu-ld: {name} took {:.1} s", started.elapsed().as_secs_f64());
    }
    if !out.status.success() {
        return Err(LinkError::Tool { tool: tool.into(), stderr: String::from_utf8_lossy(&out.stderr).into_owned() });
    }
    Ok(())
}

/// Whether any of `modules` names `symbol` (bitcode keeps symbol names as
/// plain bytes in its string table).
fn modules_mention(modules: &[PathBuf], symbol: &str) -> Result<bool, LinkError> {
    for m in modules {
        let bytes = fs::read(m).map_err(LinkError::io("read", m))?;
        if bytes.windows(symbol.len()).any(|w| w == symbol.as_bytes()) {
            return Ok(true);
        }
    }
    Ok(false)
}

fn is_bitcode(bytes: &[u8]) -> bool {
    bytes.starts_with(b"BC\xC0\xDE") || bytes.starts_with(&[0xDE, 0xC0, 0x17, 0x0B])
}

pub fn link(args: &LinkArgs) -> Result<(), LinkError> {
    let output = args.output.as_ref().expect("checked by parse_args");
    if std::env::var_os("GPU_LD_VERBOSE").is_some() {
        eprintln!("gpu-ld: ignoring {:?}", args.ignored);
    }
    let mut exports = args.exports.clone();
    for script in &args.version_scripts {
        let text = fs::read_to_string(script).map_err(LinkError::io("read", script))?;
        exports.extend(version_script_globals(&text));
    }
    let bin = llvm_bin()?;
    let work = output.with_extension("gpu-ld");
    let _ = fs::remove_dir_all(&work);
    fs::create_dir_all(&work).map_err(LinkError::io("create", &work))?;

    // Collect every bitcode module: loose `.o` files and archive members.
    let mut modules: Vec<PathBuf> = Vec::new();
    for (i, input) in args.inputs.iter().enumerate() {
        let bytes = fs::read(input).map_err(LinkError::io("read", input))?;
        if is_bitcode(&bytes) {
            modules.push(input.clone());
        } else if ar::is_archive(&bytes) {
            for (j, (name, data)) in ar::members(&bytes).map_err(|why| LinkError::Input { path: input.clone(), why })?.into_iter().enumerate() {
                if is_bitcode(data) {
                    let path = work.join(format!("{i}-{j}-{}", name.replace('/', "_")));
                    fs::write(&path, data).map_err(LinkError::io("write", &path))?;
                    modules.push(path);
                }
            }
        } else if bytes.starts_with(b"\x7fELF") {
            // rustc's built-in amdgcn target without `-Clinker-plugin-lto`:
            // its LTO already made machine code, too late for the rewrites.
            return Err(LinkError::Input {
                path: input.clone(),
                why: "an object of machine code, not LLVM bitcode: rustc hands gpu-ld bitcode for the built-in \
                      amdgcn-amd-amdhsa target only with -Clinker-plugin-lto (the config `gpurun init` writes has it)"
                    .into(),
            });
        } else {
            return Err(LinkError::Input { path: input.clone(), why: "neither LLVM bitcode nor an archive of it".into() });
        }
    }

    let linked = work.join("linked.bc");
    let mut link_args: Vec<OsString> = vec!["-o".into(), linked.clone().into()];
    // amdgcn: the whole-wave call for gpu_lanes, first, so that its strong
    // definitions replace the runtime's weak fallbacks ([`amd_lanes`]).
    if args.target == Target::Amdgcn {
        let cpu = args.target_cpu.clone().unwrap_or_else(|| args.target.default_cpu().into());
        if let Some(module) = amd_lanes::ir(&cpu) {
            let path = work.join("amd-lanes.ll");
            fs::write(&path, module).map_err(LinkError::io("write", &path))?;
            link_args.push(path.into());
        }
    }
    // A program built with panic=unwind: the raise its panic runtime calls
    // ([`unwind::raise_ir`]), and the runtime's unwinding functions kept
    // through `opt` for the lowering.
    let unwinding = modules_mention(&modules, unwind::RAISE)?;
    if unwinding {
        let path = work.join("unwind-raise.ll");
        fs::write(&path, unwind::raise_ir()).map_err(LinkError::io("write", &path))?;
        link_args.push(path.into());
    }
    link_args.extend(modules.iter().map(|m| m.clone().into_os_string()));
    run(&bin.join("llvm-link"), &link_args)?;

    let mut keep: Vec<&str> = ALWAYS_EXPORTED.to_vec();
    keep.extend(exports.iter().map(String::as_str));
    if unwinding {
        keep.extend(unwind::RUNTIME);
    }
    // `GPU_LD_OPT_LEVEL=s|z|1|2|3` overrides the level rustc passes (the
    // profile's `opt-level`), for this step only: std keeps its own build.
    let env_level = std::env::var("GPU_LD_OPT_LEVEL").ok();
    if let Some(v) = &env_level
        && !matches!(v.as_str(), "0" | "1" | "2" | "3" | "s" | "z")
    {
        return Err(LinkError::Usage(format!("GPU_LD_OPT_LEVEL must be 0, 1, 2, 3, s or z, not `{v}`")));
    }
    let opt_level = env_level.as_deref().or(args.opt_level.as_deref()).unwrap_or("3");
    let opt_level = if opt_level == "0" { "1" } else { opt_level };
    let optimized = work.join("optimized.bc");
    let cpu = args.target_cpu.clone().unwrap_or_else(|| args.target.default_cpu().into());
    // amdgcn: AMD's attributor last, over the whole program as a closed
    // world ([`amd_marks`]).
    let marks = args.target == Target::Amdgcn && amd_marks::enabled();
    let last = if marks { format!(",{}", amd_marks::PASS) } else { String::new() };
    let mut opt_args: Vec<OsString> = vec![
        format!("-passes=internalize,globaldce,default<O{opt_level}>{last}").into(),
        format!("-internalize-public-api-list={}", keep.join(",")).into(),
        format!("-mcpu={cpu}").into(),
    ];
    let inline_threshold = env_number::<u32>("GPU_INLINE_THRESHOLD")?.or(args.inline_threshold);
    if let Some(n) = inline_threshold {
        opt_args.push(format!("-inline-threshold={n}").into());
    }
    let max_stack = env_number("GPU_INLINE_MAX_STACK")?.unwrap_or(INLINE_MAX_STACK);
    opt_args.push(format!("-inline-max-stacksize={max_stack}").into());
    if args.target == Target::Amdgcn {
        // The std spec passes the same to rustc (`gpu_toolchain::compile`).
        let cost = env_number("GPU_AMD_ARG_ALLOCA_COST")?.unwrap_or(AMD_ARG_ALLOCA_COST);
        opt_args.push(format!("-amdgpu-inline-arg-alloca-cost={cost}").into());
        if marks {
            opt_args.extend(amd_marks::OPT_FLAGS.iter().map(OsString::from));
        }
    }
    // `GPU_LD_OPT_ARGS`: more `opt` flags, whitespace-separated, for
    // finding a miscompiling pass (`-opt-bisect-limit=N`).
    if let Ok(extra) = std::env::var("GPU_LD_OPT_ARGS") {
        opt_args.extend(extra.split_whitespace().map(OsString::from));
    }
    opt_args.extend(["-o".into(), optimized.clone().into(), linked.into()]);
    run(&bin.join("opt"), &opt_args)?;
    let flag = |name: &str| std::env::var(name).is_ok_and(|v| v == "1");
    let private = args.private_stacks || flag("GPU_PRIVATE_STACKS");
    let device_scope = !(args.system_scope || flag("GPU_SYSTEM_SCOPE"));
    // Recursion checks its depth on the driver's call stack ([`call_stack`]),
    // on amdgcn where the cpu's scratch addressing is known;
    // `GPU_NO_DEPTH_CHECKS=1` leaves them out.
    let depth_checks = match args.target {
        _ if flag("GPU_NO_DEPTH_CHECKS") => None,
        Target::Nvptx => Some(call_stack::Depth::Nvptx),
        Target::Amdgcn => amd_lanes::stack_pointer_lane_shift(&cpu).map(|sp_shift| call_stack::Depth::Amdgcn { sp_shift }),
    };
    // `GPU_STACK_ARGS=1`: frames pass their stack to each other as
    // arguments (nvptx; see `shared_stack::Protocol::Args` for what it wins
    // and costs, and why it is not the default).
    let stack_protocol = if flag("GPU_STACK_ARGS") { shared_stack::Protocol::Args } else { shared_stack::Protocol::Pair };
    let passes = Passes { share: !private, stack_protocol, device_scope, depth_checks };
    let rewritten = rewrite_ir(&bin, &work, &optimized, args.target, passes)?;
    let flags = codegen_flags(args.target);
    let llc = Llc { bin: &bin, work: &work, cpu: &cpu, opt_level, flags: &flags };
    match args.target {
        Target::Nvptx => emit_ptx(&llc, rewritten, optimized, args.max_registers, output)?,
        Target::Amdgcn => {
            let jobs = amd_codegen_jobs(rewritten.as_ref().map_or(0, String::len))?;
            // Shorter local names in the code object's symbol table; numbered
            // only where one `llc` compiles the whole module (see `ir_names`).
            let rewritten = rewritten.map(|ir| {
                let (ir, renamed) = ir_names::shorten_local_names(&ir, jobs.is_none());
                if std::env::var_os("GPU_LD_VERBOSE").is_some() {
                    eprintln!("gpu-ld: {renamed} local names shortened");
                }
                if marks {
                    // The frames' prologues call the overflow handler, the
                    // depth checks the call stack's.
                    let ir = amd_marks::sound_after_rewrites(&ir, shared_stack::OVERFLOW_SYMBOL);
                    let mut ir = amd_marks::sound_after_rewrites(&ir, rt_abi::symbols::CALL_STACK_OVERFLOW);
                    // Lowered unwinding calls the runtime's exception word.
                    for callee in unwind::RUNTIME {
                        ir = amd_marks::sound_after_rewrites(&ir, callee);
                    }
                    amd_marks::without_callee_lists(&ir)
                } else {
                    ir
                }
            });
            let parts = match (jobs, &rewritten) {
                (Some(_), Some(ir)) => amd_parts::split(ir, amd_parts::PARTS),
                _ => None,
            };
            match (parts, jobs) {
                (Some(parts), Some(jobs)) => emit_amdgpu_in_parts(&llc, parts, jobs, output)?,
                _ => {
                    let bitcode = llc.bitcode(rewritten.as_deref(), optimized)?;
                    emit_amdgpu_code_object(&llc, with_amd_whole_wave_call(&llc, bitcode)?, output)?
                }
            }
        }
    }
    // `GPU_LD_KEEP=1` keeps the intermediate bitcode and PTX for inspection.
    if std::env::var_os("GPU_LD_KEEP").is_none() {
        let _ = fs::remove_dir_all(&work);
    }
    Ok(())
}

/// The `opt` passes between the rewrites and `llc` ([`Llc::always_inline`]).
const INLINE_PASSES: &str = "-passes=always-inline,mergefunc";

/// How `llc` runs, and the `opt` run before it that inlines the rewrites'
/// helpers and merges identical functions.
struct Llc<'a> {
    bin: &'a Path,
    work: &'a Path,
    cpu: &'a str,
    opt_level: &'a str,
    /// Target flags for every `llc` of the link ([`codegen_flags`]).
    flags: &'a [String],
}

/// `llc` flags a target's links get besides the CPU and level: [`NO_SLSR`] for
/// both, and for amdgcn [`AMD_SPLIT_MODE`] and `-enable-ipra=0`.
///
/// `-enable-ipra=0`: AMDGPU turns LLVM's interprocedural register
/// allocation on, under which a function local to the module saves none of
/// the callee-saved registers it uses and each caller saves what it keeps
/// live across the call instead: with Rust's many small calls, every call
/// site grew SGPR saves to VGPR lanes (`v_writelane`/`v_readlane`: 24,000 in
/// hello-threads for gfx90a). Without it hello-threads' gfx90a machine code
/// is 32 % smaller (541 to 369 KB) and `llc` a quarter faster. No AMD GPU
/// could measure the speed either way; `GPU_LD_AMD_IPRA=1` at build time
/// turns it back on.
fn codegen_flags(target: Target) -> Vec<String> {
    let mut flags = vec![NO_SLSR.to_string()];
    if target == Target::Amdgcn {
        flags.push(AMD_SPLIT_MODE.to_string());
        if !std::env::var("GPU_LD_AMD_IPRA").is_ok_and(|v| v == "1") {
            flags.push("-enable-ipra=0".into());
        }
    }
    flags
}

/// Keeps AMDGPU's greedy register allocator from a crash: in its default
/// `speed` mode of splitting live ranges, `llc` for gfx1100 died with a
/// segfault in `SplitEditor::finish` on crossbeam-channel's `Iter::next` in
/// examples/real-crates (a known family of AMDGPU crashes in LLVM's SplitKit,
/// e.g. llvm/llvm-project#199554). `default` is LLVM's plain partition mode:
/// the complement of a split covers exactly the rest of the range, at the cost
/// of copies the `speed` mode would have moved to cold blocks. PTX has no
/// register allocation, so NVIDIA is unaffected. Remove once the pinned LLVM
/// builds real-crates for gfx1100 without it (the `real_crates_gfx1100`
/// code-object test).
const AMD_SPLIT_MODE: &str = "-split-spill-mode=default";

/// Keeps `llc` from running straight-line strength reduction, which both GPU
/// backends (and no host target) run before instruction selection. LLVM 22's
/// rewrite of that pass (llvm/llvm-project#162930) miscompiles core's stable
/// sort: `Vec<u64>::sort` of more than 20 elements panicked with "does not
/// correctly implement a total order" on the H200 and the emulated gfx1100
/// (found with `GPU_LD_LLC_ARGS=-opt-bisect-limit=N`: the first bad pass is
/// `slsr` on `smallsort::sort8_stable`). The pass has no switch of its own, so
/// its debug counter allows only an occurrence that never comes: no rewrite
/// runs. Remove once the pinned LLVM's pass is fixed (upstream has had other
/// miscompiles reported since the rewrite); the `sort` acceptance check is
/// the test that says so.
const NO_SLSR: &str = "-debug-counter=slsr-counter=1000000000";

impl Llc<'_> {
    /// Writes `ir` (LLVM assembly) as `NAME.ll`, inlines its `alwaysinline`
    /// helpers and merges functions whose code is identical, into `NAME.bc`.
    ///
    /// The merge (LLVM's `mergefunc`; rustc's own is off on the GPU targets)
    /// runs here, after the rewrites, and not in the whole-program `opt`:
    /// [`device_scope`] tells the ring's system-scope atomics from the rest by
    /// function name, so merging before it could hand the ring's code another
    /// function's name. After the rewrites, functions that differ in scope or
    /// frame differ in their IR and are not merged. It takes 7 % off
    /// hello-threads' PTX: std's `#[inline]` functions are instantiated once per
    /// codegen unit, and fat LTO leaves those copies side by side. Rust functions
    /// are `unnamed_addr`, so a merged function needs no thunk of its own.
    fn always_inline(&self, ir: &str, name: &str) -> Result<PathBuf, LinkError> {
        let text = self.work.join(format!("{name}.ll"));
        fs::write(&text, ir).map_err(LinkError::io("write", &text))?;
        let out = self.work.join(format!("{name}.bc"));
        let args = [INLINE_PASSES.into(), format!("-mcpu={}", self.cpu).into(), "-o".into(), out.clone().into(), text.into()];
        run(&self.bin.join("opt"), &args)?;
        Ok(out)
    }

    /// The bitcode for `llc`: the rewritten IR with its helpers inlined
    /// (`NAME.bc`), or the optimized module when there was nothing to rewrite.
    fn bitcode(&self, rewritten: Option<&str>, optimized: PathBuf) -> Result<PathBuf, LinkError> {
        match rewritten {
            Some(ir) => self.always_inline(ir, "rewritten"),
            None => Ok(optimized),
        }
    }

    /// `llc` of `bitcode` to `NAME.ptx`, read back.
    fn ptx(&self, bitcode: &Path, name: &str) -> Result<String, LinkError> {
        let ptx = self.work.join(format!("{name}.ptx"));
        let extra = nvptx_llc_args(self.cpu)?;
        self.compile(bitcode, &ptx, &extra.iter().map(String::as_str).collect::<Vec<_>>())?;
        fs::read_to_string(&ptx).map_err(LinkError::io("read", &ptx))
    }

    /// `llc` of `bitcode` to `output` (`extra` before the input, e.g. `-filetype=obj`).
    fn compile(&self, bitcode: &Path, output: &Path, extra: &[&str]) -> Result<(), LinkError> {
        let mut args = self.args(extra);
        args.extend(["-o".into(), output.into(), bitcode.into()]);
        run(&self.bin.join("llc"), &args)
    }

    /// `llc`'s arguments before the files.
    fn args(&self, extra: &[&str]) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![format!("-mcpu={}", self.cpu).into(), format!("-O{}", self.opt_level.min("3")).into()];
        args.extend(self.flags.iter().map(OsString::from));
        args.extend(extra.iter().map(OsString::from));
        // `GPU_LD_LLC_ARGS`: more `llc` flags, as `GPU_LD_OPT_ARGS` for `opt`.
        if let Ok(more) = std::env::var("GPU_LD_LLC_ARGS") {
            args.extend(more.split_whitespace().map(OsString::from));
        }
        args
    }
}

/// amdgcn: `bitcode` with [`amd_lanes::asm_module`] linked in (after `opt`,
/// which would refuse its assembly), where the target CPU has one.
fn with_amd_whole_wave_call(llc: &Llc, bitcode: PathBuf) -> Result<PathBuf, LinkError> {
    let Some(module) = amd_lanes::asm_module(llc.cpu) else { return Ok(bitcode) };
    let asm = llc.work.join("amd-lanes-asm.ll");
    fs::write(&asm, module).map_err(LinkError::io("write", &asm))?;
    let out = llc.work.join("with-lanes.bc");
    run(&llc.bin.join("llvm-link"), &["-o".into(), out.clone().into(), bitcode.into(), asm.into()])?;
    Ok(out)
}

/// amdgcn: `llc` to an object, `rust-lld` to a shared object (what the HIP
/// runtime loads; rustc's own amdgcn link does the same).
fn emit_amdgpu_code_object(llc: &Llc, bitcode: PathBuf, output: &Path) -> Result<(), LinkError> {
    let object = llc.work.join("out.o");
    llc.compile(&bitcode, &object, &["-filetype=obj"])?;
    run(
        &llc.bin.join("rust-lld"),
        &["-flavor".into(), "gnu".into(), "-shared".into(), "--no-undefined".into(), "-o".into(), output.into(), object.into()],
    )
}

/// amdgcn: the `llc`s a link of `ir_bytes` of LLVM assembly runs at once
/// when it compiles in parts ([`amd_parts`]), or `None` for one `llc` on the
/// whole module (small modules, or `GPU_LD_JOBS=1`). Parts are cached, so
/// even one core compiles a large module in parts.
fn amd_codegen_jobs(ir_bytes: usize) -> Result<Option<usize>, LinkError> {
    Ok(match env_number::<usize>("GPU_LD_JOBS")? {
        Some(0 | 1) => None,
        _ if ir_bytes < SPLIT_MIN_IR_BYTES => None,
        Some(n) => Some(n),
        None => Some(std::thread::available_parallelism().map_or(1, |n| n.get()).min(8)),
    })
}

/// amdgcn, a large module: `llc` on `parts` ([`amd_parts::split`]), at once,
/// each part's object reused from the part cache when its text is unchanged,
/// then one shared object ([`amd_parts`] says why and how the kernel keeps
/// its register figures).
fn emit_amdgpu_in_parts(llc: &Llc, mut parts: Vec<String>, jobs: usize, output: &Path) -> Result<(), LinkError> {
    let cache = PartCache::open(output, llc)?;
    let verbose = std::env::var_os("GPU_LD_VERBOSE").is_some();
    let started = std::time::Instant::now();
    // Every part but the kernels', biggest first, `jobs` at a time.
    let mut order: Vec<usize> = (1..parts.len()).collect();
    order.sort_by_key(|&k| std::cmp::Reverse(parts[k].len()));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<Result<Vec<(usize, CompiledPart)>, LinkError>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs.min(order.len()))
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&k) = order.get(i) else { break };
                        // Part 1 carries the whole-wave call.
                        done.push((k, cache.compile(llc, &parts[k], k, true, k == 1)?));
                    }
                    Ok(done)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap_or(Err(LinkError::LlcPanicked))).collect()
    });
    let mut compiled: Vec<Option<CompiledPart>> = (0..parts.len()).map(|_| None).collect();
    for result in results {
        for (k, part) in result? {
            compiled[k] = Some(part);
        }
    }
    let regs = compiled.iter().flatten().fold(gpu_toolchain::codecheck::Registers::default(), |r, p| r.max(p.registers));
    parts[0] = amd_parts::with_register_floor(&parts[0], regs);
    compiled[0] = Some(cache.compile(llc, &parts[0], 0, false, false)?);
    let compiled: Vec<CompiledPart> = compiled.into_iter().flatten().collect();
    if verbose {
        let reused = compiled.iter().filter(|p| p.reused).count();
        eprintln!(
            "gpu-ld: llc in {} parts, {jobs} at a time, {reused} reused from {}: {:.1} s; kernel floor {}",
            compiled.len(),
            cache.dir.display(),
            started.elapsed().as_secs_f64(),
            regs.to_line()
        );
    }
    let mut args: Vec<OsString> =
        vec!["-flavor".into(), "gnu".into(), "-shared".into(), "--no-undefined".into(), "-o".into(), output.into()];
    args.extend(compiled.iter().map(|p| p.object.clone().into_os_string()));
    run(&llc.bin.join("rust-lld"), &args)?;
    cache.keep_only(&compiled);
    Ok(())
}

/// A part's object, and the highest registers its machine code names.
struct CompiledPart {
    object: PathBuf,
    registers: gpu_toolchain::codecheck::Registers,
    reused: bool,
}

/// The objects of one output's parts, by the hash of what made them: the
/// part's text, `llc`'s arguments and the `llc` file. Beside the output
/// (`NAME.gpu-ld-parts/`), holding the last link's parts only.
struct PartCache {
    dir: PathBuf,
    /// What every key starts with: `llc` and its arguments.
    salt: String,
}

impl PartCache {
    fn open(output: &Path, llc: &Llc) -> Result<PartCache, LinkError> {
        let dir = output.with_extension("gpu-ld-parts");
        fs::create_dir_all(&dir).map_err(LinkError::io("create", &dir))?;
        let tool = llc.bin.join("llc");
        let meta = fs::metadata(&tool).map_err(LinkError::io("read", &tool))?;
        let mtime = meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos());
        let salt = format!("{} {} {mtime}\n{INLINE_PASSES}\n{:?}\n", tool.display(), meta.len(), llc.args(&["-filetype=obj"]));
        Ok(PartCache { dir, salt })
    }

    /// Part `k`'s object: from the cache, else `opt` ([`Llc::always_inline`]),
    /// the whole-wave call linked in after it when `lanes`
    /// ([`with_amd_whole_wave_call`]: `opt` would refuse its assembly), `llc`
    /// (with its `.note`, the code object's metadata, removed when
    /// `strip_note`: only the kernels' part may carry it) and the
    /// disassembly's register figures.
    fn compile(&self, llc: &Llc, ir: &str, k: usize, strip_note: bool, lanes: bool) -> Result<CompiledPart, LinkError> {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(self.salt.as_bytes());
        h.update([u8::from(strip_note)]);
        if lanes {
            h.update(amd_lanes::asm_module(llc.cpu).unwrap_or_default().as_bytes());
        }
        h.update(ir.as_bytes());
        let key: String = h.finalize().iter().take(16).map(|b| format!("{b:02x}")).collect();
        let object = self.dir.join(format!("{key}.o"));
        let regs_file = self.dir.join(format!("{key}.regs"));
        if object.exists()
            && let Ok(line) = fs::read_to_string(&regs_file)
            && let Some(registers) = gpu_toolchain::codecheck::Registers::from_line(&line)
        {
            return Ok(CompiledPart { object, registers, reused: true });
        }
        let mut bitcode = llc.always_inline(ir, &format!("part{k}"))?;
        if lanes {
            bitcode = with_amd_whole_wave_call(llc, bitcode)?;
        }
        let fresh = llc.work.join(format!("part{k}.o"));
        llc.compile(&bitcode, &fresh, &["-filetype=obj"])?;
        if strip_note {
            run(&llc.bin.join("llvm-objcopy"), &["--remove-section=.note".into(), fresh.clone().into()])?;
        }
        let objdump = ["-d", "--no-show-raw-insn", "--no-leading-addr"];
        let disassembly = gpu_toolchain::codecheck::tool_output(llc.bin, "llvm-objdump", &objdump, &fresh)
            .map_err(|e| LinkError::Tool { tool: llc.bin.join("llvm-objdump"), stderr: e.to_string() })?;
        let registers = gpu_toolchain::codecheck::registers_named(&disassembly);
        // The figures first, the object last: an object in the cache has them.
        fs::write(&regs_file, registers.to_line()).map_err(LinkError::io("write", &regs_file))?;
        let partial = object.with_extension("o.tmp");
        fs::copy(&fresh, &partial).map_err(LinkError::io("write", &partial))?;
        fs::rename(&partial, &object).map_err(LinkError::io("write", &object))?;
        Ok(CompiledPart { object, registers, reused: false })
    }

    /// Removes what this link did not use (best effort).
    fn keep_only(&self, used: &[CompiledPart]) {
        let keep: std::collections::HashSet<String> = used
            .iter()
            .filter_map(|p| p.object.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .collect();
        let Ok(entries) = fs::read_dir(&self.dir) else { return };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let stem = name.split('.').next().unwrap_or("");
            if !keep.contains(stem) {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
}

/// How many `llc`s a link of `ir_bytes` of LLVM assembly runs at once:
/// `GPU_LD_JOBS` (1: one `llc`), else one per core (at most 8) from
/// [`SPLIT_MIN_IR_BYTES`] up.
fn codegen_jobs(ir_bytes: usize) -> Result<usize, LinkError> {
    Ok(match env_number::<usize>("GPU_LD_JOBS")? {
        Some(n) => n.max(1),
        None if ir_bytes < SPLIT_MIN_IR_BYTES => 1,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()).min(8),
    })
}

/// The number in environment variable `name`, if it is set; a value that is
/// not one is a usage error that names the variable.
fn env_number<T: std::str::FromStr>(name: &str) -> Result<Option<T>, LinkError> {
    match std::env::var(name) {
        Ok(v) => v.trim().parse().map(Some).map_err(|_| LinkError::Usage(format!("{name} must be a number, not `{v}`"))),
        Err(_) => Ok(None),
    }
}

/// Below this much LLVM assembly (hello-threads has 3 MB) one `llc` takes a
/// few seconds and the split would change the PTX for little.
const SPLIT_MIN_IR_BYTES: usize = 4 << 20;

/// nvptx64: `llc` to PTX (in parts, at once, where the module is large and
/// the host has cores: [`split`]), the PTX repairs and the kernel's
/// register cap.
fn emit_ptx(llc: &Llc, rewritten: Option<String>, optimized: PathBuf, max_registers: Option<u32>, output: &Path) -> Result<(), LinkError> {
    let split = match &rewritten {
        Some(ir) => match codegen_jobs(ir.len())? {
            1 => None,
            jobs => split::split(ir, jobs),
        },
        None => None,
    };
    let ptx = match (split, rewritten) {
        (Some(split), _) => {
            if std::env::var_os("GPU_LD_VERBOSE").is_some() {
                eprintln!("gpu-ld: llc in {} parts at once", split.parts.len());
            }
            let ptx_parts = std::thread::scope(|scope| {
                let handles: Vec<_> = split
                    .parts
                    .iter()
                    .enumerate()
                    .map(|(k, ir)| {
                        scope.spawn(move || {
                            let name = format!("part{k}");
                            llc.ptx(&llc.always_inline(ir, &name)?, &name)
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap_or(Err(LinkError::LlcPanicked))).collect::<Result<Vec<_>, _>>()
            })?;
            gpu_toolchain::ptx_parts::merge(&ptx_parts, &split.localized)?
        }
        (None, rewritten) => {
            let ptx = llc.ptx(&llc.bitcode(rewritten.as_deref(), optimized)?, "out")?;
            // With line tables: the same module the parts' merge writes.
            gpu_toolchain::ptx_parts::without_dwarf(&ptx)?.unwrap_or(ptx)
        }
    };
    let (mut ptx, _fixed) = ptx_fixup::fix_local_cas(&ptx);
    let regs = match max_registers {
        Some(n) => n,
        None => env_number("GPU_NVPTX_MAX_REGISTERS")?.unwrap_or(DEFAULT_MAX_REGISTERS),
    };
    if regs != 0 {
        // Not every link has the kernel (a cdylib of device functions).
        if let Some(capped) = ptx_fixup::set_maxnreg(&ptx, KERNEL_ENTRY, regs) {
            ptx = capped;
        }
    }
    // Comments first: the renaming then reads only what is kept.
    let (ptx, renamed) = ptx_fixup::short_local_names(&ptx_fixup::strip_comments(&ptx));
    let verbose = std::env::var_os("GPU_LD_VERBOSE").is_some();
    if verbose {
        eprintln!("gpu-ld: {renamed} local names shortened");
    }
    // Byte arrays as words, definitions callees first (`GPU_LD_PTX_COMPACT=0`
    // leaves `llc`'s text as it is, to compare).
    let ptx = if std::env::var("GPU_LD_PTX_COMPACT").is_ok_and(|v| v == "0") {
        ptx
    } else {
        let (compact, c) = gpu_toolchain::ptx_compact::compact(&ptx)?;
        if verbose {
            eprintln!(
                "gpu-ld: PTX compacted: {} byte arrays as words; {} of {} functions keep a prototype; {} variables first",
                c.packed_arrays, c.prototypes, c.functions, c.variables_first
            );
        }
        compact
    };
    fs::write(output, ptx).map_err(LinkError::io("write", output))
}

/// Which rewrites of the optimized IR a link runs.
struct Passes {
    /// [`shared_stack::rewrite`]: frames in global memory.
    share: bool,
    /// How those frames find their stack (`GPU_STACK_ARGS=1`: as arguments,
    /// nvptx only).
    stack_protocol: shared_stack::Protocol,
    /// [`device_scope::rewrite`]: atomics at device scope.
    device_scope: bool,
    /// [`call_stack::guard`]: recursion checks the call stack's depth.
    depth_checks: Option<call_stack::Depth>,
}

/// Runs the rewrites `passes` asks for on the optimized module; returns the
/// rewritten IR (LLVM assembly), or `None` when nothing changed (no
/// runtime).
fn rewrite_ir(bin: &Path, work: &Path, optimized: &Path, target: Target, passes: Passes) -> Result<Option<String>, LinkError> {
    let Passes { share, stack_protocol, device_scope, depth_checks } = passes;
    let verbose = std::env::var_os("GPU_LD_VERBOSE").is_some();
    let text = work.join("optimized.ll");
    run(&bin.join("llvm-dis"), &["-o".into(), text.clone().into(), optimized.into()])?;
    let mut ir = fs::read_to_string(&text).map_err(LinkError::io("read", &text))?;
    let mut changed = false;
    // First: the rewrites after it see ordinary calls and returns.
    // Both runtimes tell the word's address from the kernel's start on.
    if let Some((lowered, report)) = unwind::lower(&ir, true)? {
        if verbose {
            eprintln!("gpu-ld: unwinding lowered: {report:?}");
        }
        ir = lowered;
        changed = true;
    }
    if share && let Some((shared, report)) = shared_stack::rewrite(&ir, target, stack_protocol) {
        if verbose {
            eprintln!(
                "gpu-ld: shared stacks: {} frames, {} allocas moved; stack pointer {}",
                report.functions,
                report.allocas,
                match report.protocol {
                    shared_stack::Protocol::Args => format!("passed as arguments to {} functions", report.takers),
                    shared_stack::Protocol::Pair => "read from the pair".to_string(),
                }
            );
        }
        if let (Some(why), Target::Nvptx) = (&report.pair_because, target) {
            // Asked for on nvptx, where every module should take them: say why not.
            eprintln!("gpu-ld: note: frames read their stack from the pair on every call: {why}");
        }
        for why in &report.left_private {
            // Rust emits neither dynamic allocas nor unsizable ones: say so if seen.
            eprintln!("gpu-ld: warning: frame left in private memory: {why}");
        }
        ir = shared;
        changed = true;
    }
    if let Some(depth) = depth_checks
        && let Some((guarded, checked)) = call_stack::guard(&ir, depth)
    {
        if verbose {
            eprintln!("gpu-ld: call-stack depth checks in {} recursive functions", checked.len());
        }
        ir = guarded;
        changed = true;
    }
    if let Some(converted) = int128_float::rewrite(&ir) {
        ir = converted;
        changed = true;
    }
    if device_scope {
        let (scoped, n) = device_scope::rewrite(&ir, target);
        if verbose {
            eprintln!("gpu-ld: device scope: {n} atomics and fences");
        }
        ir = scoped;
        changed = true;
    }
    if target == Target::Nvptx
        && let Some(defined) = lanes_wanted::define(&ir)
    {
        ir = defined;
        changed = true;
    }
    if target == Target::Nvptx {
        // nvptx-only rewrites that count what they changed.
        let counted: [(fn(&str) -> (String, usize), &str); 2] = [
            (rmw_order::rewrite, "ordered read-modify-writes given fences"),
            (block_shared::rewrite, "globals moved to shared memory"),
        ];
        for (rewrite, what) in counted {
            let (out, n) = rewrite(&ir);
            if verbose {
                eprintln!("gpu-ld: {n} {what}");
            }
            if n > 0 {
                ir = out;
                changed = true;
            }
        }
    }
    if changed && let Some(located) = debug_locations::locate(&ir) {
        ir = located;
    }
    Ok(changed.then_some(ir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn parses_rustc_llbc_command_lines() {
        let a = parse_args(&os(&[
            "--export-symbol", "k", "a.o", "libstd.rlib", "--target", "nvptx64-nvidia-cuda", "--target-cpu", "sm_90",
            "-L", "/x/raw-dylibs", "-o", "out.ptx", "-O3", "--debug", "--max-registers=40", "--private-stacks", "--system-scope",
        ]))
        .unwrap();
        assert_eq!(a.exports, vec!["k"]);
        assert_eq!(a.inputs, vec![PathBuf::from("a.o"), PathBuf::from("libstd.rlib")]);
        assert_eq!(a.output, Some(PathBuf::from("out.ptx")));
        assert_eq!(a.target_cpu.as_deref(), Some("sm_90"));
        assert_eq!(a.opt_level.as_deref(), Some("3"));
        assert_eq!(a.ignored, vec!["--debug"]);
        assert_eq!(a.max_registers, Some(40));
        assert!(a.private_stacks && a.system_scope);
    }

    /// What rustc 1.97 (nightly-2026-05-19) passes for the built-in
    /// `amdgcn-amd-amdhsa` target with `-Clinker=gpu-ld -Clinker-plugin-lto`
    /// (its `gnu-lld` flavor), as logged from a real build.
    #[test]
    fn parses_rustc_gnu_lld_command_lines_for_the_builtin_amdgcn_target() {
        let a = parse_args(&os(&[
            "--version-script=/t/rustcX/list", "--no-undefined-version", "/t/deps/x.x.3b97-cgu.0.rcgu.o", "--as-needed",
            "-L", "/t/rustcX/raw-dylibs", "-Bdynamic", "--eh-frame-hdr", "-z", "noexecstack", "-plugin-opt=O2",
            "-plugin-opt=mcpu=gfx942", "-o", "/t/deps/x.elf", "--gc-sections", "-shared", "-O1", "--strip-debug",
            "--inline-threshold=25",
        ]))
        .unwrap();
        assert_eq!(a.target, Target::Amdgcn);
        assert_eq!(a.target_cpu.as_deref(), Some("gfx942"));
        // The LTO level, not ld's `-O1`.
        assert_eq!(a.opt_level.as_deref(), Some("2"));
        assert_eq!(a.inputs, vec![PathBuf::from("/t/deps/x.x.3b97-cgu.0.rcgu.o")]);
        assert_eq!(a.version_scripts, vec![PathBuf::from("/t/rustcX/list")]);
        assert_eq!(a.output, Some(PathBuf::from("/t/deps/x.elf")));
        assert_eq!(a.inline_threshold, Some(25));
        assert!(a.ignored.contains(&"-z noexecstack".to_string()), "{:?}", a.ignored);
    }

    /// rustc's own machine code (the built-in amdgcn target linked through
    /// gpu-ld without `-Clinker-plugin-lto`) is refused with what to do.
    #[test]
    fn refuses_machine_code_naming_linker_plugin_lto() {
        let dir = std::env::temp_dir().join(format!("gpu-ld-elf-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let object = dir.join("x.rcgu.o");
        fs::write(&object, b"\x7fELF\x02\x01\x01\x40rest").unwrap();
        let out = dir.join("x.elf");
        let args = parse_args(&os(&[object.to_str().unwrap(), "-shared", "-o", out.to_str().unwrap()])).unwrap();
        let err = link(&args).unwrap_err().to_string();
        assert!(err.contains("an object of machine code, not LLVM bitcode") && err.contains("-Clinker-plugin-lto"), "{err}");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn reads_the_globals_of_rustcs_version_script() {
        let script = "{\n  global:\n    main;\n    __gpu_start;\n    __gpu_start.kd;\n\n  local:\n    *;\n};\n";
        assert_eq!(version_script_globals(script), ["main", "__gpu_start", "__gpu_start.kd"]);
        assert_eq!(version_script_globals("{ global: a; b; local: *; };"), ["a", "b"]);
        assert!(version_script_globals("{ local: *; };").is_empty());
    }

    #[test]
    fn refuses_other_targets_and_missing_output() {
        let other = parse_args(&os(&["--target", "x86_64-unknown-linux-gnu", "-o", "x"])).unwrap_err();
        assert!(matches!(&other, LinkError::Usage(m) if m.contains("nvptx64 and amdgcn")), "{other}");
        assert_eq!(other.exit_code(), 2);
        let amd = parse_args(&os(&["--target", "amdgcn-amd-amdhsa", "--target-cpu", "gfx942", "-o", "x.elf"])).unwrap();
        assert_eq!((amd.target, amd.target_cpu.as_deref()), (Target::Amdgcn, Some("gfx942")));
        assert!(parse_args(&os(&["a.o"])).unwrap_err().to_string().contains("-o"));
    }

    #[test]
    fn sm_90_gets_the_ptx_isa_of_one_sided_fences_and_others_llvms_default() {
        assert_eq!(default_ptx_isa("sm_90"), Some(SPLIT_FENCES_PTX_ISA));
        assert_eq!(default_ptx_isa("sm_90a"), Some(SPLIT_FENCES_PTX_ISA));
        // Older GPUs have no one-sided fences; newer ones need a newer ISA
        // (sm_120: 8.7), which LLVM picks itself.
        for cpu in ["sm_70", "sm_80", "sm_89", "sm_100", "sm_120"] {
            assert_eq!(default_ptx_isa(cpu), None, "{cpu}");
        }
    }

    /// Through the pinned `llc`, with the arguments a link gives it: release
    /// and acquire fences are one-sided for sm_90, `fence.acq_rel` for sm_80.
    #[test]
    fn llc_writes_one_sided_fences_for_sm_90() {
        let Ok(bin) = llvm_bin() else {
            eprintln!("SKIPPED: no llvm-tools in the pinned toolchain");
            return;
        };
        let dir = std::env::temp_dir().join(format!("gpu-ld-ptx-isa-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let ir = dir.join("fences.ll");
        fs::write(
            &ir,
            "target triple = \"nvptx64-nvidia-cuda\"\ndefine void @f(ptr %p) {\n\
             \x20 fence syncscope(\"device\") release\n  store i32 1, ptr %p\n\
             \x20 fence syncscope(\"device\") acquire\n  ret void\n}\n",
        )
        .unwrap();
        let fences = |cpu: &str| {
            let out = Command::new(bin.join("llc"))
                .args([format!("-mcpu={cpu}"), "-O3".into(), "-o".into(), "-".into()])
                .args(nvptx_llc_args(cpu).unwrap())
                .arg(&ir)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let text = String::from_utf8(out.stdout).unwrap();
            let version = text.lines().find_map(|l| l.strip_prefix(".version ")).unwrap_or_default().to_string();
            let fences: Vec<String> = text.lines().map(str::trim).filter(|l| l.starts_with("fence")).map(String::from).collect();
            (version, fences)
        };
        assert_eq!(fences("sm_90"), ("8.6".to_string(), vec!["fence.release.gpu;".to_string(), "fence.acquire.gpu;".into()]));
        let (_, older) = fences("sm_80");
        assert_eq!(older, ["fence.acq_rel.gpu;", "fence.acq_rel.gpu;"]);
        let _ = fs::remove_dir_all(&dir);
    }
}
