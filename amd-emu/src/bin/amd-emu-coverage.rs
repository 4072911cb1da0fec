//! `amd-emu-coverage ARCH FILE... [ARCH FILE...]...`: the mnemonics of AMD
//! code objects and whether the emulator implements each, as a Markdown
//! table with one column per ARCH (occurrences summed over its files).
//! `scripts/emulator-coverage.sh` writes `amd-emu/COVERAGE.md` with it.

use std::path::Path;
use std::process::ExitCode;

use amd_emu::decode::{Code, disassemble};

fn main() -> ExitCode {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for a in std::env::args().skip(1) {
        if amd_emu::Arch::parse(&a).is_some() {
            groups.push((a, Vec::new()));
        } else if let Some((_, files)) = groups.last_mut() {
            files.push(a);
        } else {
            groups.clear();
            break;
        }
    }
    if groups.is_empty() || groups.iter().any(|(_, f)| f.is_empty()) {
        eprintln!("usage: amd-emu-coverage ARCH FILE... [ARCH FILE...]...   (ARCH: gfx1100, gfx942, gfx90a)");
        return ExitCode::from(2);
    }
    let mut codes = Vec::new();
    for (arch, files) in &groups {
        // One code per arch: every file's instructions together.
        let mut all = Code::default();
        for f in files {
            match disassemble(Path::new(f), arch) {
                Ok(c) => all.insts.extend(c.insts),
                Err(e) => {
                    eprintln!("amd-emu-coverage: {e}");
                    return ExitCode::from(1);
                }
            }
        }
        codes.push(all);
    }
    let names: Vec<String> = groups.iter().map(|(a, f)| format!("{a} ({} code objects)", f.len())).collect();
    let refs: Vec<&Code> = codes.iter().collect();
    print!("{}", amd_emu::coverage::markdown(&names, &amd_emu::coverage::table(&refs)));
    ExitCode::SUCCESS
}
