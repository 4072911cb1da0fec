//! The emulator on code nobody here wrote: small classic HIP kernels
//! (`tests/kernels/*.hip`) and the HIP twin of a native baseline
//! (`benches/native/reduction.cu`: its `fill` and `reduce` kernels),
//! compiled at test time by hipcc into plain code objects, loaded and
//! launched through hip-emu's HIP calls as gpurun would make them, and their
//! results compared with values computed here in advance.
//!
//! Compiling: `hipcc --genco --no-gpu-bundle-output --offload-arch=ARCH -O3
//! -std=c++17 -o K.co K.hip` (`--genco` is hipcc's `--cuda-device-only`;
//! `--no-gpu-bundle-output` gives the code object itself, not a clang
//! offload bundle). Debian's HIP 5.2 (clang 15) knows gfx1100 but its
//! `rocm-device-libs` have no `oclc_isa_version_1100.bc`: where hipcc says
//! so, the test makes a device-library folder of links to the installed
//! bitcode plus that one-constant file (`__oclc_ISA_version = 11000`, as
//! newer ROCm ships it) and passes it as `--hip-device-lib-path`. clang 15
//! has no gfx942: the CDNA3 code object is built for gfx940 (the same
//! instruction set) and run as gfx942, unless hipcc knows gfx942.
//!
//! Arches run one after another in this one test: `hipInit` reads
//! `$GPURUN_EMULATE` each time it is called. Each kernel and arch prints
//! PASS or FAIL with the reason (a fault is also printed by hip-emu as
//! `amd-emu: ...`); the test fails at the end unless all passed. Without
//! hipcc it prints SKIPPED and passes.
//!
//! `cargo test -p hip-emu --test hip_kernels -- --nocapture`

use std::ffi::{CString, c_void};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use hip_emu as hip;

/// How long one launch may run before it is called hung.
const LAUNCH_LIMIT: Duration = Duration::from_secs(120);

// ------------------------------------------------------------- compiling

struct Hipcc {
    hipcc: PathBuf,
    /// clang's `InstalledDir` (for `llvm-as`).
    llvm_bin: Option<PathBuf>,
    version: String,
}

fn find_hipcc() -> Option<Hipcc> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("HIPCC") {
        candidates.push(p.into());
    }
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|d| d.join("hipcc")));
    }
    if let Some(r) = std::env::var_os("ROCM_PATH") {
        candidates.push(Path::new(&r).join("bin/hipcc"));
    }
    candidates.push("/opt/rocm/bin/hipcc".into());
    let hipcc = candidates.into_iter().find(|p| p.is_file())?;
    let out = Command::new(&hipcc).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let llvm_bin = text.lines().find_map(|l| l.trim().strip_prefix("InstalledDir:")).map(|d| PathBuf::from(d.trim()));
    let version = text.lines().filter(|l| l.contains("version")).collect::<Vec<_>>().join("; ");
    Some(Hipcc { hipcc, llvm_bin, version })
}

/// The installed device-library folder (where `ockl.bc` is).
fn device_lib_dir() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for var in ["HIP_DEVICE_LIB_PATH", "DEVICE_LIB_PATH"] {
        if let Some(d) = std::env::var_os(var) {
            dirs.push(d.into());
        }
    }
    if let Some(r) = std::env::var_os("ROCM_PATH") {
        dirs.push(Path::new(&r).join("amdgcn/bitcode"));
    }
    if let Ok(rd) = std::fs::read_dir("/usr/lib") {
        dirs.extend(rd.flatten().map(|e| e.path().join("amdgcn/bitcode")));
    }
    dirs.push("/opt/rocm/amdgcn/bitcode".into());
    dirs.into_iter().find(|d| d.join("ockl.bc").is_file())
}

/// `__oclc_ISA_version` of `gfxMMms` (major, minor, stepping; the last two
/// one hex digit each): gfx1100 is 11000, gfx90a 9010.
fn isa_version(arch: &str) -> Option<u32> {
    let digits = arch.strip_prefix("gfx")?;
    let (major, rest) = digits.split_at(digits.len().checked_sub(2)?);
    let major: u32 = major.parse().ok()?;
    let minor = u32::from_str_radix(&rest[..1], 16).ok()?;
    let step = u32::from_str_radix(&rest[1..], 16).ok()?;
    Some(major * 1000 + minor * 100 + step)
}

