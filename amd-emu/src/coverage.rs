//! The emulator's coverage: which mnemonics a code object contains and
//! whether the emulator implements each.

use std::collections::BTreeMap;

use crate::decode::Code;
use crate::ops;

/// One mnemonic: how often it occurs in each code object looked at, and
/// whether the emulator has its semantics.
#[derive(Debug, Default, Clone)]
pub struct Row {
    pub counts: Vec<usize>,
    pub implemented: bool,
}

/// The mnemonics of `codes` (one column each).
pub fn table(codes: &[&Code]) -> BTreeMap<String, Row> {
    let mut rows: BTreeMap<String, Row> = BTreeMap::new();
    for (i, c) in codes.iter().enumerate() {
        for (m, n) in c.mnemonics() {
            let row = rows.entry(m.clone()).or_insert_with(|| Row {
                counts: vec![0; codes.len()],
                implemented: ops::implemented(&m) || m.starts_with("v_dual_"),
            });
            row.counts[i] += n;
        }
    }
    rows
}

/// The table as Markdown, unimplemented mnemonics first.
pub fn markdown(columns: &[String], rows: &BTreeMap<String, Row>) -> String {
    let total = rows.len();
    let done = rows.values().filter(|r| r.implemented).count();
    let mut s = format!("{done} of {total} mnemonics implemented\n\n| mnemonic | implemented |");
    for c in columns {
        s.push_str(&format!(" {c} |"));
    }
    s.push_str("\n|---|---|");
    s.push_str(&"---:|".repeat(columns.len()));
    s.push('\n');
    let mut sorted: Vec<_> = rows.iter().collect();
    sorted.sort_by_key(|(m, r)| (r.implemented, (*m).clone()));
    for (m, r) in sorted {
        s.push_str(&format!("| `{m}` | {} |", if r.implemented { "yes" } else { "**no**" }));
        for n in &r.counts {
            s.push_str(&format!(" {n} |"));
        }
        s.push('\n');
    }
    s
}
