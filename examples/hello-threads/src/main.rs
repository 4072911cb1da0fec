use std::thread;

fn main() {
    let a = thread::spawn(|| {
        let mut sum = 0u64;
        for i in 0..1000 {
            sum += i;
        }
        sum
    });

    let b = thread::spawn(|| {
        let mut product = 1u64;
        for i in 1..20 {
            product *= i;
        }
        product
    });

    let sum = a.join().unwrap();
    let factorial = b.join().unwrap();

    println!("sum: {sum}, factorial: {factorial}");
}
