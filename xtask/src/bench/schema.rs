//! The row format of `bench-results/*.json` (`benches/BENCH.md`, "Row format") and
//! its check. The renderer accepts only rows that pass [`validate_row`], and
//! `gpurun-dev bench` checks every row before it writes a file.
//!
//! A file is a JSON list of rows. A row is an object with at least the
//! [`REQUIRED`] string fields; `benchmark` is a `benches/BENCH.md` id, `backend` one of
//! [`BACKENDS`], `status` is `measured` or `not run: <reason>`. A measured
//! row has either `p50`, `p99` and `max` (latencies, in `unit` "ns") or a
//! `value` (throughputs, ratios). `variant` (a string, "" for the benchmark
//! proper) and any other fields are optional.

use serde_json::{Map, Value};

use super::spec;

/// Fields every row has, all strings.
pub const REQUIRED: [&str; 8] = ["benchmark", "backend", "device", "driver", "commit", "date", "unit", "status"];

/// Our runtime (`amd`, `nvidia`), the host's std threads (`cpu`), and the
/// vendors' usual way to do the same job (`native-*`).
pub const BACKENDS: [&str; 6] = ["amd", "nvidia", "cpu", "native-cuda", "native-hip", "native-cpu"];

/// The `status` prefix of a row that has no numbers, followed by the reason.
pub const NOT_RUN: &str = "not run: ";

/// Checks one row; the error says what is wrong.
pub fn validate_row(row: &Value) -> Result<(), String> {
    let obj = row.as_object().ok_or("a row must be a JSON object")?;
    for key in REQUIRED {
        match obj.get(key) {
            Some(Value::String(s)) if !s.trim().is_empty() => {}
            Some(Value::String(_)) => return Err(format!("`{key}` is empty")),
            Some(_) => return Err(format!("`{key}` must be a string")),
            None => return Err(format!("`{key}` is missing")),
        }
    }
    let text = |k: &str| obj[k].as_str().unwrap_or_default();
    let id = text("benchmark");
    if spec::get(id).is_none() {
        return Err(format!("`{id}` is not a benchmark id of benches/BENCH.md"));
    }
    if !BACKENDS.contains(&text("backend")) {
        return Err(format!("backend `{}` is not one of {}", text("backend"), BACKENDS.join(", ")));
    }
    if obj.get("variant").is_some_and(|v| !v.is_string()) {
        return Err("`variant` must be a string".into());
    }
    let status = text("status");
    if let Some(reason) = status.strip_prefix(NOT_RUN) {
        if reason.trim().is_empty() {
            return Err("`not run: ` needs a reason".into());
        }
        return Ok(());
    }
    if status != "measured" {
        return Err(format!("status `{status}` is neither `measured` nor `not run: <reason>`"));
    }
    let num = |k: &str| obj.get(k).and_then(Value::as_f64);
    let present = ["p50", "p99", "max"].map(|k| obj.contains_key(k));
    if present.iter().any(|&p| p) {
        let (Some(p50), Some(p99), Some(max)) = (num("p50"), num("p99"), num("max")) else {
            return Err("a latency row needs numbers `p50`, `p99` and `max`".into());
        };
        if !(p50 <= p99 && p99 <= max) {
            return Err(format!("p50 ≤ p99 ≤ max does not hold ({p50}, {p99}, {max})"));
        }
        if text("unit") != "ns" {
            return Err(format!("a latency row's unit must be `ns`, not `{}`", text("unit")));
        }
    } else if num("value").is_none_or(|v| !v.is_finite()) {
        return Err("a measured row needs `p50`/`p99`/`max` or a numeric `value`".into());
    }
    Ok(())
}

/// Checks a file's text: a list of valid rows. Each problem names its row.
pub fn validate_file(text: &str) -> Result<Vec<Row>, Vec<String>> {
    let value: Value = serde_json::from_str(text).map_err(|e| vec![format!("not JSON: {e}")])?;
    let list = value.as_array().ok_or_else(|| vec!["the file must hold a JSON list of rows".to_string()])?;
    let mut rows = Vec::new();
    let mut problems = Vec::new();
    for (i, r) in list.iter().enumerate() {
        match validate_row(r) {
            Ok(()) => rows.push(Row::from_valid(r)),
            Err(e) => {
                let what = r.get("benchmark").and_then(Value::as_str).unwrap_or("?");
                problems.push(format!("row {i} ({what}): {e}"));
            }
        }
    }
    if problems.is_empty() { Ok(rows) } else { Err(problems) }
}

