//! Where one println! of `~ln 1_thread 0 {i}` spends its time on the GPU.
use std::io::Write;
use std::time::Instant;

unsafe extern "C" {
    fn __gpu_std_write(fd: u32, ptr: *const u8, len: usize) -> isize;
}

fn per_op(name: &str, n: u32, mut f: impl FnMut(u32)) {
    for i in 0..100 { f(i); }
    let t = Instant::now();
    for i in 0..n { f(i); }
    let ns = t.elapsed().as_secs_f64() * 1e9 / n as f64;
    eprintln!("probe: {name:44} {ns:9.0} ns");
}

fn main() {
    let n = 5000;
    let v = std::hint::black_box("1_thread");
    per_op("format!(\"~ln {v} {t} {i}\")", n, |i| { std::hint::black_box(format!("~ln {v} {} {i}", 0usize)); });
    per_op("String::with_capacity(32) + push_str", n, |_| { let mut s = String::with_capacity(32); s.push_str("~ln 1_thread 0 12345\n"); std::hint::black_box(s); });
    per_op("itoa by hand into [u8; 32]", n, |i| { let mut b = [0u8; 32]; let mut x = i as usize; let mut k = 32; loop { k -= 1; b[k] = b'0' + (x % 10) as u8; x /= 10; if x == 0 { break; } } std::hint::black_box(&b[k..]); });
    per_op("__gpu_std_write(1, 21 bytes)", n, |_| unsafe { __gpu_std_write(1, b"~ln probe 0 0123456\n".as_ptr(), 20); });
    per_op("stdout().write_all(21 bytes) (locked handle)", n, |_| { std::io::stdout().lock().write_all(b"~ln probe 0 0123456\n").unwrap(); });
    per_op("println!(\"~ln probe 0 0123456\")", n, |_| println!("~ln probe 0 0123456"));
    per_op("println!(\"~ln {v} {t} {i}\")", n, |i| println!("~ln {v} {} {i}", 0usize));
    per_op("Instant::now()", n, |_| { std::hint::black_box(Instant::now()); });
}
