//! The cost of recording one sample: what every measurement adds to the
//! thing it measures.

use criterion::{Criterion, criterion_group, criterion_main};
use latency::Recorder;
use std::hint::black_box;
use std::time::Instant;

fn record(c: &mut Criterion) {
    let mut r = Recorder::new();
    let mut v = 1u64;
    c.bench_function("record_ns", |b| {
        b.iter(|| {
            v = v
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            r.record_ns(black_box(v >> 40));
        });
    });
    c.bench_function("clock_pair_and_record", |b| {
        b.iter(|| {
            let t = Instant::now();
            r.record(black_box(t.elapsed()));
        });
    });
}

criterion_group!(benches, record);
criterion_main!(benches);
