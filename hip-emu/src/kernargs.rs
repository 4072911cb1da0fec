//! The kernarg segment, dispatch packet and queue of a launch, built as
//! ROCm's `clr` builds them (launcher/README.md, "AMD: the kernel's
//! arguments", has the reading of `rocclr/device/rocm/rocvirtual.cpp`,
//! `VirtualGPU::submitKernelInternal`, and `hipamd/src/hip_module.cpp`):
//! one value per explicit argument from the caller's `kernelParams`, each
//! hidden argument written at its metadata offset from the launch, the rest
//! zero.
//!
//! What the emulator has none of is null: the hostcall buffer, the device
//! `malloc` heap, printf, multi-grid sync, device enqueue. Our code objects
//! read none of them (the launcher's README says why); a kernel that did
//! would fault on the null address, and the emulator would say where.

use std::ffi::c_void;

use amd_emu::memory::{self, PRIVATE_APERTURE, SHARED_APERTURE};
use gpu_toolchain::codecheck::KernelArg;

use crate::{HipError, INVALID_VALUE};

/// Bytes of the zeroed stand-in for the `amd_queue_t` (its hardware queue
/// descriptor is 256 bytes, the rest of the struct below 1 KiB).
const QUEUE_BYTES: usize = 1024;
/// `hsa_kernel_dispatch_packet_t`.
const PACKET_BYTES: usize = 64;

/// The memory of one launch: kernarg segment, then packet, then queue,
/// registered as device memory.
pub struct Segment {
    buf: Vec<u64>,
    kernarg_bytes: usize,
}

impl Segment {
    fn base(&self) -> u64 {
        self.buf.as_ptr() as u64
    }
    pub fn kernarg(&self) -> u64 {
        self.base()
    }
    pub fn packet(&self) -> u64 {
        self.base() + self.kernarg_bytes as u64
    }
    pub fn queue(&self) -> u64 {
        self.packet() + PACKET_BYTES as u64
    }
    fn bytes(&mut self) -> &mut [u8] {
        let len = self.buf.len() * 8;
        // SAFETY: the Vec's own bytes.
        unsafe { std::slice::from_raw_parts_mut(self.buf.as_mut_ptr().cast::<u8>(), len) }
    }
    fn put(&mut self, at: usize, v: &[u8]) {
        self.bytes()[at..at + v.len()].copy_from_slice(v);
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        memory::unregister(self.base());
    }
}

/// Builds a launch's segment from the kernel's metadata `args`.
///
/// # Safety
/// `params` holds one valid pointer per explicit (not hidden) argument,
/// each to a value of the argument's size.
pub unsafe fn build(
    args: &[KernelArg],
    kernarg_size: usize,
    params: *mut *mut c_void,
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_lds: u32,
) -> Result<Segment, HipError> {
    let end = args.iter().map(|a| (a.offset + a.size) as usize).max().unwrap_or(0);
    let kernarg_bytes = kernarg_size.max(end).next_multiple_of(64);
    let total = kernarg_bytes + PACKET_BYTES + QUEUE_BYTES;
    let mut seg = Segment { buf: vec![0u64; total / 8], kernarg_bytes };
    let mut explicit = 0;
    for a in args {
        let at = a.offset as usize;
        let u16s = |v: u32| (v as u16).to_le_bytes().to_vec();
        let value: Vec<u8> = match a.kind.as_str() {
            "hidden_block_count_x" => grid[0].to_le_bytes().to_vec(),
            "hidden_block_count_y" => grid[1].to_le_bytes().to_vec(),
            "hidden_block_count_z" => grid[2].to_le_bytes().to_vec(),
            "hidden_group_size_x" => u16s(block[0]),
            "hidden_group_size_y" => u16s(block[1]),
            "hidden_group_size_z" => u16s(block[2]),
            // HIP's grid is whole blocks: no partial last block.
            "hidden_remainder_x" | "hidden_remainder_y" | "hidden_remainder_z" => u16s(0),
            "hidden_grid_dims" => u16s(3),
            "hidden_queue_ptr" => seg.queue().to_le_bytes().to_vec(),
            "hidden_dynamic_lds_size" => dynamic_lds.to_le_bytes().to_vec(),
            "hidden_private_base" => PRIVATE_APERTURE.to_le_bytes().to_vec(),
            "hidden_shared_base" => SHARED_APERTURE.to_le_bytes().to_vec(),
            // Offsets, buffers and queues the emulator has none of: zero.
            k if k.starts_with("hidden_") => continue,
            _ => {
                if params.is_null() {
                    return Err(INVALID_VALUE);
                }
                // SAFETY: the caller's contract: one pointer per explicit argument.
                let p = unsafe { *params.add(explicit) };
                explicit += 1;
                if p.is_null() {
                    return Err(INVALID_VALUE);
                }
                // SAFETY: the value has the argument's size (the caller's contract).
                unsafe { std::slice::from_raw_parts(p.cast::<u8>(), a.size as usize) }.to_vec()
            }
        };
        seg.put(at, &value[..value.len().min(a.size as usize)]);
    }
    // The dispatch packet (hsa_kernel_dispatch_packet_t): setup (dimensions),
    // work-group size, grid size in work-items, segment sizes, kernarg address.
    let p = kernarg_bytes;
    seg.put(p + 2, &3u16.to_le_bytes());
    for d in 0..3 {
        seg.put(p + 4 + 2 * d, &(block[d] as u16).to_le_bytes());
        seg.put(p + 12 + 4 * d, &(grid[d].saturating_mul(block[d])).to_le_bytes());
    }
    seg.put(p + 28, &dynamic_lds.to_le_bytes());
    let k = seg.kernarg().to_le_bytes();
    seg.put(p + 40, &k);
    memory::register(seg.base(), total as u64);
    Ok(seg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arg(offset: u64, size: u64, kind: &str) -> KernelArg {
        KernelArg { offset, size, kind: kind.into() }
    }

    #[test]
    fn explicit_and_hidden_arguments() {
        let args = [
            arg(0, 8, "global_buffer"),
            arg(8, 4, "hidden_block_count_x"),
            arg(12, 4, "hidden_block_count_y"),
            arg(20, 2, "hidden_group_size_x"),
            arg(72, 2, "hidden_grid_dims"),
            arg(88, 8, "hidden_hostcall_buffer"),
            arg(208, 8, "hidden_queue_ptr"),
        ];
        let mut value = 0x1122_3344_5566_7788u64;
        let mut params = [(&mut value as *mut u64).cast::<c_void>()];
        // SAFETY: one pointer to an 8-byte value for the one explicit argument.
        let mut seg = unsafe { build(&args, 264, params.as_mut_ptr(), [5, 1, 1], [64, 1, 1], 0) }.unwrap();
        let queue = seg.queue();
        let b = seg.bytes();
        assert_eq!(&b[0..8], &value.to_le_bytes());
        assert_eq!(&b[8..12], &5u32.to_le_bytes());
        assert_eq!(&b[12..16], &1u32.to_le_bytes());
        assert_eq!(&b[20..22], &64u16.to_le_bytes());
        assert_eq!(&b[72..74], &3u16.to_le_bytes());
        assert_eq!(&b[88..96], &[0; 8]);
        assert_eq!(&b[208..216], &queue.to_le_bytes());
        // The packet: 64 work-items per group, 320 in all.
        let p = 320;
        assert_eq!(&b[p + 4..p + 6], &64u16.to_le_bytes());
        assert_eq!(&b[p + 12..p + 16], &320u32.to_le_bytes());
    }
}
