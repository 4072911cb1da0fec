//! nvptx: whether the program can hand work to the other lanes of its warps.
//!
//! A thread runs on lane 0 of its warp; lanes 1..31 wait at the warp
//! barrier for `gpu_lanes::for_each_lane` work (`rt_common::lanes`). Waiting
//! there is not free: while they are parked, every `nanosleep` of lane 0
//! (`thread::yield_now`, each backoff of a blocked thread) takes about twice
//! as long (76 ns against 40 for a `nanosleep 0` on an H100,
//! `xtask/probes/parked_lanes.cu`). A program that never calls
//! `for_each_lane` has no use for them, and after the whole-program `opt`
//! that is known: the runtime's entry `__gpu_std_lanes_run` (never inlined)
//! is gone. The runtime reads [`SYMBOL`], which it declares and this module
//! defines, to let those lanes return at the kernel's start instead.

/// The byte the nvptx runtime reads at kernel start (`rt_nvptx::start`):
/// 1 if the program can call `for_each_lane`, 0 if not; and the runtime's
/// entry for `for_each_lane` (`rt_abi::abi`).
pub use rt_abi::symbols::{LANES_RUN, LANES_WANTED as SYMBOL};

/// `ir` with the declaration of `@`[`SYMBOL`] turned into a constant: 1
/// where `@`[`LANES_RUN`] is still defined, 0 where it is not. `None` if the
/// module does not declare it (code linked without the nvptx runtime).
pub fn define(ir: &str) -> Option<String> {
    let decl = format!("@{SYMBOL} = external ");
    let at = ir.lines().position(|l| l.starts_with(&decl))?;
    let entry = format!("@{LANES_RUN}(");
    let wanted = ir.lines().any(|l| l.starts_with("define ") && l.contains(&entry));
    let mut out = String::with_capacity(ir.len() + 32);
    for (i, line) in ir.lines().enumerate() {
        if i == at {
            // `external [addrspace(N)] global i8[, align N]` → a constant.
            let rest = &line[decl.len()..];
            let (space, _) = rest.split_once("global i8").unwrap_or(("", ""));
            out.push_str(&format!("@{SYMBOL} = internal {space}constant i8 {}, align 1", u8::from(wanted)));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DECL: &str = "@__gpu_lanes_wanted = external global i8, align 1\n";

    #[test]
    fn one_where_the_lanes_entry_survived_zero_where_not() {
        let used = format!("{DECL}define internal void @__gpu_std_lanes_run(ptr %f, ptr %d) {{\n  ret void\n}}\n");
        let out = define(&used).unwrap();
        assert!(out.starts_with("@__gpu_lanes_wanted = internal constant i8 1, align 1\n"), "{out}");
        assert!(out.contains("define internal void @__gpu_std_lanes_run("));
        let unused = format!("{DECL}declare void @__gpu_std_lanes_run_not(ptr)\ndefine void @main() {{\n  ret void\n}}\n");
        assert!(define(&unused).unwrap().starts_with("@__gpu_lanes_wanted = internal constant i8 0, align 1\n"));
        // A declaration is not a definition: nothing can call into it.
        let declared = format!("{DECL}declare void @__gpu_std_lanes_run(ptr, ptr)\n");
        assert!(define(&declared).unwrap().starts_with("@__gpu_lanes_wanted = internal constant i8 0,"));
    }

    #[test]
    fn keeps_an_address_space_and_leaves_other_modules_alone() {
        let ir = "@__gpu_lanes_wanted = external addrspace(1) global i8\n";
        assert_eq!(define(ir).unwrap(), "@__gpu_lanes_wanted = internal addrspace(1) constant i8 0, align 1\n");
        assert_eq!(define("define void @f() {\n  ret void\n}\n"), None);
    }
}
