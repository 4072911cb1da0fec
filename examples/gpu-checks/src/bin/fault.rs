//! Prints, then writes through a wild pointer: the launcher must report the
//! device fault by name, and the line printed before must not be lost.
fn main() {
    println!("fault: this line is printed before the fault");
    let wild = std::hint::black_box(0x10usize) as *mut u64;
    // SAFETY: not safe at all: this is the fault under test.
    unsafe { wild.write_volatile(1) };
    println!("fault: unreachable");
}
