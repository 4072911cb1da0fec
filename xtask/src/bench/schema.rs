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
//!
//! A [`Row`] is read with serde: a missing field or a field of the wrong type
//! is serde's message, prefixed with the field's name; the rules between
//! fields are checked by hand after.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::spec;

/// Fields every row has, all strings.
pub const REQUIRED: [&str; 8] = ["benchmark", "backend", "device", "driver", "commit", "date", "unit", "status"];

/// Our runtime (`amd`, `nvidia`), the host's std threads (`cpu`), and the
/// vendors' usual way to do the same job (`native-*`).
pub const BACKENDS: [&str; 6] = ["amd", "nvidia", "cpu", "native-cuda", "native-hip", "native-cpu"];

/// The `status` prefix of a row that has no numbers, followed by the reason.
pub const NOT_RUN: &str = "not run: ";

/// A row as the files hold it. Deserializing checks the fields' presence and
/// types; [`Row::check`] the rest of the format (ids, backends, the status and
/// the numbers it calls for), which serde cannot say.
///
/// Rows are written as the maps the programs print (the harness adds to
/// them; `serde_json` writes their keys sorted), so only reading is typed.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(expecting = "a JSON object")]
pub struct Row {
    pub benchmark: String,
    /// "" for the benchmark proper.
    #[serde(default)]
    pub variant: String,
    pub backend: String,
    pub device: String,
    pub driver: String,
    pub commit: String,
    pub date: String,
    pub unit: String,
    pub status: String,
    /// A latency row's percentiles, in ns; see [`Row::latency`].
    #[serde(default)]
    p50: Option<f64>,
    #[serde(default)]
    p99: Option<f64>,
    #[serde(default)]
    max: Option<f64>,
    /// A throughput's or ratio's number; see [`Row::value`].
    #[serde(default)]
    value: Option<f64>,
    /// The fields the format leaves open (`note`, `clocks`, `lines_lost`, ...).
    #[serde(flatten)]
    pub fields: Map<String, Value>,
}

/// Checks one row; the error says what is wrong.
pub fn validate_row(row: &Value) -> Result<(), String> {
    Row::from_json(row).map(drop)
}

/// Checks a file's text: a list of valid rows. Each problem names its row.
pub fn validate_file(text: &str) -> Result<Vec<Row>, Vec<String>> {
    // Rows are read one by one so that each bad one is named, not only the first.
    let list: Vec<Value> = match serde_json::from_str::<Value>(text).map_err(|e| vec![format!("not JSON: {e}")])? {
        Value::Array(list) => list,
        _ => return Err(vec!["the file must hold a JSON list of rows".to_string()]),
    };
    let mut rows = Vec::new();
    let mut problems = Vec::new();
    for (i, r) in list.iter().enumerate() {
        match Row::from_json(r) {
            Ok(row) => rows.push(row),
            Err(e) => {
                let what = r.get("benchmark").and_then(Value::as_str).unwrap_or("?");
                problems.push(format!("row {i} ({what}): {e}"));
            }
        }
    }
    if problems.is_empty() { Ok(rows) } else { Err(problems) }
}

impl Row {
    /// The row in `v`, if it is a valid one.
    pub fn from_json(v: &Value) -> Result<Row, String> {
        // The path names the field a type error is about (`commit`, `p99`).
        let row: Row = serde_path_to_error::deserialize(v).map_err(|e| match e.path().to_string().as_str() {
            "." => e.inner().to_string(),
            path => format!("`{path}`: {}", e.inner()),
        })?;
        row.check()?;
        Ok(row)
    }

