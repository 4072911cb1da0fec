//! Row 12: a no-op host call round trip (GPU → launcher → GPU): the runtime
//! sends `OP_NOP` with `FLAG_REPLY` through the host ring and waits for the
//! reply (`gpu_lanes::host::host_call_nop`), one round trip per sample.
//! On the host there is no host to call: the row says "not run".
use gpu_benches::{Row, SAMPLES, WARMUP, ns};
use gpu_lanes::host::{HOST_CALL_IS_ROUND_TRIP, host_call_nop};
use std::time::Instant;

fn main() {
    if !HOST_CALL_IS_ROUND_TRIP {
        Row::new("host_call", "", "ns")
            .not_run("a host program has no GPU-to-host round trip to measure")
            .print();
        return;
    }
    let mut samples = Vec::with_capacity(SAMPLES);
    for i in 0..WARMUP + SAMPLES {
        let t = Instant::now();
        host_call_nop();
        if i >= WARMUP {
            samples.push(ns(t.elapsed()));
        }
    }
    Row::new("host_call", "", "ns").latency(&mut samples).print();
}
