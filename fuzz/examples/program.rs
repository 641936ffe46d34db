//! Prints the program of a seed, or of a file of fuzzer bytes:
//! `cargo run -p fuzz --example program -- 42` or `-- path/to/input`.

fn main() {
    let arg = std::env::args().nth(1).unwrap_or_else(|| "0".into());
    let program = match arg.parse::<u64>() {
        Ok(seed) => fuzz::shgen::Gen::new(seed).program(),
        Err(_) => match std::fs::read(&arg) {
            Ok(bytes) => fuzz::shgen::Gen::from_bytes(bytes).program(),
            Err(e) => {
                eprintln!("{arg}: {e}");
                std::process::exit(2);
            }
        },
    };
    print!("{program}");
}
