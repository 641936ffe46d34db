//! The `fast-rm` binary (also `rm`, installed or linked under that name):
//! the library runs, the status is the exit's.

fn main() {
    std::process::exit(fast_rm::main(std::env::args_os().collect()));
}