    /// What the format asks beyond the fields' types.
    fn check(&self) -> Result<(), String> {
        let required = [
            ("benchmark", &self.benchmark),
            ("backend", &self.backend),
            ("device", &self.device),
            ("driver", &self.driver),
            ("commit", &self.commit),
            ("date", &self.date),
            ("unit", &self.unit),
            ("status", &self.status),
        ];
        if let Some((key, _)) = required.iter().find(|(_, v)| v.trim().is_empty()) {
            return Err(format!("`{key}` is empty"));
        }
        if spec::get(&self.benchmark).is_none() {
            return Err(format!("`{}` is not a benchmark id of benches/BENCH.md", self.benchmark));
        }
        if !BACKENDS.contains(&self.backend.as_str()) {
            return Err(format!("backend `{}` is not one of {}", self.backend, BACKENDS.join(", ")));
        }
        if let Some(reason) = self.status.strip_prefix(NOT_RUN) {
            if reason.trim().is_empty() {
                return Err("`not run: ` needs a reason".into());
            }
            return Ok(());
        }
        if !self.measured() {
            return Err(format!("status `{}` is neither `measured` nor `not run: <reason>`", self.status));
        }
        if self.p50.is_some() || self.p99.is_some() || self.max.is_some() {
            let (Some(p50), Some(p99), Some(max)) = (self.p50, self.p99, self.max) else {
                return Err("a latency row needs numbers `p50`, `p99` and `max`".into());
            };
            if !(p50 <= p99 && p99 <= max) {
                return Err(format!("p50 ≤ p99 ≤ max does not hold ({p50}, {p99}, {max})"));
            }
            if self.unit != "ns" {
                return Err(format!("a latency row's unit must be `ns`, not `{}`", self.unit));
            }
        } else if self.value.is_none_or(|v| !v.is_finite()) {
            return Err("a measured row needs `p50`/`p99`/`max` or a numeric `value`".into());
        }
        Ok(())
    }

    pub fn measured(&self) -> bool {
        self.status == "measured"
    }

    /// (p50, p99, max) of a measured latency row.
    pub fn latency(&self) -> Option<(f64, f64, f64)> {
        match (self.p50, self.p99, self.max) {
            (Some(a), Some(b), Some(c)) if self.measured() => Some((a, b, c)),
            _ => None,
        }
    }

    /// `value` of a measured throughput or ratio row.
    pub fn value(&self) -> Option<f64> {
        if self.measured() && self.latency().is_none() { self.value } else { None }
    }

    /// An open string field (`note`, `clocks`), if present.
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
            assert_eq!(validate_row(&with(k, json!(" "))), Err(format!("`{k}` is empty")));
        }
        assert!(validate_row(&with("benchmark", json!("spawn"))).unwrap_err().contains("not a benchmark id"));
        assert!(validate_row(&with("backend", json!("gpu"))).unwrap_err().contains("backend"));
        assert!(validate_row(&with("status", json!("ok"))).is_err());
        assert!(validate_row(&with("status", json!("not run: "))).is_err());
        assert!(validate_row(&with("device", json!(""))).is_err());
        // A field of the wrong type is named.
        assert!(validate_row(&with("commit", json!(7))).unwrap_err().starts_with("`commit`: invalid type: integer `7`"));
        assert!(validate_row(&with("variant", json!(1))).unwrap_err().starts_with("`variant`: "));
        assert!(validate_row(&with("p99", json!("2"))).unwrap_err().starts_with("`p99`: "));
        assert!(validate_row(&with("p50", json!(5))).unwrap_err().contains("p50 ≤ p99"));
        assert!(validate_row(&with("unit", json!("us"))).is_err());
        assert!(validate_row(&without("p50")).is_err());
        let mut no_numbers = base();
        for k in ["p50", "p99", "max"] {
            no_numbers.as_object_mut().unwrap().remove(k);
        }
        assert!(validate_row(&no_numbers).unwrap_err().contains("value"));
        assert_eq!(validate_row(&json!([1])), Err("invalid type: sequence, expected a JSON object".into()));
    }

    #[test]
    fn files_name_their_bad_rows() {
        let ok = format!("[{}]", base());
        assert_eq!(validate_file(&ok).unwrap()[0].latency(), Some((1.0, 2.0, 3.0)));
        let bad = format!("[{}, {}]", base(), with("backend", json!("tpu")));
        let e = validate_file(&bad).unwrap_err();
        assert_eq!(e.len(), 1);
        assert!(e[0].starts_with("row 1 (spawn_join)"), "{e:?}");
        assert!(validate_file("{}").is_err());
        assert!(validate_file("nope").is_err());
    }
}
