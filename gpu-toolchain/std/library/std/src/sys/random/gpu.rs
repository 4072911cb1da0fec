//! Random bytes on GPUs, from the runtime's generator.

use crate::sys::pal::abi;

/// Fills `bytes` from the runtime's generator, which the launcher seeds with
/// host randomness (for `HashMap` keys; not for cryptography).
pub fn fill_bytes(bytes: &mut [u8]) {
    for chunk in bytes.chunks_mut(8) {
        let word = abi::__gpu_std_random_u64().to_ne_bytes();
        chunk.copy_from_slice(&word[..chunk.len()]);
    }
}
