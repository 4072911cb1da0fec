//! core's sorts on the GPU, with output equal to the host's: stable and
//! unstable sorts of integers, floats, strings and pairs (stability checked),
//! at sizes on each side of the small-sort thresholds (20, 32, 64) and past
//! the stack scratch buffer (4 KiB), plus the searches and selections built
//! on them. Each case prints a digest of its result; a result that is not
//! sorted, not a permutation of the input, or not stable prints WRONG and
//! the program exits 1.
//!
//! LLVM 22's straight-line strength reduction miscompiled the stable sort
//! on both GPU backends (`Vec<u64>::sort` past 20 elements panicked with
//! "does not correctly implement a total order"): gpu-ld's `NO_SLSR`.
use std::hint::black_box;

/// xorshift64: the same inputs on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// FNV-1a over the values' debug text: equal outputs, equal digests.
fn digest<T: std::fmt::Debug>(v: &[T]) -> u64 {
    let text = format!("{v:?}");
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

fn report<T: std::fmt::Debug>(case: &str, n: usize, result: &[T], ok: bool, failed: &mut u32) {
    if !ok {
        *failed += 1;
    }
    println!("sort: {case:24} n={n:5} digest {:016x} {}", digest(result), if ok { "ok" } else { "WRONG" });
}

/// `sorted` is `input` in order (by `le`), holding the same multiset.
fn is_sorted_permutation<T: Ord + Clone>(input: &[T], sorted: &[T], le: impl Fn(&T, &T) -> bool) -> bool {
    if !sorted.windows(2).all(|w| le(&w[0], &w[1])) {
        return false;
    }
    // The multiset, compared without a sort (the code under test).
    let mut want = std::collections::BTreeMap::new();
    for x in input {
        *want.entry(x.clone()).or_insert(0i64) += 1;
    }
    for x in sorted {
        *want.entry(x.clone()).or_insert(0i64) -= 1;
    }
    want.values().all(|&c| c == 0)
}

const SIZES: [usize; 16] = [0, 1, 2, 7, 8, 16, 17, 20, 21, 32, 33, 64, 65, 100, 600, 3000];

fn main() {
    let mut failed = 0;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for n in SIZES {
        let input: Vec<u64> = (0..n).map(|_| rng.next() % 1000).collect();

        let mut v = input.clone();
        black_box(&mut v).sort();
        let ok = is_sorted_permutation(&input, &v, |a, b| a <= b);
        report("u64 sort", n, &v, ok, &mut failed);

        let mut v = input.clone();
        black_box(&mut v).sort_unstable();
        let ok = is_sorted_permutation(&input, &v, |a, b| a <= b);
        report("u64 sort_unstable", n, &v, ok, &mut failed);

        let mut v = input.clone();
        black_box(&mut v).sort_by(|a, b| b.cmp(a));
        let ok = is_sorted_permutation(&input, &v, |a, b| a >= b);
        report("u64 sort_by reversed", n, &v, ok, &mut failed);

        // Stability: few distinct keys, each pair's second field its input position.
        let pairs: Vec<(u8, u32)> = input.iter().enumerate().map(|(i, &x)| ((x % 7) as u8, i as u32)).collect();
        let mut v = pairs.clone();
        black_box(&mut v).sort_by_key(|p| p.0);
        let ok = is_sorted_permutation(&pairs, &v, |a, b| a.0 < b.0 || (a.0 == b.0 && a.1 < b.1));
        report("pairs sort_by_key stable", n, &v, ok, &mut failed);

        let mut v: Vec<i32> = input.iter().map(|&x| x as i32 - 500).collect();
        let signed = v.clone();
        black_box(&mut v).sort_unstable_by_key(|x| x.unsigned_abs());
        let ok = is_sorted_permutation(&signed, &v, |a, b| a.unsigned_abs() <= b.unsigned_abs());
        report("i32 sort_unstable_by_key", n, &v.iter().map(|x| x.unsigned_abs()).collect::<Vec<_>>(), ok, &mut failed);

        let floats: Vec<f64> = input.iter().map(|&x| (x as f64 - 500.0) / 7.0).collect();
        let mut v = floats.clone();
        black_box(&mut v).sort_by(f64::total_cmp);
        let ok = v.windows(2).all(|w| w[0] <= w[1]) && v.len() == floats.len();
        report("f64 sort_by total_cmp", n, &v, ok, &mut failed);

        let strings: Vec<String> = input.iter().map(|x| format!("s{}", x * 37 % 1000)).collect();
        let mut v = strings.clone();
        black_box(&mut v).sort();
        let ok = is_sorted_permutation(&strings, &v, |a, b| a <= b);
        report("String sort", n, &v, ok, &mut failed);

        if n > 0 {
            let mut v = input.clone();
            let (_, nth, _) = black_box(&mut v).select_nth_unstable(n / 2);
            let nth = *nth;
            let mut sorted = input.clone();
            sorted.sort();
            let ok = nth == sorted[n / 2] && sorted.binary_search(&nth).is_ok();
            report("select_nth + search", n, &[nth], ok, &mut failed);
        }
    }
    if failed > 0 {
        println!("sort: {failed} cases WRONG");
        std::process::exit(1);
    }
    println!("sort: all cases ok");
}
