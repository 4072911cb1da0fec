//! nvptx: the runtime's launch-wide constants and each warp's private state
//! in shared memory.
//!
//! Two globals hold a value that is the same for every lane of a launch and
//! never changes after the kernel's start: [`shared_stack::SLOT_SYMBOL`]
//! (where each lane's stack pointer pair is; every function with a frame
//! reads it first) and [`THREAD_TABLE_SYMBOL`] (the thread table's address;
//! every `my_slot` of the runtime reads it). A third,
//! [`WARP_PRIVATE_SYMBOL`], holds state that only one warp ever reads or
//! writes, one entry per warp of a block: its heap cache and std's reserved
//! thread-locals (`rt_common::slot::WarpPrivate`). In global memory each
//! read is an L1 hit at best, and after every acquire or acq_rel fence,
//! which empties the SM's L1 (`CCTL.IVALL`), an L2 round trip: a spawn+join
//! has a dozen fences and reads them dozens of times. Shared memory is on
//! the SM and no fence empties it.
//!
//! This pass moves each of them to address space 3 (PTX `.shared`), one
//! copy per block, with no initial value, and turns every use into the
//! generic address of that copy (`addrspacecast`), which `llc` makes a
//! `ld.shared`/`st.shared`. That is sound because of the contract with the
//! runtime (`rt_nvptx::start`): every lane stores the constants at kernel
//! start before anything reads them, and all lanes store the same value, so
//! the copy of each block holds what the global held; a warp's leader zeroes
//! its private entry before its first use, and no other warp, of this block
//! or another, uses that entry.
//!
//! AMD keeps them in global memory (its kernel's LDS size and occupancy are
//! another matter, and no AMD GPU could measure it).
//!
//! [`shared_stack::SLOT_SYMBOL`]: crate::shared_stack::SLOT_SYMBOL

use crate::shared_stack::SLOT_SYMBOL;

/// The thread table's address (`LaunchBlock::threads`), stored by every
/// lane at kernel start; each warp's private state, one entry per warp of a
/// block, zeroed by the warp at start (both in `rt_nvptx::start`).
pub use rt_abi::symbols::{THREAD_TABLE as THREAD_TABLE_SYMBOL, WARP_PRIVATE as WARP_PRIVATE_SYMBOL};

/// The globals this pass moves.
pub const SYMBOLS: [&str; 3] = [SLOT_SYMBOL, THREAD_TABLE_SYMBOL, WARP_PRIVATE_SYMBOL];

/// `ir` with each of [`SYMBOLS`] it defines moved to shared memory, and the
/// number moved (0: `ir` returned as it was).
pub fn rewrite(ir: &str) -> (String, usize) {
    let moved: Vec<&str> = SYMBOLS.into_iter().filter(|name| ir.lines().any(|l| is_definition(l, name))).collect();
    if moved.is_empty() {
        return (ir.to_string(), 0);
    }
    let mut out = String::with_capacity(ir.len() + 1024);
    for line in ir.split_inclusive('\n') {
        if moved.iter().any(|name| is_definition(line, name)) {
            out.push_str(&shared_definition(line));
        } else if moved.iter().any(|name| line.contains(name)) {
            out.push_str(&generic_uses(line, &moved));
        } else {
            out.push_str(line);
        }
    }
    (out, moved.len())
}

/// Whether `line` defines global variable `@name` (not a constant, not a
/// declaration).
fn is_definition(line: &str, name: &str) -> bool {
    line.strip_prefix('@').and_then(|l| l.strip_prefix(name)).is_some_and(|l| l.starts_with(" = "))
        && line.contains(" global ")
        && !line.contains(" external ")
}

/// `@x = local_unnamed_addr global [8 x i8] zeroinitializer, align 8` →
/// `@x = local_unnamed_addr addrspace(3) global [8 x i8] undef, align 8`
/// (shared memory has no initial value).
fn shared_definition(line: &str) -> String {
    let keyword = line.find(" global ").expect("is_definition found ` global `");
    let (head, rest) = (&line[..keyword], &line[keyword + " global ".len()..]);
    let (ty, after) = crate::ir_text::split_type(rest);
    let align = after.find(", align ").map_or("", |p| after[p..].trim_end());
    format!("{head} addrspace(3) global {ty} undef{align}\n")
}

/// `line` with each `ptr @NAME` of a moved global replaced by the generic
/// address of its shared copy.
fn generic_uses(line: &str, moved: &[&str]) -> String {
    let mut line = line.to_string();
    for name in moved {
        let plain = format!("ptr @{name}");
        let mut out = String::with_capacity(line.len() + 64);
        let mut rest = line.as_str();
        while let Some(at) = rest.find(&plain) {
            let end = at + plain.len();
            let whole_name = !rest[end..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '$');
            out.push_str(&rest[..at]);
            if whole_name {
                out.push_str(&format!("ptr addrspacecast (ptr addrspace(3) @{name} to ptr)"));
            } else {
                out.push_str(&plain);
            }
            rest = &rest[end..];
        }
        out.push_str(rest);
        line = out;
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    const IR: &str = "@__gpu_stack_slot = local_unnamed_addr global [8 x i8] zeroinitializer, align 8\n\
@__gpu_thread_table = internal global <{ [8 x i8] }> zeroinitializer, align 8\n\
@__gpu_stack_slot_other = global i64 0, align 8\n\
define void @f() {\n\
  %a = load atomic ptr, ptr @__gpu_stack_slot syncscope(\"device\") monotonic, align 8\n\
  store atomic i64 1, ptr @__gpu_thread_table monotonic, align 8\n\
  %b = load i64, ptr @__gpu_stack_slot_other, align 8\n\
  ret void\n\
}\n";

    #[test]
    fn moves_the_definitions_and_turns_uses_into_generic_addresses() {
        let (out, n) = rewrite(IR);
        assert_eq!(n, 2);
        assert!(out.starts_with("@__gpu_stack_slot = local_unnamed_addr addrspace(3) global [8 x i8] undef, align 8\n"), "{out}");
        assert!(out.contains("@__gpu_thread_table = internal addrspace(3) global <{ [8 x i8] }> undef, align 8\n"), "{out}");
        assert!(
            out.contains("load atomic ptr, ptr addrspacecast (ptr addrspace(3) @__gpu_stack_slot to ptr) syncscope(\"device\") monotonic"),
            "{out}"
        );
        assert!(out.contains("store atomic i64 1, ptr addrspacecast (ptr addrspace(3) @__gpu_thread_table to ptr) monotonic"), "{out}");
        // A longer name that starts the same is another global.
        assert!(out.contains("@__gpu_stack_slot_other = global i64 0, align 8\n"), "{out}");
        assert!(out.contains("load i64, ptr @__gpu_stack_slot_other, align 8"), "{out}");
    }

    #[test]
    fn leaves_modules_without_them_alone() {
        let ir = "@__gpu_stack_slot = external global [8 x i8], align 8\ndefine void @g() {\n  ret void\n}\n";
        assert_eq!(rewrite(ir), (ir.to_string(), 0));
    }
}
