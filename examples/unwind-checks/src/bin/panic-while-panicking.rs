//! A `Drop` that panics while its thread unwinds: std does not unwind a
//! second time but aborts, printing "panic in a destructor during cleanup"
//! and "thread caused non-unwinding panic. aborting." (SIGABRT on Linux:
//! gpurun's abort code, 134). Nothing after it runs.
use std::thread;

struct PanicsOnDrop;

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        println!("panic-while-panicking: the Drop runs while unwinding: {}", thread::panicking());
        panic!("the Drop panics during unwinding");
    }
}

fn main() {
    println!("panic-while-panicking: before the panic");
    // In a spawned thread: the abort ends the whole program, not the thread.
    let r = thread::Builder::new()
        .name("double".into())
        .spawn(|| {
            let _d = PanicsOnDrop;
            panic!("the first panic");
        })
        .unwrap()
        .join();
    println!("panic-while-panicking: unreachable: join returned {}", r.is_err());
}
