//! Host calls at the launcher's limits.
//! - `emfile FILE`: opens FILE until the program's open-file limit and
//!   prints the error, then shows that a close makes room for one more.
//! - `fifo PATH LINES`: thread `reads-fifo` opens the FIFO at PATH, which
//!   nobody writes, so its host call never ends; three other threads print
//!   LINES lines each meanwhile (more than the ring's slots in all), then
//!   `main` waits for the reader until `gpurun run --timeout` stops it.
use std::fs::File;
use std::io::Read;
use std::thread;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match (args.get(1).map(String::as_str), args.get(2), args.get(3).and_then(|n| n.parse().ok())) {
        (Some("emfile"), Some(path), _) => emfile(path),
        (Some("fifo"), Some(path), Some(lines)) => fifo(path.clone(), lines),
        _ => {
            eprintln!("usage: host-limits emfile FILE | fifo PATH LINES");
            std::process::exit(2);
        }
    }
}

fn emfile(path: &str) {
    let mut open = Vec::new();
    let err = loop {
        match File::open(path) {
            Ok(f) => open.push(f),
            Err(e) => break e,
        }
        if open.len() > 100_000 {
            println!("host-limits: no limit after {} files", open.len());
            std::process::exit(1);
        }
    };
    println!("host-limits: open failed after {} files: {err}", open.len());
    println!("host-limits: kind {:?}, raw {:?}", err.kind(), err.raw_os_error());
    open.pop();
    match File::open(path) {
        Ok(_) => println!("host-limits: open after a close: ok"),
        Err(e) => println!("host-limits: open after a close: {e}"),
    }
}

fn fifo(path: String, lines: u32) {
    let reader = thread::Builder::new()
        .name("reads-fifo".into())
        .spawn(move || {
            println!("host-limits: reads-fifo opens the FIFO");
            let mut f = File::open(&path).expect("open the FIFO");
            let mut buf = [0u8; 16];
            let n = f.read(&mut buf).expect("read the FIFO");
            println!("host-limits: reads-fifo read {n} bytes");
        })
        .expect("spawn reads-fifo");
    let printers: Vec<_> = (0..3)
        .map(|i| {
            thread::Builder::new()
                .name(format!("printer-{i}"))
                .spawn(move || {
                    for k in 0..lines {
                        println!("printer {i} line {k}");
                    }
                })
                .expect("spawn a printer")
        })
        .collect();
    for p in printers {
        p.join().expect("a printer");
    }
    println!("host-limits: printers done, main waits for reads-fifo");
    reader.join().expect("reads-fifo");
}
