//! The `fast-rm` binary: parses arguments, runs the library, exits.

use clap::Parser;

fn main() {
    let cli = match fast_rm::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with status 0; usage errors exit
            // 1, as rm's do.
            let code = i32::from(e.use_stderr());
            let _ = e.print();
            std::process::exit(code);
        }
    };
    std::process::exit(fast_rm::run(&cli));
}
