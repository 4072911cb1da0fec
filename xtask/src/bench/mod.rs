//! The cross-vendor benchmark matrix (benches/BENCH.md, rendered from [`spec`];
//! results in `bench-results/`): the benchmarks, their baselines and goals
//! ([`spec`]), the JSON row format and its check ([`schema`]), and what is
//! made from all result files ([`matrix`]): a Markdown table ([`render`]) and
//! a latency plot ([`svg`]). [`run`] is `gpurun-dev bench`.

pub mod child;
pub mod matrix;
pub mod native;
pub mod run;
pub mod render;
pub mod schema;
pub mod size_load;
pub mod spec;
pub mod svg;

/// `YYYY-MM-DDThh:mm:ssZ` for `secs` since the Unix epoch (UTC).
pub fn utc_timestamp(secs: u64) -> String {
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Year, month, day of a day count since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, proleptic Gregorian).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Lower-case ASCII letters and digits, runs of anything else as one `-`.
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(utc_timestamp(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_timestamp(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc_timestamp(1_779_280_496), "2026-05-20T12:34:56Z");
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
        assert_eq!(slug("  AMD Instinct MI300X (gfx942) "), "amd-instinct-mi300x-gfx942");
    }
}
