//! `amd-emu-coverage ARCH FILE...`: the mnemonics of AMD code objects and
//! whether the emulator implements each, as a Markdown table (columns: the
//! files).

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((arch, files)) = args.split_first().filter(|(_, f)| !f.is_empty()) else {
        eprintln!("usage: amd-emu-coverage ARCH FILE...   (ARCH: gfx1100, gfx942, gfx90a)");
        return ExitCode::from(2);
    };
    let mut codes = Vec::new();
    for f in files {
        match amd_emu::decode::disassemble(Path::new(f), arch) {
            Ok(c) => codes.push(c),
            Err(e) => {
                eprintln!("amd-emu-coverage: {e}");
                return ExitCode::from(1);
            }
        }
    }
    let names: Vec<String> =
        files.iter().map(|f| Path::new(f).file_stem().map_or(f.clone(), |s| s.to_string_lossy().into_owned())).collect();
    let refs: Vec<&amd_emu::decode::Code> = codes.iter().collect();
    print!("{}", amd_emu::coverage::markdown(&names, &amd_emu::coverage::table(&refs)));
    ExitCode::SUCCESS
}