/// A valid row, typed for the renderer.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub benchmark: String,
    pub variant: String,
    pub backend: String,
    pub device: String,
    pub driver: String,
    pub commit: String,
    pub date: String,
    pub unit: String,
    pub status: String,
    /// (p50, p99, max) of a measured latency row.
    pub latency: Option<(f64, f64, f64)>,
    /// `value` of a measured throughput/ratio row.
    pub value: Option<f64>,
    /// Every field, for the optional ones.
    pub fields: Map<String, Value>,
}

impl Row {
    /// From a row that passed [`validate_row`].
    fn from_valid(v: &Value) -> Row {
        let obj = v.as_object().cloned().unwrap_or_default();
        let s = |k: &str| obj.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        let n = |k: &str| obj.get(k).and_then(Value::as_f64);
        let measured = s("status") == "measured";
        let latency = match (n("p50"), n("p99"), n("max")) {
            (Some(a), Some(b), Some(c)) if measured => Some((a, b, c)),
            _ => None,
        };
        Row {
            benchmark: s("benchmark"),
            variant: s("variant"),
            backend: s("backend"),
            device: s("device"),
            driver: s("driver"),
            commit: s("commit"),
            date: s("date"),
            unit: s("unit"),
            status: s("status"),
            latency,
            value: if measured && latency.is_none() { n("value") } else { None },
            fields: obj,
        }
    }

    pub fn measured(&self) -> bool {
        self.status == "measured"
    }

    /// A string field, if present.
    pub fn text(&self, key: &str) -> Option<&str> {
        self.fields.get(key).and_then(Value::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base() -> Value {
        json!({"benchmark": "spawn_join", "backend": "nvidia", "device": "d", "driver": "r", "commit": "c",
               "date": "2026-01-01T00:00:00Z", "unit": "ns", "status": "measured", "p50": 1, "p99": 2, "max": 3})
    }

    fn with(k: &str, v: Value) -> Value {
        let mut r = base();
        r[k] = v;
        r
    }

    fn without(k: &str) -> Value {
        let mut r = base();
        r.as_object_mut().unwrap().remove(k);
        r
    }

    #[test]
    fn accepts_latency_value_and_not_run_rows() {
        assert_eq!(validate_row(&base()), Ok(()));
        let value = json!({"benchmark": "heap", "backend": "native-cuda", "device": "d", "driver": "r", "commit": "c",
                           "date": "x", "unit": "pairs/s", "status": "measured", "value": 1.5e6, "variant": "1_thread"});
        assert_eq!(validate_row(&value), Ok(()));
        let not_run = json!({"benchmark": "reduction", "backend": "amd", "device": "none", "driver": "none",
                             "commit": "c", "date": "x", "unit": "GB/s", "status": "not run: no AMD hardware"});
        assert_eq!(validate_row(&not_run), Ok(()));
    }

    #[test]
    fn rejects_what_the_format_forbids() {
        for k in REQUIRED {
            assert!(validate_row(&without(k)).unwrap_err().contains(k), "{k}");
        }
        assert!(validate_row(&with("benchmark", json!("spawn"))).unwrap_err().contains("not a benchmark id"));
        assert!(validate_row(&with("backend", json!("gpu"))).unwrap_err().contains("backend"));
        assert!(validate_row(&with("status", json!("ok"))).is_err());
        assert!(validate_row(&with("status", json!("not run: "))).is_err());
        assert!(validate_row(&with("device", json!(""))).is_err());
        assert!(validate_row(&with("commit", json!(7))).is_err());
        assert!(validate_row(&with("variant", json!(1))).is_err());
        assert!(validate_row(&with("p99", json!("2"))).is_err());
        assert!(validate_row(&with("p50", json!(5))).unwrap_err().contains("p50 ≤ p99"));
        assert!(validate_row(&with("unit", json!("us"))).is_err());
        assert!(validate_row(&without("p50")).is_err());
        let mut no_numbers = base();
        for k in ["p50", "p99", "max"] {
            no_numbers.as_object_mut().unwrap().remove(k);
        }
        assert!(validate_row(&no_numbers).unwrap_err().contains("value"));
        assert!(validate_row(&json!([1])).is_err());
    }

    #[test]
    fn files_name_their_bad_rows() {
        let ok = format!("[{}]", base());
        assert_eq!(validate_file(&ok).unwrap()[0].latency, Some((1.0, 2.0, 3.0)));
        let bad = format!("[{}, {}]", base(), with("backend", json!("tpu")));
        let e = validate_file(&bad).unwrap_err();
        assert_eq!(e.len(), 1);
        assert!(e[0].starts_with("row 1 (spawn_join)"), "{e:?}");
        assert!(validate_file("{}").is_err());
        assert!(validate_file("nope").is_err());
    }
}