/// A device-library folder for `arch`: links to every installed bitcode
/// file, plus `oclc_isa_version_<N>.bc`, which the install lacks.
fn device_libs_with_isa(hc: &Hipcc, arch: &str, tmp: &Path) -> Result<PathBuf, String> {
    let installed = device_lib_dir().ok_or("no installed device libraries (ockl.bc) found")?;
    let dir = tmp.join(format!("device-libs-{arch}"));
    if dir.is_dir() {
        return Ok(dir);
    }
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    for e in std::fs::read_dir(&installed).map_err(|e| e.to_string())?.flatten() {
        std::os::unix::fs::symlink(e.path(), dir.join(e.file_name())).map_err(|e| e.to_string())?;
    }
    let version = isa_version(arch).ok_or(format!("cannot read an ISA version from {arch}"))?;
    let suffix = arch.strip_prefix("gfx").unwrap_or(arch);
    let ll = dir.join("isa.ll");
    std::fs::write(
        &ll,
        format!(
            "target datalayout = \"e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7\"\n\
             target triple = \"amdgcn-amd-amdhsa\"\n\
             @__oclc_ISA_version = linkonce_odr protected local_unnamed_addr addrspace(4) constant i32 {version}, align 4\n"
        ),
    )
    .map_err(|e| e.to_string())?;
    let llvm_as = hc.llvm_bin.as_ref().map(|d| d.join("llvm-as")).filter(|p| p.is_file()).ok_or("no llvm-as beside hipcc's clang")?;
    let out = Command::new(&llvm_as)
        .arg(&ll)
        .arg("-o")
        .arg(dir.join(format!("oclc_isa_version_{suffix}.bc")))
        .output()
        .map_err(|e| format!("{}: {e}", llvm_as.display()))?;
    if !out.status.success() {
        return Err(format!("llvm-as failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok(dir)
}

/// The arguments every compile gets (shown once in the output).
fn hipcc_args(arch: &str) -> Vec<String> {
    ["--genco", "--no-gpu-bundle-output", &format!("--offload-arch={arch}"), "-O3", "-std=c++17"].map(str::to_string).to_vec()
}

/// Compiles `src` for `arch` into `out`: the code object's bytes.
fn compile(hc: &Hipcc, src: &Path, arch: &str, out: &Path, tmp: &Path) -> Result<Vec<u8>, String> {
    let run = |extra: &[String]| {
        Command::new(&hc.hipcc).args(hipcc_args(arch)).args(extra).arg("-o").arg(out).arg(src).output().map_err(|e| e.to_string())
    };
    let mut o = run(&[])?;
    let mut stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    if !o.status.success() && stderr.contains("cannot find ROCm device library for") {
        let dir = device_libs_with_isa(hc, arch, tmp)?;
        o = run(&[format!("--hip-device-lib-path={}", dir.display())])?;
        stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    }
    if !o.status.success() {
        return Err(format!("hipcc failed for {arch}: {}", stderr.trim()));
    }
    let bytes = std::fs::read(out).map_err(|e| format!("{}: {e}", out.display()))?;
    if !bytes.starts_with(b"\x7fELF") {
        return Err(format!("{}: not an ELF code object (an offload bundle?)", out.display()));
    }
    Ok(bytes)
}

// ------------------------------------------------------------ HIP calls

fn ck(e: hip::HipError, what: &str) -> Result<(), String> {
    if e == hip::SUCCESS {
        Ok(())
    } else {
        let (name, text) = hip::error_text(e);
        Err(format!("{what}: {} ({}, {e})", name.to_string_lossy(), text.to_string_lossy()))
    }
}

/// Device memory holding `data`.
struct Buf {
    p: *mut c_void,
    bytes: usize,
}

impl Buf {
    fn new<T: Copy>(data: &[T]) -> Result<Buf, String> {
        let bytes = std::mem::size_of_val(data);
        let mut p = std::ptr::null_mut();
        ck(hip::hipMalloc(&mut p, bytes), "hipMalloc")?;
        ck(hip::hipMemcpyHtoD(p, data.as_ptr() as *mut c_void, bytes), "hipMemcpyHtoD")?;
        Ok(Buf { p, bytes })
    }

    fn zeroed<T: Copy + Default>(n: usize) -> Result<Buf, String> {
        Buf::new(&vec![T::default(); n])
    }

    fn read<T: Copy + Default>(&self) -> Result<Vec<T>, String> {
        let mut v = vec![T::default(); self.bytes / std::mem::size_of::<T>()];
        ck(hip::hipMemcpyDtoHAsync(v.as_mut_ptr().cast(), self.p, self.bytes, std::ptr::null_mut()), "hipMemcpyDtoHAsync")?;
        Ok(v)
    }

    /// The kernel argument: the device pointer.
    fn arg(&self) -> Arg {
        Arg::new(self.p as u64)
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        hip::hipFree(self.p);
    }
}

/// One kernel argument's value, pointed to from `kernelParams`.
struct Arg(Box<[u8]>);

impl Arg {
    fn new<T: Copy>(v: T) -> Arg {
        // SAFETY: a plain value's bytes.
        let b = unsafe { std::slice::from_raw_parts((&v as *const T).cast::<u8>(), std::mem::size_of::<T>()) };
        Arg(b.into())
    }
}

/// A loaded code object.
struct Module {
    m: *mut c_void,
    /// The arch's wavefront size.
    wave: usize,
}

impl Module {
    fn load(image: &[u8], wave: usize) -> Result<Module, String> {
        let mut m = std::ptr::null_mut();
        ck(hip::hipModuleLoadData(&mut m, image.as_ptr().cast()), "hipModuleLoadData")?;
        Ok(Module { m, wave })
    }

    /// Launches `name` on `grid` × `block` (1-D) and waits for it.
    fn launch(&self, name: &str, grid: u32, block: u32, args: &[Arg]) -> Result<(), String> {
        let mut f = std::ptr::null_mut();
        let cname = CString::new(name).unwrap();
        ck(hip::hipModuleGetFunction(&mut f, self.m, cname.as_ptr()), &format!("hipModuleGetFunction({name})"))?;
        let mut stream = std::ptr::null_mut();
        ck(hip::hipStreamCreateWithFlags(&mut stream, 1), "hipStreamCreateWithFlags")?;
        let mut params: Vec<*mut c_void> = args.iter().map(|a| a.0.as_ptr() as *mut c_void).collect();
        let r = hip::hipModuleLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, stream, params.as_mut_ptr(), std::ptr::null_mut());
        ck(r, &format!("hipModuleLaunchKernel({name}, grid {grid}, block {block})"))?;
        let start = Instant::now();
        while hip::hipStreamQuery(stream) == hip::NOT_READY {
            if start.elapsed() > LAUNCH_LIMIT {
                // Its waves still run: leave the stream (and the memory) be.
                return Err(format!("{name} still running after {}s (hung at a barrier or a loop?)", LAUNCH_LIMIT.as_secs()));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let r = ck(hip::hipStreamSynchronize(stream), &format!("{name}: hipStreamSynchronize"));
        hip::hipStreamDestroy(stream);
        r
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        hip::hipModuleUnload(self.m);
    }
}

/// `Err` naming the first few differences between `got` and `want`.
fn compare<T: PartialEq + std::fmt::Debug>(what: &str, got: &[T], want: &[T]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{what}: {} values, expected {}", got.len(), want.len()));
    }
    let bad: Vec<String> =
        (0..got.len()).filter(|&i| got[i] != want[i]).take(4).map(|i| format!("[{i}] = {:?}, expected {:?}", got[i], want[i])).collect();
    if bad.is_empty() {
        Ok(())
    } else {
        let n = (0..got.len()).filter(|&i| got[i] != want[i]).count();
        Err(format!("{what}: {n} of {} wrong: {}", got.len(), bad.join(", ")))
    }
}

// --------------------------------------------------------------- kernels

fn vadd(m: &Module) -> Result<(), String> {
    let n = 1000usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 + 0.1).collect();
    let b: Vec<f32> = (0..n).map(|i| (n - i) as f32 * 0.25 - 7.3).collect();
    // 4 blocks of 256 cover 1024: the last 24 must stay as they were.
    let mut want: Vec<f32> = (0..n).map(|i| a[i] + b[i]).collect();
    want.resize(1024, -1.0);
    let (da, db, dc) = (Buf::new(&a)?, Buf::new(&b)?, Buf::new(&vec![-1.0f32; 1024])?);
    m.launch("vadd", 4, 256, &[da.arg(), db.arg(), dc.arg(), Arg::new(n as i32)])?;
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    compare("c (f32 bits)", &bits(&dc.read::<f32>()?), &bits(&want))
}

fn block_sum(m: &Module) -> Result<(), String> {
    let blocks = 3;
    let input: Vec<i32> = (0..256 * blocks).map(|k| (k as i32 * 37) % 1001 - 500).collect();
    let want: Vec<i32> = input.chunks(256).map(|c| c.iter().sum()).collect();
    let (din, dout) = (Buf::new(&input)?, Buf::zeroed::<i32>(blocks)?);
    m.launch("block_sum", blocks as u32, 256, &[din.arg(), dout.arg()])?;
    compare("block sums", &dout.read::<i32>()?, &want)
}

fn atomic_count(m: &Module) -> Result<(), String> {
    let n = 1000usize;
    let v: Vec<u32> = (0..n as u32).map(|i| i * 3 + 1).collect();
    let (counter, sum, tickets, dv) = (Buf::zeroed::<u32>(1)?, Buf::zeroed::<u32>(1)?, Buf::new(&vec![u32::MAX; n])?, Buf::new(&v)?);
    m.launch("atomic_count", 4, 256, &[counter.arg(), sum.arg(), tickets.arg(), dv.arg(), Arg::new(n as i32)])?;
    compare("counter", &counter.read::<u32>()?, &[n as u32])?;
    compare("sum", &sum.read::<u32>()?, &[v.iter().sum::<u32>()])?;
    let mut t = tickets.read::<u32>()?;
    t.sort_unstable();
    compare("tickets, sorted", &t, &(0..n as u32).collect::<Vec<_>>())
}

fn warp_sums(m: &Module) -> Result<(), String> {
    let (w, n) = (m.wave, 256usize);
    let input: Vec<i32> = (0..n as i32).map(|i| i * i % 97 - 40).collect();
    let sums: Vec<i32> = input.chunks(w).map(|c| c.iter().sum()).collect();
    let want_xor: Vec<i32> = (0..n).map(|i| sums[i / w]).collect();
    let want_rot: Vec<i32> = (0..n).map(|i| input[i / w * w + (i % w + 1) % w]).collect();
    let (din, dx, dd, dr) = (Buf::new(&input)?, Buf::zeroed::<i32>(n)?, Buf::zeroed::<i32>(n / w)?, Buf::zeroed::<i32>(n)?);
    m.launch("warp_sums", 2, 128, &[din.arg(), dx.arg(), dd.arg(), dr.arg()])?;
    compare("__shfl_xor sums", &dx.read::<i32>()?, &want_xor)?;
    compare("__shfl_down sums", &dd.read::<i32>()?, &sums)?;
    compare("__shfl from lane + 1", &dr.read::<i32>()?, &want_rot)
}

fn dmath(m: &Module) -> Result<(), String> {
    let n = 300usize;
    let a: Vec<f64> = (0..n).map(|i| i as f64 * 1.7 + 0.3).collect();
    let b: Vec<f64> = (0..n).map(|i| (i % 13) as f64 - 6.5).collect();
    let (da, db, dq, dr) = (Buf::new(&a)?, Buf::new(&b)?, Buf::zeroed::<f64>(n)?, Buf::zeroed::<f64>(n)?);
    m.launch("dmath", 2, 256, &[da.arg(), db.arg(), dq.arg(), dr.arg(), Arg::new(n as i32)])?;
    // The quotient is correctly rounded: bit for bit.
    let want_q: Vec<u64> = (0..n).map(|i| (a[i] / b[i]).to_bits()).collect();
    compare("a / b (f64 bits)", &dq.read::<f64>()?.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), &want_q)?;
    // v_sqrt_f64 is within an ulp of the exact root.
    let r = dr.read::<f64>()?;
    let bad: Vec<String> = (0..n)
        .filter(|&i| (r[i].to_bits() as i64 - a[i].sqrt().to_bits() as i64).abs() > 1)
        .take(4)
        .map(|i| format!("sqrt({}) = {}, expected {} (within an ulp)", a[i], r[i], a[i].sqrt()))
        .collect();
    if bad.is_empty() { Ok(()) } else { Err(bad.join(", ")) }
}

fn private_array(m: &Module) -> Result<(), String> {
    let n = 300usize;
    let idx: Vec<i32> = (0..n as i32).map(|i| i * 13 + 5).collect();
    let want: Vec<i32> = (0..n as i32)
        .map(|i| {
            let mut a: Vec<i32> = (0..32).map(|k| k * k + i).collect();
            let j = (idx[i as usize] & 31) as usize;
            a[j] += 1000;
            (0..4).map(|k| a[(j + k * 7) & 31]).sum()
        })
        .collect();
    let (di, dout) = (Buf::new(&idx)?, Buf::zeroed::<i32>(n)?);
    m.launch("private_array", 2, 256, &[di.arg(), dout.arg(), Arg::new(n as i32)])?;
    compare("out", &dout.read::<i32>()?, &want)
}

fn branchy(m: &Module) -> Result<(), String> {
    let n = 500usize;
    let input: Vec<i32> = (0..n as i32).map(|i| i * 7919 % 1000 - 300).collect();
    let want: Vec<i32> = input
        .iter()
        .map(|&v| match v % 3 {
            0 => v * 2,
            1 if v & 4 != 0 => v - 7,
            1 => -v,
            _ => (0..(v & 15)).map(|k| k ^ v).sum(),
        })
        .collect();
    let (din, dout) = (Buf::new(&input)?, Buf::zeroed::<i32>(n)?);
    m.launch("branchy", 2, 256, &[din.arg(), dout.arg(), Arg::new(n as i32)])?;
    compare("out", &dout.read::<i32>()?, &want)
}

/// benches/native/reduction.cu, whole: `fill` (a grid-stride loop writing
/// 1.0), then `reduce` (float4 loads, wavefront shuffles, LDS, a
/// barrier) on values set here, each block's partial sum checked. The code
/// object has three kernels (`gpu_read_wall_clock` first): hip-emu must
/// take each kernel's own `.args` and `.kernarg_segment_size` from the
/// metadata, not the first kernel's (the classic kernels are one per file,
/// so they do not depend on it).
fn reduction_baseline(m: &Module) -> Result<(), String> {
    const BLOCK: usize = 256;
    let grid = 3usize;
    let n4 = grid * BLOCK * 5 + 100; // the 4-way loop, then the remainder loop
    let n = n4 * 4;
    let data = Buf::zeroed::<f32>(n)?;
    m.launch("_Z4fillPfm", grid as u32, BLOCK as u32, &[data.arg(), Arg::new(n as u64)])?;
    compare("fill (f32 bits)", &data.read::<f32>()?.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), &vec![1.0f32.to_bits(); n])?;
    // Small integers: every sum is exact, in any order.
    let values: Vec<f32> = (0..n).map(|k| (k % 5) as f32).collect();
    let data = Buf::new(&values)?;
    let partial = Buf::new(&vec![-1.0f32; grid])?;
    m.launch("_Z6reducePK15HIP_vector_typeIfLj4EEmPf", grid as u32, BLOCK as u32, &[data.arg(), Arg::new(n4 as u64), partial.arg()])?;
    let stride = grid * BLOCK;
    let want: Vec<f32> = (0..grid)
        .map(|b| {
            (0..BLOCK)
                .flat_map(|t| (b * BLOCK + t..n4).step_by(stride))
                .map(|i| values[4 * i..4 * i + 4].iter().sum::<f32>())
                .sum()
        })
        .collect();
    compare("partial sums", &partial.read::<f32>()?, &want)
}

