//! Details of std that must print as on Linux: `env::args()[0]` and
//! `env::current_exe()`, `fs::Permissions`' `Debug` (the whole `st_mode`),
//! and every errno's text and `ErrorKind`. What it prints does not depend on
//! where the program runs or how it is named, so the acceptance suite
//! compares a GPU run's stdout with the host's run of the same source
//! (`std-details.expected`, scripts/make-gpu-bundle.sh).
//!
//! The first argument is a directory to write one file in.
use std::env;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

fn main() {
    let args: Vec<String> = env::args().collect();
    // argv[0] is the program's path as the shell (or gpurun run) gave it.
    let arg0 = Path::new(&args[0]);
    println!("args[0] is the program file: {}", arg0.is_file());
    match env::current_exe() {
        Ok(exe) => {
            println!("current_exe is absolute: {}", exe.is_absolute());
            let same = arg0.canonicalize().ok() == exe.canonicalize().ok();
            println!("current_exe is args[0] canonicalised: {same}");
        }
        Err(e) => println!("current_exe failed: {e}"),
    }

    // Directories every Linux has, with the modes they have everywhere.
    for p in ["/", "/tmp", "/dev/null"] {
        match fs::metadata(p) {
            Ok(m) => println!("{p}: {:?}", m.permissions()),
            Err(e) => println!("{p}: {e}"),
        }
    }
    if let Some(dir) = args.get(1) {
        let f = PathBuf::from(dir).join("std-details.txt");
        fs::create_dir_all(dir).unwrap();
        fs::write(&f, b"x").unwrap();
        let mut perm = fs::metadata(&f).unwrap().permissions();
        perm.set_readonly(true);
        fs::set_permissions(&f, perm).unwrap();
        let perm = fs::metadata(&f).unwrap().permissions();
        println!("a read-only file: readonly {} {:?}", perm.readonly(), perm);
        let mut perm = perm;
        perm.set_readonly(false);
        fs::set_permissions(&f, perm).unwrap();
        fs::remove_file(&f).unwrap();
    }

    // Every code Linux defines, and the first past them.
    for code in 0..=134 {
        let e = io::Error::from_raw_os_error(code);
        println!("errno {code}: {e} ({:?})", e.kind());
    }
}
