//! SVG charts: a bar chart of medians per workload, and a log-log curve of
//! median against size for workloads measured at several sizes.

use super::{fmt_value, sizes};
use anyhow::{Result, anyhow};
use latency::Record;
use plotters::coord::combinators::BindKeyPoints;
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

/// One unit for a whole axis, chosen from its largest value, so that the
/// axis title names it once and the ticks are plain numbers: (divisor,
/// name). Units other than nanoseconds stay as they are.
fn axis_unit(max: f64, unit: &str) -> (f64, String) {
    if unit != "ns" {
        return (1.0, unit.to_string());
    }
    match max {
        m if m >= 1e9 => (1e9, "s".into()),
        m if m >= 1e6 => (1e6, "ms".into()),
        m if m >= 1e3 => (1e3, "µs".into()),
        _ => (1.0, "ns".into()),
    }
}

/// A tick label: a number in the axis unit, as short as it can be read.
fn tick(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 100.0 || (a.fract() == 0.0 && a >= 1.0) {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .into()
    } else {
        format!("{v:.3}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .into()
    }
}

/// Key points for a log axis over [lo, hi]: 1, 2 and 5 times each power of
/// ten inside it (and 1.5, 3, 7 when that gives fewer than four), so that a
/// range of less than a decade still has several labelled ticks.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let mut steps: &[f64] = &[1.0, 2.0, 5.0];
    loop {
        let mut out = Vec::new();
        let mut p = 10f64.powf(lo.max(f64::MIN_POSITIVE).log10().floor());
        while p <= hi {
            for &m in steps {
                let v = p * m;
                if v >= lo && v <= hi {
                    out.push(v);
                }
            }
            p *= 10.0;
        }
        if out.len() >= 4 || steps.len() > 3 {
            return out;
        }
        steps = &[1.0, 1.5, 2.0, 3.0, 5.0, 7.0];
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
    let (div, shown) = axis_unit(xmax, unit);
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
        .x_desc(format!("median, whisker to p90 ({shown})"))
        .x_label_formatter(&|v| tick(*v / div))
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
            (x0 / 1.5..x1 * 1.5)
                .log_scale()
                .with_key_points(log_ticks(x0 / 1.5, x1 * 1.5)),
            (y0 / 2.0..y1 * 2.0)
                .log_scale()
                .with_key_points(log_ticks(y0 / 2.0, y1 * 2.0)),
        )
        .map_err(err)?;
    let (div, shown) = axis_unit(y1 * 2.0, unit);
    chart
        .configure_mesh()
        .x_desc("size")
        .x_label_formatter(&|v| fmt_size(*v))
        .y_desc(format!("median ({shown})"))
        .y_label_formatter(&|v| tick(*v / div))
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

    /// The text of every `<text>` element of an SVG.
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                Some(
                    t.split_once(">")?
                        .1
                        .split_once("</text>")?
                        .0
                        .trim()
                        .to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn axes_name_their_unit_once_and_ticks_are_numbers() {
        let dir = std::env::temp_dir().join(format!("xtask-units-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // Bars in the microseconds: the title says µs, ticks are plain.
        let one = records(&[1000]);
        let refs: Vec<&Record> = one.iter().collect();
        let c = draw_all("sys", &refs, &dir).unwrap();
        let t = texts(&std::fs::read_to_string(dir.join(&c[0].file)).unwrap());
        assert!(
            t.iter().any(|x| x == "median, whisker to p90 (µs)"),
            "{t:?}"
        );
        assert!(!t.iter().any(|x| x.contains("(ns)")), "{t:?}");
        assert!(t.iter().any(|x| x == "0"), "the first tick is 0: {t:?}");
        assert!(!t.iter().any(|x| x.starts_with("0.00")), "{t:?}");
        // A log-log curve over less than a decade still reads: several
        // labelled ticks on each axis.
        let narrow = records(&[1000, 2000, 3000]);
        let refs: Vec<&Record> = narrow.iter().collect();
        let c = draw_all("sys", &refs, &dir).unwrap();
        let t = texts(&std::fs::read_to_string(dir.join(&c[0].file)).unwrap());
        assert!(t.iter().any(|x| x == "median (µs)"), "{t:?}");
        let numbers = t.iter().filter(|x| x.parse::<f64>().is_ok()).count();
        assert!(numbers >= 4, "y ticks: {t:?}");
        let sizes = t.iter().filter(|x| x.ends_with('k')).count();
        assert!(sizes >= 3, "x ticks: {t:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn log_ticks_cover_narrow_and_wide_ranges() {
        assert_eq!(log_ticks(80.0, 300.0), vec![100.0, 150.0, 200.0, 300.0]);
        assert_eq!(log_ticks(1.0, 1000.0).len(), 10);
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(2.5), "2.5");
        assert_eq!(tick(150.0), "150");
    }
}