type Case = (&'static str, fn(&Module) -> Result<(), String>);

const CLASSIC: [Case; 7] = [
    ("vadd", vadd),
    ("block_sum", block_sum),
    ("atomic_count", atomic_count),
    ("warp_sums", warp_sums),
    ("dmath", dmath),
    ("private_array", private_array),
    ("branchy", branchy),
];

/// What to compile for each emulated arch: the emulated name and the
/// `--offload-arch` names to try, in order.
const ARCHES: [(&str, &[&str]); 3] = [("gfx1100", &["gfx1100"]), ("gfx942", &["gfx942", "gfx940"]), ("gfx90a", &["gfx90a"])];

#[test]
fn hipcc_kernels_on_the_emulator() {
    let Some(hc) = find_hipcc() else {
        println!("SKIPPED: HIP kernels on the emulator: no hipcc ($HIPCC, PATH, $ROCM_PATH/bin, /opt/rocm/bin); apt-get install hipcc rocm-device-libs");
        return;
    };
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let kernels = here.join("tests/kernels");
    let baseline = here.join("../benches/native/reduction.cu");
    let tmp = std::env::temp_dir().join(format!("hip-emu-hipk-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    println!("{}: {}", hc.hipcc.display(), hc.version);
    println!("each kernel: {} {} -o K.co K.hip", hc.hipcc.display(), hipcc_args("ARCH").join(" "));

    let mut results: Vec<(String, Result<(), String>)> = Vec::new();
    for (emulated, offload) in ARCHES {
        // Compile everything for the first --offload-arch hipcc accepts.
        let mut built: Option<(&str, Vec<(&str, Result<Vec<u8>, String>)>)> = None;
        let mut refused = Vec::new();
        for &target in offload {
            let mut objects = Vec::new();
            for (name, _) in CLASSIC {
                let src = kernels.join(format!("{name}.hip"));
                objects.push((name, compile(&hc, &src, target, &tmp.join(format!("{name}-{target}.co")), &tmp)));
            }
            objects.push(("reduction.cu", compile(&hc, &baseline, target, &tmp.join(format!("reduction-{target}.co")), &tmp)));
            let unknown = objects.iter().all(|(_, o)| matches!(o, Err(e) if e.contains("invalid target ID") || e.contains("unknown target")));
            if unknown {
                refused.push(target);
                continue;
            }
            built = Some((target, objects));
            break;
        }
        let Some((target, objects)) = built else {
            let r = Err(format!("hipcc knows none of {refused:?}"));
            println!("FAIL {emulated}: {:?}", r);
            results.push((emulated.to_string(), r));
            continue;
        };
        println!("== {emulated} (code objects for {target})");
        // SAFETY: no other thread reads the environment while it is set
        // (this binary's other test reads none).
        unsafe { std::env::set_var(hip::ARCH_VAR, emulated) };
        if let Err(e) = ck(hip::hipInit(0), "hipInit") {
            println!("FAIL {emulated}: {e}");
            results.push((emulated.to_string(), Err(e)));
            continue;
        }
        let wave = if emulated == "gfx1100" { 32 } else { 64 };
        let cases = CLASSIC.iter().copied().chain([("reduction.cu", reduction_baseline as fn(&Module) -> Result<(), String>)]);
        for ((name, case), (_, object)) in cases.zip(objects) {
            let label = format!("{name} on {emulated}");
            let r = object.and_then(|image| {
                let m = Module::load(&image, wave)?;
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| case(&m))) {
                    Ok(r) => r,
                    Err(p) => Err(format!(
                        "panicked: {}",
                        p.downcast_ref::<String>().map(String::as_str).or(p.downcast_ref::<&str>().copied()).unwrap_or("?")
                    )),
                }
            });
            match &r {
                Ok(()) => println!("PASS {label}"),
                Err(e) => println!("FAIL {label}: {e}"),
            }
            results.push((label, r));
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    let failed: Vec<&str> = results.iter().filter(|(_, r)| r.is_err()).map(|(l, _)| l.as_str()).collect();
    println!("{} of {} passed", results.len() - failed.len(), results.len());
    assert!(failed.is_empty(), "failed: {}", failed.join(", "));
}

#[test]
fn isa_versions() {
    assert_eq!(isa_version("gfx1100"), Some(11000));
    assert_eq!(isa_version("gfx90a"), Some(9010));
    assert_eq!(isa_version("gfx942"), Some(9402));
    assert_eq!(isa_version("gfx1036"), Some(10306));
}
