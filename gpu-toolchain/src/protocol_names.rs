//! Names shared with the runtime (kept in one place: rt-common's protocol).
pub use rt_common::protocol::{KERNEL_ENTRY, SHARED_STACKS_SYMBOL};
