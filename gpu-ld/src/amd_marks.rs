//! amdgcn: which implicit inputs each function reads, marked over the whole
//! program.
//!
//! An AMDGPU function receives the kernel's implicit inputs (dispatch and
//! queue pointers, the implicit-argument pointer, the dispatch id, the
//! workgroup ids, the LDS kernel id in `s[4:15]`, the work-item ids in
//! `v31`) unless it carries the `amdgpu-no-*` mark for one, which AMD's
//! attributor gives a function only where it proves that nothing the
//! function may call reads that input. In LLVM's default pipeline it runs
//! in an open world, where an indirect call may reach anything, so in Rust
//! (trait objects, `fmt`, thread entry points) almost no function was
//! marked: nearly every call passed every input, and every function that
//! calls kept them live across its calls in callee-saved SGPRs, saved to
//! VGPR lanes in its prologue. The kernel also kept 64 AGPRs for callees it
//! could not see, and listed every hidden kernel argument.
//!
//! `gpu-ld` links the whole program, so the world is closed: every function
//! is in the module, and an indirect call can reach only functions whose
//! address is taken there. So it runs the attributor in that mode ([`PASS`])
//! instead of LLVM's open-world run ([`OPT_FLAGS`]), once, on the whole
//! program after its rewrites (in the `opt` before `llc`, or on the whole
//! module before it is split in parts: a part is no closed world). There
//! it sees every call the rewrites added (a shared frame's prologue calls
//! the stack-overflow handler, a depth check the call stack's, lowered
//! unwinding the exception word's functions), so no mark needs mending
//! afterwards. Code the attributor cannot see (the whole-wave call in
//! module assembly, [`crate::amd_lanes`], linked in after it) is a
//! declaration to it, assumed to read everything, so its callers keep
//! passing every input.
//!
//! Why not in the whole-program `opt`, before the rewrites: the attributor
//! gives up on a function with an indirect `invoke` (it can turn an
//! indirect call, not an invoke, into calls of the functions it may
//! reach), and on everything that may call one. Under `panic = "unwind"`
//! that is nearly the whole program (`fmt`'s trait objects, the panic
//! machinery), so the kernel was passed every implicit input again.
//! [`crate::unwind`] lowers invokes to calls first. Marks made there would
//! also have had to be taken off wherever the rewrites call a function
//! that lacks them.
//!
//! `GPU_LD_AMD_ATTRIBUTOR=0` at build time turns all of this off.

/// The pass `gpu-ld` runs on the whole rewritten program on amdgcn.
pub const PASS: &str = "amdgpu-attributor<closed-world>";

/// Flags for the whole-program `opt` where [`PASS`] runs later: LLVM's own
/// run of the attributor, in an open world, is left out (2.3 of
/// real-crates' 17.8 s of `opt`).
pub const OPT_FLAGS: &[&str] = &["-amdgpu-attributor-enable=0"];

/// Whether the closed-world marks are made: not when
/// `GPU_LD_AMD_ATTRIBUTOR=0`.
pub fn enabled() -> bool {
    std::env::var("GPU_LD_AMD_ATTRIBUTOR").map_or(true, |v| v != "0")
}

