//! Futures on the GPU as on the host: `futures::executor::block_on`, a
//! `ThreadPool` of 4 threads running 32 tasks that talk over channels, and a
//! timer future woken by a sleeping thread. Every `std::thread` here is a
//! GPU warp; wakers are `Thread::unpark` and the pool's own condvars.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::thread;
use std::time::{Duration, Instant};

use futures::channel::{mpsc, oneshot};
use futures::executor::{ThreadPool, block_on};
use futures::task::SpawnExt;
use futures::{SinkExt, StreamExt, join};

/// Ready once `duration` has passed: a helper thread sleeps, then wakes the
/// task (the shape of any timer without an OS timer queue).
struct Sleep {
    state: Arc<Mutex<(bool, Option<Waker>)>>,
}

fn sleep(duration: Duration) -> Sleep {
    let state = Arc::new(Mutex::new((false, None::<Waker>)));
    let s = state.clone();
    thread::spawn(move || {
        thread::sleep(duration);
        let mut st = s.lock().unwrap();
        st.0 = true;
        if let Some(w) = st.1.take() {
            w.wake();
        }
    });
    Sleep { state }
}

impl Future for Sleep {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut st = self.state.lock().unwrap();
        if st.0 {
            Poll::Ready(())
        } else {
            st.1 = Some(cx.waker().clone());
            Poll::Pending
        }
    }
}

async fn square_later(x: u64, ms: u64) -> u64 {
    sleep(Duration::from_millis(ms)).await;
    x * x
}

fn main() {
    // block_on: two futures at once, each waiting on a timer.
    let start = Instant::now();
    let (a, b) = block_on(async { join!(square_later(3, 20), square_later(4, 20)) });
    let waited = start.elapsed();
    println!("block_on: {a} + {b} = {}", a + b);
    println!("block_on: both timers in one wait {}", waited < Duration::from_millis(1000));

    // A pool of 4 threads, 32 tasks: each sends its result over an mpsc
    // channel; a oneshot carries the total back.
    let pool = ThreadPool::builder().pool_size(4).create().expect("a pool of 4 threads");
    let (tx, mut rx) = mpsc::channel::<u64>(8);
    for i in 0..32u64 {
        let mut tx = tx.clone();
        pool.spawn_ok(async move {
            let v = square_later(i, i % 4).await;
            tx.send(v).await.expect("the receiver is alive");
        });
    }
    drop(tx);
    let (done_tx, done_rx) = oneshot::channel();
    pool.spawn_ok(async move {
        let mut sum = 0;
        let mut n = 0;
        while let Some(v) = rx.next().await {
            sum += v;
            n += 1;
        }
        done_tx.send((n, sum)).expect("main is waiting");
    });
    let (n, sum) = block_on(done_rx).expect("the summing task ran");
    let want: u64 = (0..32).map(|i| i * i).sum();
    println!("pool: {n} results, sum {sum} (expected {want})");

    // A task handle's value comes back through block_on.
    let handle = pool.spawn_with_handle(async { square_later(12, 5).await + 1 }).expect("spawned");
    println!("spawn_with_handle: {}", block_on(handle));
    println!("async: ok");
}
