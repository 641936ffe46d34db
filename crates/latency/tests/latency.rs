use latency::{
    Event, Options, Recorder, Run, Sample, Subject, SubjectInfo, decode_histogram, interleave,
    spread, spread_order,
};
use std::cell::Cell;

#[test]
fn percentiles_of_one_to_ten_thousand() {
    let mut r = Recorder::new();
    for v in 1..=10_000u64 {
        r.record_ns(v);
    }
    let s = r.summary();
    assert_eq!(s.count, 10_000);
    assert_eq!(s.min, 1);
    // Three significant figures: each quantile is within 0.1% of the exact one.
    for (got, want) in [
        (s.p50, 5_000),
        (s.p90, 9_000),
        (s.p99, 9_900),
        (s.p999, 9_990),
    ] {
        let err = (got as f64 - want as f64).abs() / want as f64;
        assert!(err <= 0.001, "got {got}, want {want}");
    }
    assert!((s.max as f64 - 10_000.0).abs() <= 10.0);
    assert!((s.mean - 5_000.5).abs() < 5.0, "{}", s.mean);
    // The standard deviation of a discrete uniform 1..=n is sqrt((n²-1)/12).
    let want_sd = ((10_000f64.powi(2) - 1.0) / 12.0).sqrt();
    assert!((s.stdev - want_sd).abs() / want_sd < 0.01, "{}", s.stdev);
}

#[test]
fn exact_for_small_values_and_saturating_for_huge() {
    let mut r = Recorder::new();
    for v in [100u64, 200, 300, 400, 500] {
        r.record_ns(v);
    }
    let s = r.summary();
    assert_eq!((s.min, s.p50, s.max), (100, 300, 500));
    r.record_ns(u64::MAX);
    let max = r.summary().max as f64;
    assert!(
        (max / latency::HIGHEST_NS as f64 - 1.0).abs() < 0.001,
        "saturates: {max}"
    );
    assert_eq!(r.len(), 6);
}

#[test]
fn empty_summary_is_zero() {
    let s = Recorder::new().summary();
    assert_eq!((s.count, s.p50, s.max), (0, 0, 0));
}

#[test]
fn coordinated_omission_backfills_missed_requests() {
    // At one request per 1 ms, a single 10 ms stall hid 9 requests that would
    // have waited 9, 8, … 1 ms.
    let mut r = Recorder::new();
    for _ in 0..100 {
        r.record_corrected_ns(100_000, 1_000_000);
    }
    r.record_corrected_ns(10_000_000, 1_000_000);
    let s = r.summary();
    assert_eq!(s.count, 110);
    // The 10 back-filled values make the top 9%: p99 shows the stall.
    assert!(
        s.p99 >= 9_000_000,
        "the corrected tail shows the stall: {s:?}"
    );
    let mut plain = Recorder::new();
    for _ in 0..100 {
        plain.record_ns(100_000);
    }
    plain.record_ns(10_000_000);
    assert!(
        plain.summary().p99 < 200_000,
        "uncorrected, the stall hides"
    );
}

fn subjects(names: &[&str]) -> Vec<SubjectInfo> {
    names
        .iter()
        .map(|n| SubjectInfo {
            name: (*n).into(),
            version: "1".into(),
        })
        .collect()
}

#[test]
fn interleaved_runs_alternate_and_ratio_is_median_of_pairs() {
    let order = std::cell::RefCell::new(Vec::new());
    let a_round = Cell::new(0u64);
    let b_round = Cell::new(0u64);
    let mut subs = vec![
        Subject::new("a", "1.0", || {
            order.borrow_mut().push('a');
            a_round.set(a_round.get() + 1);
            Ok(Sample::ns(100))
        }),
        Subject::new("b", "2.0", || {
            order.borrow_mut().push('b');
            b_round.set(b_round.get() + 1);
            // Ratios 2, 3, 2, 3, 10 over the kept rounds: median 3.
            Ok(Sample::ns(match b_round.get() {
                1 | 2 => 5_000, // warm-up rounds, thrown away
                3 | 5 => 200,
                4 | 6 => 300,
                _ => 1_000,
            }))
        }),
    ];
    let opts = Options {
        warmup: 2,
        rounds: 5,
        min_rounds: 5,
        budget: None,
    };
    let run = interleave(Run::new("t", "w", vec![]), &mut subs, opts).unwrap();
    drop(subs);
    assert_eq!(
        order.borrow().iter().collect::<String>(),
        "abababababababab"[..14].to_string()
    );
    assert_eq!(run.rounds.len(), 5);
    let recs = run.records().unwrap();
    assert_eq!(recs.len(), 2);
    assert!(recs[0].ratio.is_none(), "the reference has no ratio");
    let ratio = recs[1].ratio.as_ref().unwrap();
    assert_eq!(ratio.reference, "a");
    assert_eq!(ratio.pairs, 5);
    assert!((ratio.median - 3.0).abs() < 1e-9, "{ratio:?}");
    assert_eq!(recs[1].summary.p50, 300);
    assert_eq!(recs[1].subject_version, "2.0");
}

