//! Row 13: cold start. `gpurun-dev bench` times from starting the process to this
//! line arriving on its stdout; the program itself only has to say it is here.
fn main() {
    println!("cold_start: main reached");
}
