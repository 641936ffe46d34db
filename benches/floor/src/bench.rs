//! The floor workloads, as the driver runs them.

use crate::driver::{self, Args};
use crate::{EpollZero, PairSendRecv, Program, UnixRoundTrip, clock_pair, unlinkat_per_file};
use latency::{Options, Run, Subject, interleave, machine};
use std::time::Duration;

const SYSTEM: &str = "floor";

/// Runs every floor workload and emits its records.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let kernel = machine::kernel();
    let sizes: &[usize] = args.pick(&[100, 1_000, 10_000], &[1_000, 10_000, 100_000]);
    let fss = [(args.shm.clone(), "shm"), (args.scratch.clone(), "disk")];
    driver::plan(5 + (sizes.len() * fss.len()) as u64)?;
    let budget = Duration::from_secs(args.pick(3, 20));
    let many =
        |n_quick, n_full| Options::rounds(args.pick(n_quick, n_full)).with_budget(1000, budget);

    driver::step("spawn /bin/true")?;
    let truth = Program::new("/bin/true", &[])?;
    let mut subjects = [
        Subject::new("posix_spawn+wait4", &kernel, || {
            Ok(truth.posix_spawn_wait()?)
        }),
        Subject::new("fork+exec+wait4", &kernel, || Ok(truth.fork_exec_wait()?)),
    ];
    let opts = Options::rounds(args.pick(300, 3000)).with_budget(100, budget);
    driver::emit(&interleave(
        Run::new(SYSTEM, "spawn /bin/true", vec![]),
        &mut subjects,
        opts,
    )?)?;

    // The single-primitive workloads: (step, workload, subject, one sample).
    let mut rt = UnixRoundTrip::start(64, 2048)?;
    let mut pair = PairSendRecv::new(1024)?;
    let mut ep = EpollZero::new()?;
    type Once<'a> = Box<dyn FnMut() -> std::io::Result<latency::Sample> + 'a>;
    let singles: [(&str, &str, &str, Once<'_>); 4] = [
        (
            "unix socket round trip",
            "unix socket round trip 64 B -> 2 KiB",
            "unix stream",
            Box::new(|| rt.round_trip()),
        ),
        (
            "socketpair 1 KiB",
            "socketpair send+recv 1 KiB",
            "socketpair",
            Box::new(|| pair.send_recv()),
        ),
        (
            "epoll_wait(0)",
            "epoll_wait(0) on an empty set",
            "epoll_wait",
            Box::new(|| ep.wait_zero()),
        ),
        (
            "clock",
            "clock read pair (timer overhead)",
            "Instant::now x2",
            Box::new(|| Ok(clock_pair())),
        ),
    ];
    for (label, workload, subject, mut once) in singles {
        driver::step(label)?;
        let mut subjects = [Subject::new(subject, &kernel, || Ok(once()?))];
        let run = Run::new(SYSTEM, workload, vec![]);
        driver::emit(&interleave(run, &mut subjects, many(20_000, 200_000))?)?;
    }

    for (dir, label) in &fss {
        let fs = machine::fs_type(dir)?;
        for &n in sizes {
            driver::step(format!("unlinkat x{n} on {fs} ({label})"))?;
            let mut subjects = [Subject::new("unlinkat", &kernel, || {
                Ok(unlinkat_per_file(dir, n)?)
            })];
            // Each round removes n files; its sample is the mean cost per file.
            let rounds = args.pick(5, 15);
            let opts = Options {
                warmup: 1,
                rounds,
                min_rounds: 3,
                budget: Some(budget),
            };
            let run = Run::new(SYSTEM, "unlinkat per file", vec![])
                .param("fs", fs.clone())
                .size(n as u64);
            driver::emit(&interleave(run, &mut subjects, opts)?)?;
        }
    }
    Ok(())
}