#[test]
fn ratio_is_robust_where_the_ratio_of_medians_is_not() {
    // Noise that hits both subjects of a round alike cancels in per-pair ratios.
    let a = [100u64, 1000, 100, 1000, 1000];
    let b = [150u64, 1500, 150, 1500, 1500];
    let mut run = Run::new("t", "w", subjects(&["a", "b"]));
    run.rounds = a
        .iter()
        .zip(&b)
        .map(|(&x, &y)| vec![Sample::ns(x), Sample::ns(y)])
        .collect();
    let recs = run.records().unwrap();
    assert!((recs[1].ratio.as_ref().unwrap().median - 1.5).abs() < 1e-9);
}

#[test]
fn reference_can_be_any_subject() {
    let mut run = Run::new("t", "w", subjects(&["peer", "ours"]));
    run.reference = 1;
    run.rounds = vec![vec![Sample::ns(400), Sample::ns(100)]];
    let recs = run.records().unwrap();
    assert_eq!(recs[0].ratio.as_ref().unwrap().median, 4.0);
    assert!(recs[1].ratio.is_none());
}

#[test]
fn ragged_runs_and_bad_references_are_errors() {
    let mut run = Run::new("t", "w", subjects(&["a", "b"]));
    run.rounds = vec![vec![Sample::ns(1)]];
    assert!(run.records().unwrap_err().to_string().contains("round 0"));
    run.rounds.clear();
    run.reference = 2;
    assert!(run.records().is_err());
    assert!(Run::new("t", "w", vec![]).records().is_err());
}

#[test]
fn failing_subject_names_itself() {
    let mut subs = vec![Subject::new("broken", "0", || Err("no such peer".into()))];
    let err = interleave(Run::new("t", "w", vec![]), &mut subs, Options::rounds(3)).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("broken") && msg.contains("no such peer"),
        "{msg}"
    );
}

#[test]
fn budget_stops_after_min_rounds() {
    let mut subs = vec![Subject::new("a", "1", || Ok(Sample::ns(1)))];
    let opts = Options::rounds(1_000_000).with_budget(7, std::time::Duration::ZERO);
    let run = interleave(Run::new("t", "w", vec![]), &mut subs, opts).unwrap();
    assert_eq!(run.rounds.len(), 7);
}

#[test]
fn resources_are_medians_of_rusage() {
    let mut run = Run::new("t", "w", subjects(&["p"]));
    run.rounds = [(10, 1, 5, 1000), (30, 3, 7, 3000), (20, 2, 6, 2000)]
        .iter()
        .map(|&(v, u, s, rss)| {
            vec![Sample {
                value: v,
                user_ns: Some(u),
                sys_ns: Some(s),
                max_rss_kib: Some(rss),
            }]
        })
        .collect();
    let r = run.records().unwrap()[0].resources.unwrap();
    assert_eq!(r.user_ns_p50, Some(2));
    assert_eq!(r.sys_ns_p50, Some(6));
    assert_eq!(r.max_rss_kib_p50, Some(2000));
    assert_eq!(r.max_rss_kib_max, Some(3000));
}

