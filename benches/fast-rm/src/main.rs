//! The `fast-rm` benchmark driver, run by `cargo xtask bench fast-rm`.

fn main() -> std::process::ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    // `--floor SHAPE N TARGET`: the floor's child process (see `bench.rs`).
    let res = match argv.split_first() {
        Some((first, rest)) if first == "--floor" => fast_rm_bench::bench::floor_child(rest),
        _ => floor::driver::Args::parse().and_then(|a| fast_rm_bench::bench::run(&a)),
    };
    match res {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fast-rm-bench: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
