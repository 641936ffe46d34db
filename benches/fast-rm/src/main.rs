//! The `fast-rm` benchmark driver, run by `cargo xtask bench fast-rm`.

fn main() -> std::process::ExitCode {
    match floor::driver::Args::parse().and_then(|a| fast_rm_bench::bench::run(&a)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fast-rm-bench: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
