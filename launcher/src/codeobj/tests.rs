use super::*;
use crate::testutil::{amdgpu_elf, elf_header, ptx};

fn amd(bytes: &[u8]) -> AmdgpuInfo {
    match detect(bytes) {
        Ok(Kind::Amdgpu(a)) => a,
        other => panic!("not AMDGPU: {other:?}"),
    }
}

#[test]
fn amdgpu_headers_give_the_arch() {
    for (name, mach, lanes) in [("gfx90a", 0x3f, 64), ("gfx942", 0x4c, 64), ("gfx1100", 0x41, 32)] {
        let a = amd(&amdgpu_elf(mach, None));
        assert_eq!(a.arch, Some(name));
        assert_eq!(a.mach, mach);
        assert_eq!(a.has_entry, None);
        assert_eq!(a.lanes(), lanes, "{name}");
        assert_eq!(a.abi_version, 3);
    }
}

#[test]
fn amdgpu_feature_bits() {
    // gfx90a, xnack off (0x200), sramecc on (0xc00)
    let a = amd(&amdgpu_elf(0x3f | 0x200 | 0xc00, None));
    assert_eq!(a.xnack, Feature::Off);
    assert_eq!(a.sramecc, Feature::On);
    let a = amd(&amdgpu_elf(0x4c | 0x100 | 0x400, None));
    assert_eq!(a.xnack, Feature::Any);
    assert_eq!(a.sramecc, Feature::Any);
}

#[test]
fn kernel_descriptor_is_read() {
    // gfx1100 compiled wave64 (bit 10 clear), and wave32 (bit 10 set).
    let a = amd(&amdgpu_elf(0x41, Some(0)));
    assert_eq!(a.has_entry, Some(true));
    assert_eq!(a.wave32, Some(false));
    assert_eq!(a.lanes(), 64);
    assert_eq!(a.private_segment_size, Some(128));
    let a = amd(&amdgpu_elf(0x41, Some(1 << 10)));
    assert_eq!(a.wave32, Some(true));
    assert_eq!(a.lanes(), 32);
}

#[test]
fn unknown_mach_is_named() {
    let a = amd(&amdgpu_elf(0x7e, None));
    assert_eq!(a.arch, None);
    assert!(a.arch_name().contains("0x7e"));
}

#[test]
fn ptx_and_nvidia_elves() {
    match detect(ptx("8.5", "sm_90").as_bytes()).unwrap() {
        Kind::Ptx(p) => {
            assert_eq!(p.version, (8, 5));
            assert_eq!(p.sm, 90);
            assert!(p.has_entry);
        }
        k => panic!("{k:?}"),
    }
    let cubin = elf_header(EM_CUDA, 90, 0, 0, 0);
    assert_eq!(detect(&cubin).unwrap(), Kind::Cubin { sm: Some(90) });
    assert_eq!(detect(&0xBA55_ED50u32.to_le_bytes()).unwrap(), Kind::Fatbin);
}

#[test]
fn host_and_garbage_files_are_refused() {
    let host = elf_header(62, 0, 0, 0, 0);
    let e = detect(&host).unwrap_err().with_path(Path::new("a.out"));
    assert!(e.to_string().contains("x86-64"), "{e}");
    let e = detect(b"hello").unwrap_err().with_path(Path::new("x"));
    assert!(matches!(e, CodeObjectError::NotGpu { .. }));
    assert!(detect(b"").is_err());
    assert!(detect(b"\x7fELF\x02").is_err());
    let mut trunc = amdgpu_elf(0x3f, None);
    trunc.truncate(40);
    assert!(detect(&trunc).is_err());
}

#[test]
fn truncated_elves_never_panic() {
    let full = amdgpu_elf(0x4c, Some(0));
    for n in 0..full.len() {
        let _ = detect(&full[..n]);
    }
    // Corrupt every byte in turn.
    for i in 0..full.len() {
        let mut b = full.clone();
        b[i] ^= 0xff;
        let _ = detect(&b);
    }
}

/// `CodeObject::read` on a thread, failing the test if it takes over 10 s
/// (a FIFO read blocks until a writer comes; a 2 GiB file read whole is slow).
fn read_quickly(path: &Path) -> Result<CodeObject, CodeObjectError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let p = path.to_path_buf();
    std::thread::spawn(move || tx.send(CodeObject::read(&p)));
    rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap_or_else(|_| panic!("reading {} hung", path.display()))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gpurun-codeobj-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    let _ = std::fs::remove_file(&p);
    p
}

#[test]
fn only_regular_files_are_read() {
    let fifo = scratch("prog.fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.as_ref().is_ok_and(|s| s.success()) {
        let e = read_quickly(&fifo).unwrap_err();
        assert!(matches!(e, CodeObjectError::NotAFile { .. }), "{e}");
        assert_eq!(e.to_string(), format!("{} is a FIFO (named pipe), not a file: gpurun runs a code object file or a crate directory", fifo.display()));
    } else {
        println!("skipped the FIFO: mkfifo failed ({made:?})");
    }
    let e = read_quickly(Path::new("/dev/zero")).unwrap_err();
    assert!(e.to_string().contains("/dev/zero is a character device, not a file"), "{e}");
    let e = read_quickly(Path::new("/nonexistent/p.ptx")).unwrap_err();
    assert_eq!(e.to_string(), "cannot read /nonexistent/p.ptx: No such file or directory (os error 2)");
}

#[test]
fn the_header_is_checked_before_the_rest_is_read_and_size_is_bounded() {
    // 2 GiB, sparse: zeros after a header.
    let big = 2u64 << 30;
    let zeros = scratch("zeros.bin");
    std::fs::File::create(&zeros).unwrap().set_len(big).unwrap();
    let e = read_quickly(&zeros).unwrap_err();
    assert!(matches!(e, CodeObjectError::NotGpu { .. }), "refused from its header: {e}");
    let amd = scratch("big.elf");
    std::fs::write(&amd, amdgpu_elf(0x3f, None)).unwrap();
    std::fs::OpenOptions::new().write(true).open(&amd).unwrap().set_len(big).unwrap();
    let e = read_quickly(&amd).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("{} is {big} bytes, more than the 1 GiB a code object may have: is it the program?", amd.display())
    );
    // A small one is read whole, past the first 4 KiB.
    let text = format!("{}{}", ptx("8.0", "sm_90"), "// padding\n".repeat(1000));
    let p = scratch("prog.ptx");
    std::fs::write(&p, &text).unwrap();
    let code = read_quickly(&p).unwrap();
    assert_eq!(code.bytes, text.as_bytes());
    assert!(matches!(code.kind, Kind::Ptx(_)));
    for f in [zeros, amd, p] {
        let _ = std::fs::remove_file(f);
    }
}
