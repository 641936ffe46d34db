//! Runs one target's check on a file: `cargo run -p fuzz --example check --
//! rush-unparse path/to/input`. A finding panics (exit 101).

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(target), Some(path)) = (args.next(), args.next()) else {
        eprintln!("usage: check TARGET FILE");
        std::process::exit(2);
    };
    let Some((_, check)) = fuzz::TARGETS.iter().find(|(n, _)| *n == target) else {
        eprintln!("no target {target}: cargo xtask fuzz --list");
        std::process::exit(2);
    };
    match std::fs::read(&path) {
        Ok(data) => check(&data),
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    }
}