#[test]
fn records_and_runs_round_trip_through_json() {
    let mut run = Run::new("floor", "spawn", subjects(&["posix_spawn", "fork-exec"]))
        .param("fs", "tmpfs")
        .size(100);
    run.rounds = (1..=50u64)
        .map(|k| vec![Sample::ns(k * 1000), Sample::ns(k * 1500)])
        .collect();

    // A raw run (as Python or Node drivers send it) survives JSON unchanged.
    let line = serde_json::to_string(&Event::Run(Box::new(run.clone()))).unwrap();
    assert!(line.contains(r#""event":"run""#), "{line}");
    let Event::Run(back) = Event::parse(&line).unwrap() else {
        panic!("not a run")
    };
    assert_eq!(*back, run);

    // A record survives JSON, and its histogram decodes to the same counts.
    let rec = run.records().unwrap().remove(1);
    let line = serde_json::to_string(&Event::Record(Box::new(rec.clone()))).unwrap();
    let Event::Record(back) = Event::parse(&line).unwrap() else {
        panic!("not a record")
    };
    assert_eq!(*back, rec);
    let h = back.decode_histogram().unwrap();
    assert_eq!(h.len(), 50);
    assert_eq!(h.value_at_quantile(0.5), rec.summary.p50);
    assert_eq!(back.params["fs"], "tmpfs");
    assert_eq!(back.size, Some(100));
    assert!((back.ratio.as_ref().unwrap().median - 1.5).abs() < 1e-9);
}

#[test]
fn a_minimal_foreign_run_parses() {
    // What a Python or Node driver writes: only the required fields.
    let line = r#"{"event":"run","system":"pyloop","workload":"echo","unit":"ns",
        "subjects":[{"name":"pyloop","version":"0.1"},{"name":"uvloop","version":"0.21"}],
        "rounds":[[{"value":10},{"value":20}],[{"value":12},{"value":18}]]}"#;
    let Event::Run(run) = Event::parse(&line.replace('\n', "")).unwrap() else {
        panic!()
    };
    let recs = run.records().unwrap();
    assert_eq!(recs[1].ratio.as_ref().unwrap().median, (2.0 + 1.5) / 2.0);
}

#[test]
fn garbage_is_a_clear_error() {
    assert!(Event::parse("{not json").is_err());
    assert!(Event::parse(r#"{"event":"unknown"}"#).is_err());
    assert!(decode_histogram("!!!").is_err());
    assert!(decode_histogram("AAAA").is_err());
}

#[test]
fn spread_order_places_each_cells_rounds_evenly_over_the_run() {
    let order = spread_order(&[4, 2, 1]);
    assert_eq!(order.len(), 7);
    // Points: cell 0 at 1/8 3/8 5/8 7/8, cell 1 at 1/4 3/4, cell 2 at 1/2.
    assert_eq!(
        order,
        vec![(0, 0), (1, 0), (0, 1), (2, 0), (0, 2), (1, 1), (0, 3)]
    );
    // Every cell's rounds come in their own order, each exactly once.
    let many = spread_order(&[40, 20, 10, 9, 2, 0]);
    for (cell, &r) in [40, 20, 10, 9, 2, 0].iter().enumerate() {
        let ks: Vec<usize> = many.iter().filter(|s| s.0 == cell).map(|s| s.1).collect();
        assert_eq!(ks, (0..r).collect::<Vec<_>>());
    }
    // A cell of two rounds has one in each half of the run.
    let two: Vec<usize> = (0..many.len()).filter(|&i| many[i].0 == 4).collect();
    assert!(
        two[0] < many.len() / 2 && two[1] >= many.len() / 2,
        "{two:?}"
    );
}

#[test]
fn spread_runs_warmups_before_a_cells_first_round_and_keeps_cells_apart() {
    let log = std::cell::RefCell::new(Vec::new());
    let subject = |name: &'static str, ns: u64| {
        let log = &log;
        Subject::new(name, "1", move || {
            log.borrow_mut().push(name);
            Ok(Sample::ns(ns))
        })
    };
    let mut cells = vec![
        latency::Cell {
            run: Run::new("t", "x", vec![]),
            subjects: vec![subject("x1", 10), subject("x2", 20)],
            warmup: 1,
            rounds: 2,
            dropped: vec![],
        },
        latency::Cell {
            run: Run::new("t", "y", vec![]),
            subjects: vec![subject("y1", 30)],
            warmup: 0,
            rounds: 1,
            dropped: vec![],
        },
    ];
    let mut seen = Vec::new();
    let runs = spread(&mut cells, |c, k| {
        seen.push((c, k));
        Ok(())
    })
    .unwrap();
    drop(cells);
    // x's warm-up, x round 0 (at 1/4), y round 0 (1/2), x round 1 (3/4).
    assert_eq!(*log.borrow(), ["x1", "x2", "x1", "x2", "y1", "x1", "x2"]);
    assert_eq!(seen, [(0, 0), (1, 0), (0, 1)]);
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].workload, "x");
    assert_eq!(runs[0].rounds.len(), 2);
    assert_eq!(runs[0].subjects.len(), 2);
    assert_eq!(runs[0].rounds[1][1].value, 20);
    assert_eq!(runs[1].rounds, vec![vec![Sample::ns(30)]]);
    let recs = runs[0].records().unwrap();
    assert!((recs[1].ratio.as_ref().unwrap().median - 2.0).abs() < 1e-9);
}

#[test]
fn spread_refuses_a_cell_without_subjects_and_drops_a_failing_round() {
    let mut empty = vec![latency::Cell {
        run: Run::new("t", "w", vec![]),
        subjects: vec![],
        warmup: 0,
        rounds: 1,
        dropped: vec![],
    }];
    assert!(spread(&mut empty, |_, _| Ok(())).is_err());
    // The second subject fails in the warm-up and in the second of three
    // rounds; the run goes on, and keeps the other two rounds whole.
    let calls = std::cell::Cell::new(0);
    let mut cells = vec![latency::Cell {
        run: Run::new("t", "w", vec![]),
        subjects: vec![
            Subject::new("steady", "1", || Ok(Sample::ns(10))),
            Subject::new("boom", "1", || {
                calls.set(calls.get() + 1);
                match calls.get() {
                    1 | 3 => Err("no tree".into()),
                    n => Ok(Sample::ns(n as u64)),
                }
            }),
        ],
        warmup: 1,
        rounds: 3,
        dropped: vec![],
    }];
    let runs = spread(&mut cells, |_, _| Ok(())).unwrap();
    let dropped: Vec<_> = cells[0]
        .dropped
        .iter()
        .map(|d| (d.round, d.error.to_string()))
        .collect();
    assert_eq!(
        dropped,
        [
            (None, "subject \"boom\" failed: no tree".to_string()),
            (Some(1), "subject \"boom\" failed: no tree".to_string()),
        ]
    );
    drop(cells);
    assert_eq!(
        runs[0].rounds,
        [
            vec![Sample::ns(10), Sample::ns(2)],
            vec![Sample::ns(10), Sample::ns(4)]
        ]
    );
}
