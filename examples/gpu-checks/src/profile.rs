//! What the profiles (`spawn-profile`, `print-profile`) share: the device
//! clock and one `profile: <what> mean <ns> p50 <ns> p99 <ns>` line per
//! measurement (on stdout; `scripts/gpu-spawn-profile.sh` greps it).
//! Included by each as `#[path = "../profile.rs"] mod profile;`.

/// Timed repetitions of each measurement (after N/10 untimed ones).
pub const N: usize = 2000;

unsafe extern "C" {
    fn __gpu_std_monotonic_ns() -> u64;
}

/// The device clock, in ns.
pub fn now() -> u64 {
    // SAFETY: reads the device clock; no preconditions.
    unsafe { __gpu_std_monotonic_ns() }
}

/// Prints `what`'s mean, p50 and p99.
pub fn report(what: &str, samples: &mut [u64]) {
    samples.sort_unstable();
    let mean = samples.iter().sum::<u64>() / samples.len() as u64;
    println!(
        "profile: {what:<34} mean {mean:>7} ns  p50 {:>7} ns  p99 {:>7} ns",
        samples[samples.len() / 2],
        samples[samples.len() * 99 / 100]
    );
}

/// Times `f(i)` [`N`] times, after N/10 untimed runs.
pub fn time(what: &str, mut f: impl FnMut(usize)) {
    let mut s = Vec::with_capacity(N);
    for i in 0..N + N / 10 {
        let t = now();
        f(i);
        if i >= N / 10 {
            s.push(now() - t);
        }
    }
    report(what, &mut s);
}
