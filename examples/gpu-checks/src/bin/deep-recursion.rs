//! Recursion as deep as real code needs: a named thread builds a linked
//! list of `Box`es `N` long (the first argument, default 1000; a second
//! argument runs that many such threads at once), hashes it
//! recursively, and drops it (`Box`'s drop recurses too), at the default
//! settings. On the host the same source needs nothing special (2 MiB
//! stacks). Past the GPU's depth limit the program must stop with std's
//! `thread 'walker' has overflowed its stack` (exit 134), never with an
//! illegal address.
use std::thread;

enum List {
    Cons(u64, Box<List>),
    Nil,
}

/// Hashes the list by recursion, one call level per element (a polynomial
/// hash, which LLVM cannot turn into a loop as it can a plain sum).
#[inline(never)]
fn hash(list: &List) -> u64 {
    match list {
        List::Cons(v, rest) => hash(rest).wrapping_mul(31).wrapping_add(*v),
        List::Nil => 7,
    }
}

/// The same hash by a loop, to check the recursive one.
fn hash_by_loop(depth: u64) -> u64 {
    // The list holds depth, depth-1, ..., 1 from its head: the innermost
    // call (the tail, value 1) is hashed first.
    (1..=depth).fold(7u64, |h, v| h.wrapping_mul(31).wrapping_add(v))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let depth: u64 = args.next().map_or(1000, |a| a.parse().expect("depth must be a number"));
    // With a second argument, that many walkers recurse at once: past the
    // limit they all overflow together, and the program must print one
    // report, not one per thread.
    let walkers: usize = args.next().map_or(1, |a| a.parse().expect("walkers must be a number"));
    let handles: Vec<_> = (0..walkers)
        .map(|_| {
            thread::Builder::new()
                .name("walker".into())
                .spawn(move || {
                    let mut list = List::Nil;
                    for v in 1..=depth {
                        list = List::Cons(v, Box::new(list));
                    }
                    let total = hash(&list);
                    drop(list);
                    total
                })
                .unwrap()
        })
        .collect();
    for h in handles {
        let total = h.join().unwrap();
        assert_eq!(total, hash_by_loop(depth), "wrong hash at depth {depth}");
        if walkers == 1 {
            println!("deep-recursion: {depth} levels ok (hash {total:#x})");
        }
    }
    if walkers > 1 {
        println!("deep-recursion: {depth} levels ok in {walkers} threads");
    }
}
