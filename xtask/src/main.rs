//! `cargo xtask`: see `cargo xtask help`.

fn main() -> std::process::ExitCode {
    match xtask::cli::main() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
