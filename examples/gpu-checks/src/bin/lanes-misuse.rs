//! A std call that needs the thread (here `println!`) from a lane other
//! than 0 inside `for_each_lane` stops the program with a message (exit
//! 134), instead of racing lane 0 on the thread's state.
fn main() {
    println!("lanes-misuse: lane 1 will print");
    gpu_lanes::for_each_lane(|lane| {
        if lane == 1 {
            println!("lane 1 printing: refused");
        }
    });
    println!("lanes-misuse: not refused ({} lanes)", gpu_lanes::lanes());
}
