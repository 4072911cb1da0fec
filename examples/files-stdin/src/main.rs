//! `std::fs` and `io::stdin` on the GPU, as on the host: the same source
//! prints the same lines in both places.
//!
//! `files-stdin INPUT WORKDIR < NUMBERS`: reads INPUT, sums the numbers on
//! stdin, then in WORKDIR (made, filled, checked and removed) writes, appends,
//! seeks, truncates, copies, renames and lists files, has 8 threads write
//! files at once, writes and reads back 3 MiB, and checks the errors std
//! reports for what cannot be done.
//! `files-stdin --denied WORKDIR`: tries to create a file there and prints
//! the error (run with `gpurun run --fs read-only` it is PermissionDenied).

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::thread;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--denied") {
        let dir = Path::new(args.get(2).expect("files-stdin --denied WORKDIR"));
        match File::create(dir.join("denied.txt")) {
            Ok(_) => println!("denied: created a file (the file system is writable)"),
            Err(e) => println!("denied: {:?}", e.kind()),
        }
        return;
    }
    let [_, input, work] = &args[..] else {
        eprintln!("usage: files-stdin INPUT WORKDIR < NUMBERS");
        std::process::exit(2);
    };
    if let Err(e) = run(Path::new(input), Path::new(work)) {
        eprintln!("files-stdin: {e}");
        std::process::exit(1);
    }
}

fn run(input: &Path, work: &Path) -> io::Result<()> {
    // An input file, read whole and by lines.
    let text = fs::read_to_string(input)?;
    let words = text.split_whitespace().count();
    println!("input: {} bytes, {} lines, {words} words", text.len(), text.lines().count());
    let longest = io::BufReader::new(File::open(input)?).lines().map(|l| l.map(|l| l.len())).max_by_key(|l| *l.as_ref().unwrap_or(&0));
    println!("input: longest line {} bytes", longest.transpose()?.unwrap_or(0));

    // stdin: numbers, one per line.
    let mut sum = 0i64;
    let mut count = 0;
    for line in io::stdin().lock().lines() {
        let line = line?;
        if let Ok(n) = line.trim().parse::<i64>() {
            sum += n;
            count += 1;
        }
    }
    println!("stdin: {count} numbers, sum {sum}");
    let cwd = std::env::current_dir()?;
    println!("current_dir: absolute {}", cwd.is_absolute());

    // A work folder of our own.
    if work.exists() {
        fs::remove_dir_all(work)?;
    }
    fs::create_dir_all(work.join("sub/deeper"))?;
    let a = work.join("a.txt");
    fs::write(&a, "first line\n")?;
    let mut f = OpenOptions::new().append(true).open(&a)?;
    writeln!(f, "appended line")?;
    drop(f);
    let mut f = OpenOptions::new().read(true).write(true).open(&a)?;
    f.seek(SeekFrom::Start(0))?;
    f.write_all(b"FIRST")?;
    f.seek(SeekFrom::End(-5))?;
    let mut tail = String::new();
    f.read_to_string(&mut tail)?;
    println!("a.txt: tail {tail:?}, position {}", f.stream_position()?);
    f.set_len(10)?;
    f.sync_all()?;
    drop(f);
    println!("a.txt: {:?}", fs::read_to_string(&a)?);
    let meta = fs::metadata(&a)?;
    println!("a.txt: len {}, file {}, dir {}, readonly {}", meta.len(), meta.is_file(), meta.is_dir(), meta.permissions().readonly());
    let age = meta.modified()?.elapsed().map(|d| d.as_secs() < 3600).unwrap_or(true);
    println!("a.txt: modified within the hour {age}");
    println!("copy: {} bytes", fs::copy(&a, work.join("sub/b.txt"))?);
    fs::rename(work.join("sub/b.txt"), work.join("sub/deeper/c.txt"))?;
    println!("rename: c.txt {:?}", fs::read(work.join("sub/deeper/c.txt"))?.len());

    // Threads writing files at once.
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let path = work.join(format!("thread-{t}.txt"));
            thread::spawn(move || -> io::Result<()> {
                let mut f = io::BufWriter::new(File::create(&path)?);
                for i in 0..1000 {
                    writeln!(f, "thread {t} line {i}")?;
                }
                f.flush()
            })
        })
        .collect();
    for h in handles {
        h.join().expect("writer thread")?;
    }
    let mut lines = 0;
    for t in 0..8 {
        let text = fs::read_to_string(work.join(format!("thread-{t}.txt")))?;
        let ok = text.lines().enumerate().all(|(i, l)| l == format!("thread {t} line {i}"));
        lines += if ok { text.lines().count() } else { 0 };
    }
    println!("threads: {lines} of 8000 lines back in order");

    // More than one host call's worth each way.
    let big: Vec<u8> = (0..3 << 20).map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    fs::write(work.join("big.bin"), &big)?;
    let back = fs::read(work.join("big.bin"))?;
    println!("big: {} bytes written, read back equal {}", big.len(), back == big);

    // The listing, sorted (the host's order is the file system's).
    let mut names: Vec<String> = fs::read_dir(work)?
        .map(|e| e.map(|e| format!("{}{}", e.file_name().to_string_lossy(), if e.file_type().map(|t| t.is_dir()).unwrap_or(false) { "/" } else { "" })))
        .collect::<io::Result<_>>()?;
    names.sort();
    println!("read_dir: {}", names.join(" "));

    // What cannot be done, as std reports it.
    let kind = |r: io::Result<()>| r.map_or_else(|e| format!("{:?}", e.kind()), |()| "ok".into());
    println!("error: open missing -> {}", kind(File::open(work.join("missing")).map(drop)));
    println!("error: create_new existing -> {}", kind(OpenOptions::new().write(true).create_new(true).open(&a).map(drop)));
    println!("error: remove_dir non-empty -> {}", kind(fs::remove_dir(work.join("sub"))));
    println!("error: read_dir of a file -> {}", kind(fs::read_dir(&a).map(drop)));
    println!("error: remove_file missing -> {}", kind(fs::remove_file(work.join("missing"))));
    let e = File::open(work.join("missing")).unwrap_err();
    println!("error: message {:?}", e.to_string().split(" (os error").next().unwrap_or(""));

    fs::remove_dir_all(work)?;
    println!("cleanup: work folder exists {}", work.exists());
    Ok(())
}
