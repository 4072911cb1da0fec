//! f32/f64 maths on the GPU against values computed on a host (to 1e-12 /
//! 1e-5 relative): the functions LLVM's GPU backends cannot select must be
//! routed to libm and give the right answers. Also 128-bit integers with
//! floats (`u128 as f64`, `f64 as u128`, saturating, and i128 division),
//! which those backends cannot select either, against rustc's own
//! compile-time results.
fn close64(name: &str, got: f64, want: f64) -> bool {
    let ok = (got - want).abs() <= 1e-12 * want.abs().max(1.0);
    println!("maths: {name:6} f64 {got:.15} (want {want:.15}) {}", if ok { "ok" } else { "WRONG" });
    ok
}

fn close32(name: &str, got: f32, want: f32) -> bool {
    let ok = (got - want).abs() <= 1e-5 * want.abs().max(1.0);
    println!("maths: {name:6} f32 {got:.7} (want {want:.7}) {}", if ok { "ok" } else { "WRONG" });
    ok
}

fn main() {
    // black_box: computed at run time on the device, not folded by the compiler.
    let x = std::hint::black_box(0.7_f64);
    let y = std::hint::black_box(2.5_f64);
    let xf = std::hint::black_box(0.7_f32);
    let checks = [
        close64("sin", x.sin(), 0.644217687237691),
        close64("cos", x.cos(), 0.764842187284488),
        close64("tan", x.tan(), 0.842288380463079),
        close64("exp", x.exp(), 2.013752707470477),
        close64("ln", x.ln(), -0.356674943938732),
        close64("log10", x.log10(), -0.154901959985743),
        close64("powf", x.powf(y), 0.409963413001697),
        close64("powi", x.powi(3), 0.343),
        close64("atan2", x.atan2(y), 0.273008703086711),
        close64("sinh", x.sinh(), 0.758583701839533),
        close64("cbrt", y.cbrt(), 1.357208808297453),
        close64("hypot", x.hypot(y), 2.596150997149434),
        close64("sqrt", y.sqrt(), 1.581138830084190),
        close32("sin", xf.sin(), 0.6442177),
        close32("exp", xf.exp(), 2.0137527),
        close32("ln", xf.ln(), -0.3566749),
        close32("powf", xf.powf(2.5), 0.4099634),
    ];
    let checks: Vec<bool> = checks.into_iter().chain(int128()).collect();
    let passed = checks.iter().filter(|&&c| c).count();
    println!("maths: {passed} of {} correct", checks.len());
    std::process::exit(if passed == checks.len() { 0 } else { 1 });
}

fn same<T: PartialEq + std::fmt::Debug>(name: &str, got: T, want: T) -> bool {
    let ok = got == want;
    println!("maths: {name:16} {got:?} (want {want:?}) {}", if ok { "ok" } else { "WRONG" });
    ok
}

/// `as` between floats and 128-bit integers, computed on the device
/// (black_box) against the same expression folded by rustc at compile time.
fn int128() -> Vec<bool> {
    const U: u128 = 12_345_678_901_234_567_890_123_456_789;
    const I: i128 = -98_765_432_109_876_543_210_987_654;
    let (u, i) = (std::hint::black_box(U), std::hint::black_box(I));
    let f = |x: f64| std::hint::black_box(x);
    let g = |x: f32| std::hint::black_box(x);
    vec![
        same("u128 as f64", u as f64, U as f64),
        same("i128 as f32", i as f32, I as f32),
        same("f64 as u128", f(1.5e30) as u128, 1.5e30 as u128),
        same("f64 as u128 NaN", f(f64::NAN) as u128, 0),
        same("f64 as u128 -5", f(-5.0) as u128, 0),
        same("f64 as u128 1e40", f(1e40) as u128, u128::MAX),
        same("f32 as i128", g(-3.5e20) as i128, -3.5e20f32 as i128),
        same("f32 as i128 inf", g(f32::INFINITY) as i128, i128::MAX),
        same("f64 as i128 -1e39", f(-1e39) as i128, i128::MIN),
        same("i128 / and %", (i / 7, i % 13), (I / 7, I % 13)),
    ]
}
