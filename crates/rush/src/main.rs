//! The `rush` binary: hands its arguments to the library and exits with
//! the status it returns.

fn main() {
    let mut args = std::env::args_os();
    let arg0 = args
        .next()
        .map(std::os::unix::ffi::OsStringExt::into_vec)
        .unwrap_or_else(|| b"rush".to_vec());
    let status = rush::main_with(arg0, args.collect());
    std::process::exit(status & 0xff);
}
