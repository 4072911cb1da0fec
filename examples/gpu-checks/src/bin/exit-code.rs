//! `process::exit(CODE)` from a spawned thread ends the program with
//! `CODE & 0xff`, as on Linux (`exit-code -1` → 255, `exit-code 263` → 7).
//! CODE is the first argument, 7 without one.
fn main() {
    let code: i32 = match std::env::args().nth(1) {
        Some(a) => a.parse().expect("exit-code: the argument is an i32"),
        None => 7,
    };
    println!("exit-code: exiting with {code} from a spawned thread");
    std::thread::spawn(move || std::process::exit(code)).join().unwrap();
    println!("exit-code: unreachable");
}
