//! `process::exit(7)` from a spawned thread ends the program with code 7.
fn main() {
    println!("exit-code: exiting with 7 from a spawned thread");
    std::thread::spawn(|| std::process::exit(7)).join().unwrap();
    println!("exit-code: unreachable");
}
