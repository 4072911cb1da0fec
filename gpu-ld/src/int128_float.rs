//! Float to 128-bit integer conversions the GPU backends cannot select.
//!
//! Rust's `x as u128` / `x as i128` for a float `x` saturates, and rustc
//! emits it as `llvm.fptoui.sat.i128.*` / `llvm.fptosi.sat.i128.*`. Neither
//! the NVPTX nor the AMDGPU backend of this LLVM lowers those: `llc` stops
//! with "unsupported library call operation" (NVPTX) or fails to select
//! (AMDGPU), so one `f64 as u128` anywhere in a program, std's or a crate's,
//! failed the whole link. Each call becomes a call to a helper here that
//! clamps first (NaN to 0, out of range to the type's bounds, as the
//! intrinsic is defined) and then converts with a plain `fptoui`/`fptosi`,
//! which LLVM's `expand-fp-convert` pass turns into integer code (on NVPTX
//! when `llc` is given `-expand-fp-convert-bits=64`, see
//! [`LLC_NVPTX_ARGS`]; AMDGPU expands them by itself).

/// `llc` arguments for NVPTX: expand conversions between floats and integers
/// wider than 64 bits (`u128 as f64`, `f32 as i128`, ...) into integer code;
/// without it the backend asks for a library call it cannot make.
pub const LLC_NVPTX_ARGS: &[&str] = &["-expand-fp-convert-bits=64"];

/// One saturating conversion: the intrinsic's name and the helper's.
struct Conversion {
    signed: bool,
    float: &'static str,
}

const CONVERSIONS: [Conversion; 4] = [
    Conversion { signed: false, float: "float" },
    Conversion { signed: false, float: "double" },
    Conversion { signed: true, float: "float" },
    Conversion { signed: true, float: "double" },
];

impl Conversion {
    fn bits(&self) -> u32 {
        if self.float == "float" { 32 } else { 64 }
    }

    fn op(&self) -> &'static str {
        if self.signed { "fptosi" } else { "fptoui" }
    }

    fn intrinsic(&self) -> String {
        format!("@llvm.{}.sat.i128.f{}", self.op(), self.bits())
    }

    fn helper(&self) -> String {
        format!("@__gpu_ld.{}_sat_i128_f{}", self.op(), self.bits())
    }

    /// The helper's definition. Bounds as IR hex doubles (exact in both
    /// float types): 2^127 = 0x47E0000000000000, -2^127 = 0xC7E0000000000000;
    /// for u128 the upper bound is 2^128 (0x47F0000000000000) in `double`
    /// and infinity in `float`, whose largest finite value is below 2^128.
    fn definition(&self) -> String {
        let (f, op, name) = (self.float, self.op(), self.helper());
        let (low, high, low_value, high_value) = if self.signed {
            ("0xC7E0000000000000", "0x47E0000000000000", "-170141183460469231731687303715884105728", "170141183460469231731687303715884105727")
        } else {
            let high = if self.float == "float" { "0x7FF0000000000000" } else { "0x47F0000000000000" };
            // Above -1.0: (-1, 0) truncates to 0, in range.
            ("0xBFF0000000000000", high, "0", "-1")
        };
        // `fits`: low <= x < high for signed, low < x < high for unsigned
        // (both false for NaN). The conversion sees 0.0 where x does not fit,
        // so it is never poison.
        let low_test = if self.signed { "oge" } else { "ogt" };
        format!(
            r#"
define internal i128 {name}({f} %x) alwaysinline nounwind {{
  %above.low = fcmp {low_test} {f} %x, {low}
  %below.high = fcmp olt {f} %x, {high}
  %fits = and i1 %above.low, %below.high
  %safe = select i1 %fits, {f} %x, {f} 0.0
  %converted = {op} {f} %safe to i128
  %too.high = fcmp oge {f} %x, {high}
  %too.low = fcmp {low_fail} {f} %x, {low}
  %clamped.low = select i1 %too.low, i128 {low_value}, i128 0
  %clamped = select i1 %too.high, i128 {high_value}, i128 %clamped.low
  %result = select i1 %fits, i128 %converted, i128 %clamped
  ret i128 %result
}}
"#,
            low_fail = if self.signed { "olt" } else { "ole" },
        )
    }
}

