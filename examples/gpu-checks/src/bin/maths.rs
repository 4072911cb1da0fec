//! f32/f64 maths on the GPU against values computed on a host (to 1e-12 /
//! 1e-5 relative): the functions LLVM's GPU backends cannot select must be
//! routed to libm and give the right answers.
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
    let passed = checks.iter().filter(|&&c| c).count();
    println!("maths: {passed} of {} correct", checks.len());
    std::process::exit(if passed == checks.len() { 0 } else { 1 });
}
