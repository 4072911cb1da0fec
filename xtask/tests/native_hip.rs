//! The native baselines' HIP twins, build-only: every `benches/native/*.cu`
//! compiled with hipcc for gfx90a exactly as `gpurun-dev bench` compiles them
//! on an AMD machine (`bench::native::compile_all`), and each executable
//! holding a gfx90a code object (its clang offload bundle read here). No
//! GPU needed: Debian's `hipcc` and `rocm-device-libs` packages are enough
//! (`.ci/run` installs them). Ignored by default (a minute of compiling on
//! two cores); `scripts/test.sh` runs it with `--ignored --nocapture`, so a
//! machine without hipcc says SKIPPED and why.

use std::path::{Path, PathBuf};
use std::process::Command;

use xtask::bench::native::{self, Compiler};

const ARCH: &str = "gfx90a";

/// The code objects' targets in the clang offload bundle inside `exe`
/// (`hipv4-amdgcn-amd-amdhsa--gfx90a`, ...), each with whether its bytes
/// are an ELF file.
fn bundled_targets(exe: &Path) -> Vec<(String, bool)> {
    const MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";
    let bytes = std::fs::read(exe).unwrap();
    let Some(start) = bytes.windows(MAGIC.len()).position(|w| w == MAGIC) else { return Vec::new() };
    let u64_at = |at: usize| bytes.get(at..at + 8).map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap()) as usize);
    let mut at = start + MAGIC.len();
    let entries = u64_at(at);
    at += 8;
    let mut targets = Vec::new();
    for _ in 0..entries.min(64) {
        let (offset, size, id_len) = (u64_at(at), u64_at(at + 8), u64_at(at + 16));
        at += 24;
        let id = String::from_utf8_lossy(bytes.get(at..at + id_len).unwrap_or_default()).into_owned();
        at += id_len;
        let code = bytes.get(start + offset..start + offset + size).unwrap_or_default();
        targets.push((id, code.starts_with(b"\x7fELF")));
    }
    targets
}

#[test]
#[ignore = "compiles every HIP twin (a minute); scripts/test.sh runs it"]
fn every_native_baseline_compiles_for_gfx90a_with_hipcc() {
    let Some(hipcc) = Compiler::Hipcc.find_here() else {
        println!(
            "SKIPPED: HIP twins of benches/native: no hipcc ({}); apt-get install hipcc rocm-device-libs",
            Compiler::Hipcc.lookup()
        );
        return;
    };
    let version = Command::new(&hipcc).arg("--version").output().map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    let version = version.map_or_else(|e| format!("cannot run it: {e}"), |v| v.lines().next().unwrap_or_default().to_string());
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../benches/native");
    let out: PathBuf = std::env::temp_dir().join(format!("native-hip-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let shown: Vec<String> = Compiler::Hipcc.args(ARCH, Path::new("X.cu"), Path::new("X")).iter().map(|a| a.to_string_lossy().into_owned()).collect();
    println!("{version}\n{} {}", hipcc.display(), shown.join(" "));

    let problems = native::compile_all(Compiler::Hipcc, &hipcc, &src, ARCH, &out);
    assert!(problems.is_empty(), "hipcc failed:\n  {}", problems.join("\n  "));

    let mut sources: Vec<String> = std::fs::read_dir(&src)
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".cu").map(str::to_string))
        .collect();
    sources.sort();
    assert!(sources.len() >= 12, "benches/native has {} baselines: {sources:?}", sources.len());
    let want = format!("hipv4-amdgcn-amd-amdhsa--{ARCH}");
    for name in &sources {
        let targets = bundled_targets(&out.join(name));
        assert!(targets.iter().any(|(id, elf)| *id == want && *elf), "{name}: no {ARCH} code object in its offload bundle: {targets:?}");
        println!("  {name}: {want} code object inside");
    }
    std::fs::remove_dir_all(&out).unwrap();
}
