//! The `floor` benchmark driver: the physical limits of this machine.

fn main() -> std::process::ExitCode {
    match floor::driver::Args::parse().and_then(|a| floor::bench::run(&a)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("floor: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
