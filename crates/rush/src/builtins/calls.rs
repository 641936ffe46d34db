//! `caller` (bash): where the running function was called from, read off
//! the shell's call stack (the same frames as `FUNCNAME`, `BASH_SOURCE` and
//! `BASH_LINENO`).

use super::{Args, emit, lossy};
use crate::shell::{Exec, Shell};

/// `caller`: `LINE FILE` of the current call; `caller N`: `LINE FUNCTION
/// FILE` of the Nth frame up. Status 1, silently, past the outermost frame.
pub fn caller(sh: &mut Shell, argv: Args<'_>) -> Exec {
    let frames: Vec<_> = sh.frames.iter().rev().cloned().collect();
    let line = match argv.get(1) {
        None => {
            let Some(f) = frames.first() else {
                return Ok(1);
            };
            let file = frames.get(1).map_or(b"NULL".to_vec(), |g| g.file.to_vec());
            [f.call_line.to_string().as_bytes(), b" ", &file].concat()
        }
        Some(a) => {
            let Ok(n) = lossy(a).parse::<usize>() else {
                sh.error(&format!("caller: {}: invalid number", lossy(a)));
                sh.usage("caller: usage: caller [expr]");
                return Ok(2);
            };
            let (Some(f), Some(up)) = (frames.get(n), frames.get(n + 1)) else {
                return Ok(1);
            };
            [
                f.call_line.to_string().as_bytes(),
                b" ",
                &up.name,
                b" ",
                &up.file,
            ]
            .concat()
        }
    };
    let mut out = line;
    out.push(b'\n');
    Ok(emit(sh, "caller", &out))
}
