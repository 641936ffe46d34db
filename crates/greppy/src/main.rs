//! The `greppy` binary: the command line lives in the library.

fn main() {
    std::process::exit(greppy::cli::main());
}
