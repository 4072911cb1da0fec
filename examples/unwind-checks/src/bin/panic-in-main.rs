//! `main` panics: std's message on stderr (`thread 'main' panicked at
//! ...`), `main`'s locals dropped while unwinding (a line on stdout says
//! so: under panic=abort it never prints), exit code 101.
struct Local;

impl Drop for Local {
    fn drop(&mut self) {
        println!("panic-in-main: main's local dropped while unwinding: {}", std::thread::panicking());
    }
}

fn main() {
    let _local = Local;
    println!("panic-in-main: before the panic");
    panic!("main panics on purpose");
}
