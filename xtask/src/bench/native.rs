//! The native baselines (`benches/native`): one C++ source each, built with
//! nvcc for an NVIDIA GPU or with hipcc for an AMD one (the sources include
//! `gpu_portable.h`, which maps the CUDA names to HIP's), and the backend
//! their rows carry. The one place that says how they are compiled:
//! `gpurun-dev bench` (building them here), the selftest (from a bundle) and
//! the build-only test of the HIP twins all call [`compile_all`].

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use super::child;

/// Longest one compile may take.
pub const COMPILE_LIMIT: Duration = Duration::from_secs(240);

/// The compiler of one vendor's native baselines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compiler {
    /// NVIDIA: `nvcc`, rows `native-cuda`.
    Nvcc,
    /// AMD: `hipcc` (ROCm's, or Debian's `hipcc` package), rows `native-hip`.
    Hipcc,
}

impl Compiler {
    /// The compiler for a GPU of `backend` ("amd" or "nvidia").
    pub fn for_gpu(backend: &str) -> Compiler {
        if backend == "amd" { Compiler::Hipcc } else { Compiler::Nvcc }
    }

    pub fn name(self) -> &'static str {
        match self {
            Compiler::Nvcc => "nvcc",
            Compiler::Hipcc => "hipcc",
        }
    }

    /// The `backend` of the rows its executables print.
    pub fn row_backend(self) -> &'static str {
        match self {
            Compiler::Nvcc => "native-cuda",
            Compiler::Hipcc => "native-hip",
        }
    }

    /// The `gpurun-dev bench` option that takes prebuilt executables.
    pub fn option(self) -> &'static str {
        match self {
            Compiler::Nvcc => "--native",
            Compiler::Hipcc => "--native-hip",
        }
    }

    /// Where it is looked for, in words (for "not found" messages).
    pub fn lookup(self) -> &'static str {
        match self {
            Compiler::Nvcc => "NVCC, PATH, CUDA_HOME, /usr/local/cuda/bin",
            Compiler::Hipcc => "HIPCC, PATH, ROCM_PATH/bin, /opt/rocm/bin",
        }
    }

    /// `$NVCC`/`$HIPCC` if set (a path that is not a file: none), else on
    /// `PATH`, else in the toolkit's usual folders.
    pub fn find(self, env: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
        let bin = |var: &str| env(var).map(|h| PathBuf::from(h).join("bin"));
        let dirs: Vec<PathBuf> = match self {
            Compiler::Nvcc => ["CUDA_HOME", "CUDA_PATH"].into_iter().filter_map(bin).chain([PathBuf::from("/usr/local/cuda/bin")]).collect(),
            Compiler::Hipcc => bin("ROCM_PATH").into_iter().chain([PathBuf::from("/opt/rocm/bin")]).collect(),
        };
        let var = match self {
            Compiler::Nvcc => "NVCC",
            Compiler::Hipcc => "HIPCC",
        };
        crate::machine::find(var, self.name(), &dirs, env)
    }

    /// [`Compiler::find`] in this process's environment.
    pub fn find_here(self) -> Option<PathBuf> {
        self.find(&|v: &str| std::env::var_os(v).filter(|s| !s.is_empty()))
    }

    /// The arguments that build `source` into the executable `out` for `arch`
    /// (`sm_90`, `gfx90a`). nvcc: `-rdc=true -lcudadevrt` for the device-side
    /// launch of wake_latency.cu. hipcc: it compiles `.cu` as HIP itself.
    pub fn args(self, arch: &str, source: &Path, out: &Path) -> Vec<OsString> {
        let mut a: Vec<OsString> = match self {
            Compiler::Nvcc => vec!["-O3".into(), format!("-arch={arch}").into(), "-std=c++17".into(), "-rdc=true".into()],
            Compiler::Hipcc => vec![format!("--offload-arch={arch}").into(), "-O3".into(), "-std=c++17".into()],
        };
        a.extend(["-o".into(), out.as_os_str().to_owned(), source.as_os_str().to_owned()]);
        if self == Compiler::Nvcc {
            a.push("-lcudadevrt".into());
        }
        a
    }
}

/// Compiles every `*.cu` of `src` into `out/<name>` with the compiler at
/// `path`, a few at a time (one per core); one line per failure (its
/// executable removed, so its rows say not run).
pub fn compile_all(compiler: Compiler, path: &Path, src: &Path, arch: &str, out: &Path) -> Vec<String> {
    let mut sources: Vec<PathBuf> = match std::fs::read_dir(src) {
        Ok(d) => d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "cu")).collect(),
        Err(e) => return vec![format!("no native baselines to compile: cannot list {}: {e}", src.display())],
    };
    sources.sort();
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).min(sources.len());
    let queue = Mutex::new(sources.iter());
    let problems = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while let Some(source) = queue.lock().map_or(None, |mut q| q.next()) {
                    if let Some(p) = compile_one(compiler, path, source, arch, out) {
                        problems.lock().unwrap_or_else(|e| e.into_inner()).push(p);
                    }
                }
            });
        }
    });
    let mut problems = problems.into_inner().unwrap_or_else(|e| e.into_inner());
    problems.sort();
    problems
}

fn compile_one(compiler: Compiler, path: &Path, source: &Path, arch: &str, out: &Path) -> Option<String> {
    let name = source.file_stem()?.to_string_lossy().into_owned();
    let exe = out.join(&name);
    let mut cmd = Command::new(path);
    cmd.args(compiler.args(arch, source, &exe));
    match child::run(cmd, COMPILE_LIMIT) {
        Ok(o) => {
            let failure = o.failure(COMPILE_LIMIT)?;
            let error = o.stderr_tail.iter().find(|l| l.contains("error")).map_or(String::new(), |l| format!(" ({})", l.trim()));
            let _ = std::fs::remove_file(&exe);
            Some(format!("{} failed on {name}.cu: {failure}{error}; its native rows say not run", compiler.name()))
        }
        Err(e) => Some(format!("cannot run {}: {e}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_vendor_has_its_command_line_and_backend() {
        let (src, out) = (Path::new("benches/native/mutex.cu"), Path::new("/tmp/n/mutex"));
        let show = |c: Compiler, arch| c.args(arch, src, out).iter().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ");
        assert_eq!(show(Compiler::Nvcc, "sm_90"), "-O3 -arch=sm_90 -std=c++17 -rdc=true -o /tmp/n/mutex benches/native/mutex.cu -lcudadevrt");
        assert_eq!(show(Compiler::Hipcc, "gfx90a"), "--offload-arch=gfx90a -O3 -std=c++17 -o /tmp/n/mutex benches/native/mutex.cu");
        assert_eq!(Compiler::for_gpu("amd").row_backend(), "native-hip");
        assert_eq!(Compiler::for_gpu("nvidia").row_backend(), "native-cuda");
    }

    #[test]
    fn hipcc_is_looked_for_under_rocm_path() {
        let dir = std::env::temp_dir().join(format!("native-find-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::write(dir.join("bin/hipcc"), "").unwrap();
        let rocm = |v: &str| (v == "ROCM_PATH").then(|| dir.clone().into_os_string());
        assert_eq!(Compiler::Hipcc.find(&rocm), Some(dir.join("bin/hipcc")));
        let off = |v: &str| if v == "HIPCC" { Some(OsString::from("/nonexistent/hipcc")) } else { rocm(v) };
        assert_eq!(Compiler::Hipcc.find(&off), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