/// `ir` without the `!callees` lists on its indirect calls (`, !callees !N`).
///
/// The closed-world attributor attaches to each indirect call the functions
/// it may reach. A list names functions, which a part of a split module
/// would then have to declare ([`crate::amd_parts`]), and it can name a
/// local `alwaysinline` function that parts copy rather than declare.
/// `llc` does not read the lists; the marks on the functions stay.
pub fn without_callee_lists(ir: &str) -> String {
    const KEY: &str = ", !callees !";
    let mut out = String::with_capacity(ir.len());
    let mut rest = ir;
    while let Some(at) = rest.find(KEY) {
        out.push_str(&rest[..at]);
        let after = &rest[at + KEY.len()..];
        rest = &after[after.find(|c: char| !c.is_ascii_digit()).unwrap_or(after.len())..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel that reaches an indirect `invoke` of functions that read no
    /// implicit input, as Rust's `fmt` and panic code are full of, with the
    /// unwinding runtime the lowering needs.
    const INVOKING: &str = "target triple = \"amdgcn-amd-amdhsa\"
@word = internal global ptr null
@table = internal global [2 x ptr] [ptr @a, ptr @b]
define ptr @__gpu_unwind_exception() {\n  %e = load ptr, ptr @word\n  ret ptr %e\n}
define ptr @__gpu_unwind_word() {\n  ret ptr @word\n}
define ptr @__gpu_unwind_catch() {\n  %e = load ptr, ptr @word\n  store ptr null, ptr @word\n  ret ptr %e\n}
define void @__gpu_unwind_resume(ptr %e) {\n  store ptr %e, ptr @word\n  ret void\n}
declare void @__gpu_unwind_raise(ptr)
define internal i32 @rust_eh_personality() {\n  ret i32 0\n}
define internal void @a() {\n  call void @__gpu_unwind_raise(ptr null)\n  ret void\n}
define internal void @b() {\n  ret void\n}
define internal void @dyn_call(i32 %i) personality ptr @rust_eh_personality {
  %p = getelementptr [2 x ptr], ptr @table, i32 0, i32 %i
  %f = load ptr, ptr %p
  invoke void %f()
          to label %ok unwind label %pad
ok:
  ret void
pad:
  %lp = landingpad { ptr, i32 }
          cleanup
  resume { ptr, i32 } %lp
}
define amdgpu_kernel void @kernel(i32 %i) {\n  call void @dyn_call(i32 %i)\n  ret void\n}
";

    /// Whether `opt` with [`PASS`] marks `ir`'s kernel as reading no
    /// dispatch pointer, or `None` without llvm-tools.
    fn kernel_marked(ir: &str, name: &str) -> Option<bool> {
        let Ok(bin) = crate::llvm_bin() else {
            eprintln!("skipped: no llvm-tools (rustup component llvm-tools) for opt");
            return None;
        };
        let dir = std::env::temp_dir().join(format!("gpu-ld-marks-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("in.ll");
        std::fs::write(&file, ir).unwrap();
        let out = std::process::Command::new(bin.join("opt"))
            .args([format!("-passes={PASS}").as_str(), "-mcpu=gfx90a", "-S"])
            .arg(&file)
            .output()
            .unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let marked = String::from_utf8(out.stdout).unwrap();
        let header = marked.lines().find(|l| l.starts_with("define amdgpu_kernel void @kernel(")).expect("the kernel");
        let group = header.rsplit(" #").next().unwrap().split_whitespace().next().unwrap();
        let attrs = marked.lines().find(|l| l.starts_with(&format!("attributes #{group} = "))).unwrap();
        Some(attrs.contains("\"amdgpu-no-dispatch-ptr\""))
    }

    /// Why the marks are made after the rewrites: on the module as the
    /// whole-program `opt` leaves it, the indirect invoke makes the
    /// attributor give up; once [`crate::unwind::lower`] has made it a call,
    /// the kernel is proved to read no dispatch pointer.
    #[test]
    fn marks_are_made_after_the_invokes_are_lowered() {
        let Some(before) = kernel_marked(INVOKING, "before") else { return };
        let (lowered, report) = crate::unwind::lower(INVOKING, false).unwrap().expect("the module unwinds");
        assert_eq!(report.invokes, 1);
        let after = kernel_marked(&lowered, "after").unwrap();
        assert!(after, "the lowered module's kernel is not marked:\n{lowered}");
        // LLVM's side of it: if this starts to hold, marks could be made in
        // the whole-program `opt` again (see the module's comment).
        assert!(!before, "the attributor now sees through an indirect invoke");
    }

    #[test]
    fn callee_lists_are_dropped_and_nothing_else() {
        let ir = "  %3 = call i1 %2(ptr %0), !noalias !7, !callees !12\n  %4 = call i1 %2(ptr %0), !callees !3\n!12 = !{ptr @f}\n";
        assert_eq!(without_callee_lists(ir), "  %3 = call i1 %2(ptr %0), !noalias !7\n  %4 = call i1 %2(ptr %0)\n!12 = !{ptr @f}\n");
    }
}
