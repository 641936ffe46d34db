//! SVG charts: a bar chart of medians per workload, and a log-log curve of
//! median against size for workloads measured at several sizes.

use super::{fmt_value, sizes};
use anyhow::{Result, anyhow};
use latency::Record;
use plotters::prelude::*;
use std::path::Path;

/// A chart that was written.
#[derive(Debug, Clone)]
pub struct Chart {
    pub title: String,
    /// The file name, relative to the report.
    pub file: String,
}

const PALETTE: [RGBColor; 6] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
];

fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// The label of a record within its workload: subject, parameters, size.
fn label(r: &Record, with_size: bool) -> String {
    let mut s = r.subject.clone();
    for (k, v) in &r.params {
        s.push_str(&format!(" {k}={v}"));
    }
    if with_size && let Some(n) = r.size {
        s.push_str(&format!(" n={n}"));
    }
    s
}

/// Draws every chart of one system into `dir`.
pub fn draw_all(system: &str, records: &[&Record], dir: &Path) -> Result<Vec<Chart>> {
    let mut workloads: Vec<&str> = Vec::new();
    for r in records {
        if !workloads.contains(&r.workload.as_str()) {
            workloads.push(&r.workload);
        }
    }
    let mut charts = Vec::new();
    for w in workloads {
        let recs: Vec<&Record> = records
            .iter()
            .copied()
            .filter(|r| r.workload == w)
            .collect();
        let file = format!("{}-{}.svg", slug(system), slug(w));
        let path = dir.join(&file);
        let title = format!("{system}: {w}");
        if sizes(&recs).len() >= 2 {
            curve(&title, &recs, &path)?;
        } else {
            bars(&title, &recs, &path)?;
        }
        charts.push(Chart { title, file });
    }
    Ok(charts)
}

fn fmt_size(v: f64) -> String {
    match v {
        v if v >= 1e6 => format!("{}M", v / 1e6),
        v if v >= 1e3 => format!("{}k", v / 1e3),
        v => format!("{v}"),
    }
}

fn err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("plotting: {e:?}")
}

/// Horizontal bars of the median, with a whisker to p90, labelled above.
fn bars(title: &str, recs: &[&Record], path: &Path) -> Result<()> {
    let unit = recs.first().map_or("ns", |r| r.unit.as_str());
    let n = recs.len();
    let xmax = recs.iter().map(|r| r.summary.p90).max().unwrap_or(1).max(1) as f64 * 1.3;
    let height = 100 + 60 * n as u32;
    let root = SVGBackend::new(path, (900, height)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(10)
        .build_cartesian_2d(0f64..xmax, 0f64..n as f64)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_desc(format!("median, whisker to p90 ({unit})"))
        .x_label_formatter(&|v| fmt_value(*v, unit))
        .draw()
        .map_err(err)?;
    // Row i (from the top) spans y in [n-1-i, n-i): label, then bar.
    let row = |i: usize| (n - 1 - i) as f64;
    chart
        .draw_series(recs.iter().enumerate().map(|(i, r)| {
            let y = row(i);
            Rectangle::new(
                [(0.0, y + 0.1), (r.summary.p50 as f64, y + 0.55)],
                PALETTE[i % PALETTE.len()].filled(),
            )
        }))
        .map_err(err)?;
    chart
        .draw_series(recs.iter().enumerate().map(|(i, r)| {
            let y = row(i) + 0.325;
            PathElement::new(
                vec![(r.summary.p50 as f64, y), (r.summary.p90 as f64, y)],
                BLACK.stroke_width(2),
            )
        }))
        .map_err(err)?;
    chart
        .draw_series(recs.iter().enumerate().map(|(i, r)| {
            EmptyElement::at((r.summary.p90 as f64, row(i) + 0.325))
                + Text::new(
                    fmt_value(r.summary.p50 as f64, unit),
                    (6, -7),
                    ("sans-serif", 13),
                )
        }))
        .map_err(err)?;
    chart
        .draw_series(recs.iter().enumerate().map(|(i, r)| {
            EmptyElement::at((0.0, row(i) + 0.95))
                + Text::new(label(r, true), (4, 0), ("sans-serif", 14))
        }))
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}

/// Median against size, log-log, one line per subject and parameter set.
fn curve(title: &str, recs: &[&Record], path: &Path) -> Result<()> {
    let unit = recs.first().map_or("ns", |r| r.unit.as_str());
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for r in recs {
        let Some(size) = r.size else { continue };
        let key = label(r, false);
        let point = (size.max(1) as f64, r.summary.p50.max(1) as f64);
        match series.iter_mut().find(|(k, _)| *k == key) {
            Some((_, pts)) => pts.push(point),
            None => series.push((key, vec![point])),
        }
    }
    for (_, pts) in &mut series {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, 1f64, f64::MAX, 1f64);
    for &(x, y) in series.iter().flat_map(|(_, p)| p.iter()) {
        (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
    }
    let root = SVGBackend::new(path, (900, 520)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(
            (x0 / 1.5..x1 * 1.5).log_scale(),
            (y0 / 2.0..y1 * 2.0).log_scale(),
        )
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("size")
        .x_label_formatter(&|v| fmt_size(*v))
        .y_labels(12)
        .y_desc(format!("median ({unit})"))
        .y_label_formatter(&|v| fmt_value(*v, unit))
        .draw()
        .map_err(err)?;
    for (i, (name, pts)) in series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
            .map_err(err)?
            .label(name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 4, color.filled())))
            .map_err(err)?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use latency::{Run, Sample, SubjectInfo};

    fn records(sizes: &[u64]) -> Vec<Record> {
        let mut out = Vec::new();
        for &n in sizes {
            let subjects = ["ours", "peer"]
                .map(|s| SubjectInfo {
                    name: s.into(),
                    version: "1".into(),
                })
                .to_vec();
            let mut run = Run::new("sys", "work load", subjects).size(n);
            run.rounds = (1..20)
                .map(|k| vec![Sample::ns(k * n), Sample::ns(k * n * 2)])
                .collect();
            out.extend(run.records().unwrap());
        }
        out
    }

    #[test]
    fn writes_bar_and_curve_svgs() {
        let dir = std::env::temp_dir().join(format!("xtask-charts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let one = records(&[10]);
        let refs: Vec<&Record> = one.iter().collect();
        let charts = draw_all("sys", &refs, &dir).unwrap();
        assert_eq!(charts.len(), 1);
        assert_eq!(charts[0].file, "sys-work-load.svg");
        let svg = std::fs::read_to_string(dir.join(&charts[0].file)).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("ours") && svg.contains("<rect"));

        let many = records(&[10, 100, 1000]);
        let refs: Vec<&Record> = many.iter().collect();
        let charts = draw_all("sys", &refs, &dir).unwrap();
        let svg = std::fs::read_to_string(dir.join(&charts[0].file)).unwrap();
        assert!(
            svg.contains("<polyline") && svg.contains("peer"),
            "a curve per subject"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
