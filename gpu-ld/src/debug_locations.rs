//! Debug locations for the calls the rewrites insert.
//!
//! With debug info (`debug = "line-tables-only"` or more in the profile),
//! every call to an inlinable function inside a function that has a
//! `DISubprogram` must carry a `!dbg` location, or LLVM's verifier refuses
//! the module ("inlinable function call in a function with debug info must
//! have a !dbg location"). The rewrites ([`crate::shared_stack`],
//! [`crate::call_stack`], [`crate::int128_float`]) insert calls to their
//! helpers without one. [`locate`] gives each such call the location of the
//! instruction it was inserted beside: the next located instruction of the
//! same function, else the previous one. A location taken from the same
//! function always has a scope inside that function's subprogram.

use crate::ir_text::callee;

/// `ir` with a `!dbg` on every call that lacks one inside a function with
/// debug info; `None` when the module has no debug info or nothing lacked one.
pub fn locate(ir: &str) -> Option<String> {
    if !ir.contains("!llvm.dbg.cu") {
        return None;
    }
    let lines: Vec<&str> = ir.lines().collect();
    let mut out = String::with_capacity(ir.len() + 4096);
    let mut changed = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let located_function = line.starts_with("define ") && line.contains(" !dbg !") && line.trim_end().ends_with('{');
        if !located_function {
            out.push_str(line);
            out.push('\n');
            i += 1;
            continue;
        }
        let end = (i + 1..lines.len()).find(|&k| lines[k] == "}").unwrap_or(lines.len() - 1);
        let body = &lines[i + 1..end];
        out.push_str(line);
        out.push('\n');
        for (k, l) in body.iter().enumerate() {
            if callee(l).is_some() && !l.contains("!dbg !") {
                let borrowed = body[k + 1..].iter().find_map(|n| location(n)).or_else(|| body[..k].iter().rev().find_map(|n| location(n)));
                if let Some(loc) = borrowed {
                    out.push_str(l);
                    out.push_str(", !dbg ");
                    out.push_str(loc);
                    out.push('\n');
                    changed = true;
                    continue;
                }
            }
            out.push_str(l);
            out.push('\n');
        }
        if end < lines.len() {
            out.push_str(lines[end]);
            out.push('\n');
        }
        i = end + 1;
    }
    changed.then_some(out)
}

/// The `!N` of a line's `!dbg !N` attachment.
fn location(line: &str) -> Option<&str> {
    let at = line.find("!dbg !")? + "!dbg ".len();
    let rest = &line[at..];
    let end = rest[1..].find(|c: char| !c.is_ascii_digit()).map_or(rest.len(), |e| e + 1);
    Some(&rest[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    const IR: &str = "\
define internal void @f(i64 %n) unnamed_addr #0 !dbg !10 {
start:
  call void @__gpu_cs.check()
  %a = add i64 %n, 1, !dbg !11
  %old = call i64 @__gpu_ss.get()
  call void @g(i64 %a), !dbg !12
  call void @__gpu_ss.set(i64 %old)
  ret void
}

define internal void @__gpu_cs.check() alwaysinline {
  call void @__gpu_stack_overflow()
  ret void
}

!llvm.dbg.cu = !{!0}
";

    #[test]
    fn inserted_calls_borrow_their_neighbours_locations() {
        let out = locate(IR).expect("changed");
        assert!(out.contains("start:\n  call void @__gpu_cs.check(), !dbg !11\n"), "{out}");
        assert!(out.contains("  %old = call i64 @__gpu_ss.get(), !dbg !12\n"), "{out}");
        assert!(out.contains("  call void @g(i64 %a), !dbg !12\n"), "{out}");
        // The last one has nothing after it: the previous location.
        assert!(out.contains("  call void @__gpu_ss.set(i64 %old), !dbg !12\n  ret void"), "{out}");
        // A function without debug info is left alone.
        assert!(out.contains("alwaysinline {\n  call void @__gpu_stack_overflow()\n  ret void\n}"), "{out}");
    }

    #[test]
    fn no_debug_info_no_change() {
        assert!(locate(&IR.replace("!llvm.dbg.cu = !{!0}\n", "")).is_none());
        assert_eq!(location("  call void @g(), !dbg !123, !noalias !4"), Some("!123"));
        assert!(callee("declare void @g()").is_none());
        assert!(callee("  %x = tail call i64 @h()").is_some());
    }
}
