//! The `greppy` benchmark driver, run by `cargo xtask bench greppy`.

fn main() -> std::process::ExitCode {
    match floor::driver::Args::parse().and_then(|a| greppy_bench::run(&a)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("greppy-bench: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
