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
//! address is taken there. The whole-program `opt` runs the attributor in
//! that mode at its end ([`PASS`]) instead of LLVM's open-world run
//! ([`OPT_FLAGS`]). Code the attributor cannot see (the whole-wave call in
//! module assembly, [`crate::amd_lanes`], is a declaration to it) is assumed
//! to read everything, so its callers keep passing every input.
//!
//! The rewrites after `opt` add calls the attributor did not see: every
//! shared frame's prologue calls the stack-overflow handler when the frame
//! does not fit. The handler reads the work-item and workgroup ids (it
//! names the thread), so [`sound_after_rewrites`] takes each mark the
//! handler lacks off every function: a framed function and all that may
//! call it then pass those inputs. Only those two marks go (hello-threads
//! for gfx90a: 72 bytes of code), and no `opt` over the whole module runs
//! again. hello-threads for gfx90a: 321,400 → 293,368 B.
//!
//! `GPU_LD_AMD_ATTRIBUTOR=0` at build time turns all of this off.

/// The pass the whole-program `opt` runs last on amdgcn.
pub const PASS: &str = "amdgpu-attributor<closed-world>";

/// `opt` flags that go with [`PASS`]: LLVM's own run of the attributor,
/// in an open world, is left out (2.3 of real-crates' 17.8 s of `opt`).
pub const OPT_FLAGS: &[&str] = &["-amdgpu-attributor-enable=0"];

/// Whether the closed-world marks are made: not when
/// `GPU_LD_AMD_ATTRIBUTOR=0`.
pub fn enabled() -> bool {
    std::env::var("GPU_LD_AMD_ATTRIBUTOR").map_or(true, |v| v != "0")
}

/// `ir` with every `amdgpu-no-*` mark that `callee` (a function defined in
/// `ir`) lacks taken off every attribute group: the rewrites added calls
/// to `callee` that the attributor did not see. `ir` unchanged where
/// `callee` is not defined in it (then nothing calls it).
pub fn sound_after_rewrites(ir: &str, callee: &str) -> String {
    let Some(callee_marks) = defined_marks(ir, callee) else { return ir.to_string() };
    let mut out = String::with_capacity(ir.len());
    for line in ir.split_inclusive('\n') {
        if !line.starts_with("attributes #") {
            out.push_str(line);
            continue;
        }
        let mut kept = String::with_capacity(line.len());
        let mut rest = line;
        while let Some(at) = rest.find(" \"amdgpu-no-") {
            let mark_end = rest[at + 2..].find('"').map_or(rest.len(), |e| at + 2 + e + 1);
            let mark = &rest[at + 2..mark_end - 1];
            kept.push_str(&rest[..at]);
            if callee_marks.contains(&mark) {
                kept.push_str(&rest[at..mark_end]);
            }
            rest = &rest[mark_end..];
        }
        kept.push_str(rest);
        out.push_str(&kept);
    }
    out
}

/// The `amdgpu-no-*` marks of function `name`'s attribute group, or `None`
/// where `ir` does not define it with one.
fn defined_marks<'a>(ir: &'a str, name: &str) -> Option<Vec<&'a str>> {
    let header = ir.lines().find(|l| l.starts_with("define ") && crate::ir_text::function_name(l) == name)?;
    let group = header.rsplit(" #").next()?.split_whitespace().next()?;
    let key = format!("attributes #{group} = ");
    let attrs = ir.lines().find_map(|l| l.strip_prefix(key.as_str()))?;
    Some(attrs.split('"').filter(|w| w.starts_with("amdgpu-no-")).collect())
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

    const MODULE: &str = "define void @handler() #0 {\n  ret void\n}\n\
define void @framed() #1 {\n  call void @handler()\n  ret void\n}\n\
attributes #0 = { nounwind \"amdgpu-no-dispatch-ptr\" \"amdgpu-no-queue-ptr\" \"amdgpu-agpr-alloc\"=\"0\" }\n\
attributes #1 = { nounwind \"amdgpu-no-dispatch-ptr\" \"amdgpu-no-queue-ptr\" \"amdgpu-no-workitem-id-x\" \"amdgpu-no-workgroup-id-x\" \"amdgpu-agpr-alloc\"=\"0\" }\n\
attributes #2 = { \"amdgpu-no-workitem-id-x\" }\n";

    #[test]
    fn marks_the_handler_lacks_leave_every_group() {
        let out = sound_after_rewrites(MODULE, "handler");
        assert!(out.contains("attributes #0 = { nounwind \"amdgpu-no-dispatch-ptr\" \"amdgpu-no-queue-ptr\" \"amdgpu-agpr-alloc\"=\"0\" }\n"));
        assert!(out.contains("attributes #1 = { nounwind \"amdgpu-no-dispatch-ptr\" \"amdgpu-no-queue-ptr\" \"amdgpu-agpr-alloc\"=\"0\" }\n"), "{out}");
        assert!(out.contains("attributes #2 = { }\n"), "{out}");
        assert!(out.starts_with("define void @handler() #0 {\n  ret void\n}\ndefine void @framed() #1 {"));
    }

    #[test]
    fn nothing_changes_without_the_handler() {
        assert_eq!(sound_after_rewrites(MODULE, "absent"), MODULE);
    }

    #[test]
    fn callee_lists_are_dropped_and_nothing_else() {
        let ir = "  %3 = call i1 %2(ptr %0), !noalias !7, !callees !12\n  %4 = call i1 %2(ptr %0), !callees !3\n!12 = !{ptr @f}\n";
        assert_eq!(without_callee_lists(ir), "  %3 = call i1 %2(ptr %0), !noalias !7\n  %4 = call i1 %2(ptr %0)\n!12 = !{ptr @f}\n");
    }
}