/// Replaces every saturating float to 128-bit integer conversion in module
/// `ir` by a call to its helper, and adds the helpers used; `None` if the
/// module has none.
pub fn rewrite(ir: &str) -> Option<String> {
    // (conversion, intrinsic call, helper call) of those the module uses,
    // named once: the loop below visits every line of the module.
    let used: Vec<(&Conversion, String, String)> = CONVERSIONS
        .iter()
        .map(|c| (c, format!("{}(", c.intrinsic()), format!("{}(", c.helper())))
        .filter(|(_, call, _)| ir.contains(call.as_str()))
        .collect();
    if used.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(ir.len() + used.len() * 700);
    for line in ir.split_inclusive('\n') {
        let declares = line.starts_with("declare ") && used.iter().any(|(_, call, _)| line.contains(call.as_str()));
        if declares {
            continue;
        }
        let mut line = std::borrow::Cow::Borrowed(line);
        for (_, call, helper) in &used {
            if line.contains(call.as_str()) {
                line = line.replace(call.as_str(), helper).into();
            }
        }
        out.push_str(&line);
    }
    for (c, _, _) in used {
        out.push_str(&c.definition());
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE: &str = "\
define i128 @f(double %d, float %e) {
  %a = call i128 @llvm.fptoui.sat.i128.f64(double %d)
  %b = tail call i128 @llvm.fptosi.sat.i128.f32(float %e) #3
  %c = add i128 %a, %b
  ret i128 %c
}

declare i128 @llvm.fptoui.sat.i128.f64(double) #1
declare i128 @llvm.fptosi.sat.i128.f32(float) #1
declare i64 @llvm.fptoui.sat.i64.f64(double) #1
";

    #[test]
    fn calls_go_to_helpers_and_declarations_go() {
        let out = rewrite(MODULE).unwrap();
        assert!(out.contains("%a = call i128 @__gpu_ld.fptoui_sat_i128_f64(double %d)"), "{out}");
        assert!(out.contains("%b = tail call i128 @__gpu_ld.fptosi_sat_i128_f32(float %e) #3"), "{out}");
        assert!(!out.contains("declare i128 @llvm.fpto"), "{out}");
        // Narrower conversions are the backends' own.
        assert!(out.contains("declare i64 @llvm.fptoui.sat.i64.f64(double) #1"), "{out}");
        assert!(out.contains("define internal i128 @__gpu_ld.fptoui_sat_i128_f64(double %x) alwaysinline nounwind {"));
        assert!(out.contains("define internal i128 @__gpu_ld.fptosi_sat_i128_f32(float %x) alwaysinline nounwind {"));
        // Only the helpers used.
        assert!(!out.contains("@__gpu_ld.fptosi_sat_i128_f64"), "{out}");
        assert_eq!(rewrite("define void @g() {\n  ret void\n}\n"), None);
    }

    /// Every helper is valid IR, and `llc` compiles a module using all four
    /// for both GPU targets (with the NVPTX arguments), where the intrinsics
    /// themselves fail. Needs the pinned toolchain's `llvm-tools` (`.ci/run`
    /// installs them); says SKIPPED without.
    #[test]
    fn llc_compiles_the_helpers_for_both_targets() {
        let Ok(bin) = crate::llvm_bin() else {
            eprintln!("SKIPPED: no llvm-tools in the pinned toolchain");
            return;
        };
        let llc = bin.join("llc");
        let body = "\
declare i128 @llvm.fptoui.sat.i128.f32(float)
declare i128 @llvm.fptoui.sat.i128.f64(double)
declare i128 @llvm.fptosi.sat.i128.f32(float)
declare i128 @llvm.fptosi.sat.i128.f64(double)
define i128 @all(float %f, double %d) {
  %a = call i128 @llvm.fptoui.sat.i128.f32(float %f)
  %b = call i128 @llvm.fptoui.sat.i128.f64(double %d)
  %c = call i128 @llvm.fptosi.sat.i128.f32(float %f)
  %e = call i128 @llvm.fptosi.sat.i128.f64(double %d)
  %s1 = add i128 %a, %b
  %s2 = add i128 %c, %e
  %s = add i128 %s1, %s2
  ret i128 %s
}
";
        let dir = std::env::temp_dir().join(format!("gpu-ld-int128-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (triple, cpu, extra) in [("nvptx64-nvidia-cuda", "sm_90", LLC_NVPTX_ARGS), ("amdgcn-amd-amdhsa", "gfx90a", &[][..])] {
            let before = format!("target triple = \"{triple}\"\n{body}");
            let after = format!("target triple = \"{triple}\"\n{}", rewrite(body).unwrap());
            let compile = |name: &str, text: &str| {
                let path = dir.join(format!("{name}-{cpu}.ll"));
                std::fs::write(&path, text).unwrap();
                std::process::Command::new(&llc)
                    .args([format!("-mcpu={cpu}"), "-O3".into(), "-o".into(), "/dev/null".into()])
                    .args(extra)
                    .arg(&path)
                    .output()
                    .unwrap()
            };
            let out = compile("before", &before);
            assert!(!out.status.success(), "{triple}: the intrinsics now compile; this rewrite may be unneeded");
            let out = compile("after", &after);
            assert!(out.status.success(), "{triple}: {}", String::from_utf8_lossy(&out.stderr));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
