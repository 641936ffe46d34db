//! The `rush` benchmark driver, run by `cargo xtask bench rush`.

fn main() -> std::process::ExitCode {
    match floor::driver::Args::parse().and_then(|a| rush_bench::run(&a)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rush-bench: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
