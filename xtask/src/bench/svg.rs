//! `bench-results/latency.svg`: every latency row of the matrix on one log
//! axis — a marker per backend at p50 and a line from it to p99 — written
//! by hand (no plotting crate).

use std::fmt::Write as _;

use super::matrix::{Matrix, RunFile};

/// (backend, legend label, colour, marker shape)
const SERIES: [(&str, &str, &str, Shape); 5] = [
    ("amd", "GPU-AMD (ours)", "#d62728", Shape::Triangle),
    ("nvidia", "GPU-NVIDIA (ours)", "#2ca02c", Shape::Circle),
    ("cpu", "CPU (std::thread)", "#1f77b4", Shape::Square),
    ("native-cuda", "native CUDA", "#555555", Shape::Diamond),
    ("native-hip", "native HIP", "#9467bd", Shape::Diamond),
];

#[derive(Clone, Copy)]
enum Shape {
    Circle,
    Square,
    Triangle,
    Diamond,
}

const LABEL_W: f64 = 360.0;
const PLOT_W: f64 = 640.0;
const ROW_H: f64 = 18.0;
const TOP: f64 = 60.0;

fn marker(out: &mut String, shape: Shape, x: f64, y: f64, colour: &str) {
    let _ = match shape {
        Shape::Circle => writeln!(out, r#"<circle cx="{x:.1}" cy="{y:.1}" r="4.5" fill="{colour}"/>"#),
        Shape::Square => writeln!(out, r#"<rect x="{:.1}" y="{:.1}" width="8" height="8" fill="{colour}"/>"#, x - 4.0, y - 4.0),
        Shape::Triangle => writeln!(
            out,
            r#"<polygon points="{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}" fill="{colour}"/>"#,
            x,
            y - 5.0,
            x - 5.0,
            y + 4.0,
            x + 5.0,
            y + 4.0
        ),
        Shape::Diamond => writeln!(
            out,
            r#"<polygon points="{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}" fill="{colour}"/>"#,
            x,
            y - 5.0,
            x + 5.0,
            y,
            x,
            y + 5.0,
            x - 5.0,
            y
        ),
    };
}

/// 1 ns, 10 ns, 100 ns, 1 µs, ... for 10^d ns.
fn decade(d: i32) -> String {
    let units = ["ns", "µs", "ms", "s"];
    let (i, rest) = (d.clamp(0, 9) / 3, d.clamp(0, 9) % 3);
    format!("{} {}", 10u64.pow(rest as u32 + (d.max(9) - 9) as u32), units[i as usize])
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The plot of the newest latency rows of every (benchmark, variant).
pub fn render(files: &[RunFile]) -> String {
    let m = Matrix::new(files);
    // (label, [(series index, p50, p99)])
    let mut lines: Vec<(String, Vec<(usize, f64, f64)>)> = Vec::new();
    for (bench, variant) in &m.keys {
        let points: Vec<_> = SERIES
            .iter()
            .enumerate()
            .filter_map(|(i, (backend, ..))| {
                let (p50, p99, _) = m.latest(bench, variant, backend)?.latency()?;
                // Log axis: errors of 0 or less (sleep_accuracy) sit at 1 ns.
                Some((i, p50.max(1.0), p99.max(1.0)))
            })
            .collect();
        if !points.is_empty() {
            let mut label = if variant.is_empty() { bench.clone() } else { format!("{bench} {variant}") };
            if label.chars().count() > 56 {
                label = label.chars().take(55).chain(['…']).collect();
            }
            lines.push((label, points));
        }
    }
    let (lo, hi) = lines.iter().flat_map(|(_, p)| p.iter()).fold((f64::INFINITY, 0f64), |(lo, hi), &(_, a, b)| {
        (lo.min(a), hi.max(b))
    });
    let (d0, d1) = if lines.is_empty() { (0, 3) } else { (lo.log10().floor() as i32, (hi.log10().ceil() as i32).max(lo.log10().floor() as i32 + 1)) };
    let x = |ns: f64| LABEL_W + (ns.log10() - d0 as f64) / (d1 - d0) as f64 * PLOT_W;
    let height = TOP + ROW_H * lines.len().max(1) as f64 + 50.0;
    let width = LABEL_W + PLOT_W + 30.0;

    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(out, r#"<text x="10" y="18" font-size="14">Latency, newest run: marker at p50, line to p99 (log scale)</text>"#);
    // Legend.
    let mut lx = 10.0;
    for (i, (_, label, colour, shape)) in SERIES.into_iter().enumerate() {
        let none = !lines.iter().any(|(_, p)| p.iter().any(|&(s, ..)| s == i));
        marker(&mut out, shape, lx + 5.0, 36.0, colour);
        let label = if none { format!("{label}: no data") } else { label.to_string() };
        let _ = writeln!(out, r#"<text x="{:.0}" y="40">{}</text>"#, lx + 14.0, xml(&label));
        lx += if none { 190.0 } else { 150.0 };
    }
    // Decade grid.
    let bottom = TOP + ROW_H * lines.len().max(1) as f64;
    for d in d0..=d1 {
        let gx = x(10f64.powi(d));
        let _ = writeln!(out, r##"<line x1="{gx:.1}" y1="{:.1}" x2="{gx:.1}" y2="{bottom:.1}" stroke="#ddd"/>"##, TOP - 8.0);
        let _ = writeln!(out, r#"<text x="{gx:.1}" y="{:.1}" text-anchor="middle">{}</text>"#, bottom + 16.0, xml(&decade(d)));
    }
    if lines.is_empty() {
        let _ = writeln!(out, r#"<text x="{LABEL_W}" y="{:.0}">no latency results yet</text>"#, TOP + 10.0);
    }
    for (i, (label, points)) in lines.iter().enumerate() {
        let y = TOP + ROW_H * i as f64 + ROW_H / 2.0;
        let _ = writeln!(out, r#"<text x="{:.0}" y="{:.1}" text-anchor="end">{}</text>"#, LABEL_W - 8.0, y + 4.0, xml(label));
        for &(s, p50, p99) in points {
            let (_, _, colour, shape) = SERIES[s];
            // A little apart, so equal values of two backends both show.
            let y = y + (s as f64 - 2.0) * 2.0;
            let _ = writeln!(out, r#"<line x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{colour}" stroke-width="1.5"/>"#, x(p50), x(p99));
            let _ = writeln!(out, r#"<line x1="{0:.1}" y1="{1:.1}" x2="{0:.1}" y2="{2:.1}" stroke="{colour}"/>"#, x(p99), y - 4.0, y + 4.0);
            marker(&mut out, shape, x(p50), y, colour);
        }
    }
    out.push_str("</svg>\n");
    out
}
