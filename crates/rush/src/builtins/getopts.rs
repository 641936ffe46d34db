//! `getopts`.

use super::{Args, lossy};
use crate::shell::{Exec, Shell};

/// A getopts diagnostic as bash writes it: `$0: message`, with no line
/// (and none with OPTERR=0).
pub(super) fn getopts_error(sh: &Shell, msg: &str) {
    if sh.vars.get(b"OPTERR") == Some(b"0") {
        return;
    }
    sh.err_out(format!("{}: {msg}\n", String::from_utf8_lossy(&sh.arg0)).as_bytes());
}

pub(super) fn getopts(sh: &mut Shell, argv: Args<'_>) -> Exec {
    if argv.len() >= 2 && argv[1].len() > 1 && argv[1][0] == b'-' && argv[1] != b"--" {
        sh.error(&format!("getopts: {}: invalid option", lossy(&argv[1])));
        sh.usage("getopts: usage: getopts optstring name [arg ...]");
        return Ok(2);
    }
    let argv = if argv.get(1).is_some_and(|a| a == b"--") {
        &argv[1..]
    } else {
        argv
    };
    if argv.len() < 3 {
        sh.usage("getopts: usage: getopts optstring name [arg ...]");
        return Ok(2);
    }
    let name = argv[2].clone();
    if !crate::parse::is_name(&name) {
        sh.error(&format!(
            "getopts: `{}': not a valid identifier",
            lossy(&name)
        ));
        // The option is still taken (OPTIND moves on), as in bash; only
        // the variable is not set.
        getopts_parse(sh, argv, false)?;
        return Ok(1);
    }
    getopts_parse(sh, argv, true)
}

/// getopts, its arguments checked: the next option into `argv[2]`
/// (unless not `bind`: a name bash refuses still takes the option).
pub(super) fn getopts_parse(sh: &mut Shell, argv: &[Vec<u8>], bind: bool) -> Exec {
    let optstring = argv[1].clone();
    let name = argv[2].clone();
    let args: Vec<Vec<u8>> = if argv.len() > 3 {
        argv[3..].to_vec()
    } else {
        sh.positional.clone()
    };
    let silent = optstring.first() == Some(&b':');
    let optind: usize = sh
        .vars
        .get(b"OPTIND")
        .and_then(|v| lossy(v).parse().ok())
        .unwrap_or(1)
        .max(1);
    // OPTIND past the arguments (`set --` between two loops, or set by
    // hand): the end, just after the last (bash; with no arguments, 1).
    let optind_seen = optind;
    let optind = optind.min(args.len() + 1);
    // Reset the position inside a cluster when OPTIND was changed or
    // assigned.
    if sh.getopts_state.0 != optind || std::mem::take(&mut sh.vars.optind_assigned) {
        sh.getopts_state = (optind, 1);
    }
    let (mut ind, mut pos) = sh.getopts_state;
    let set = |sh: &mut Shell, k: &[u8], v: Vec<u8>| {
        if !bind && k == name.as_slice() {
            return;
        }
        if let Err(e) = sh.vars.set(k, v) {
            sh.error(&e.to_string());
        }
        // getopts' own OPTIND is no reset.
        sh.vars.optind_assigned = false;
    };
    let Some(arg) = args.get(ind - 1) else {
        set(sh, &name, b"?".to_vec());
        sh.vars.unset_internal(b"OPTARG");
        if ind != optind_seen {
            set(sh, b"OPTIND", ind.to_string().into_bytes());
        }
        return Ok(1);
    };
    if pos == 1 {
        if arg == b"--" {
            ind += 1;
            set(sh, b"OPTIND", ind.to_string().into_bytes());
            sh.getopts_state = (ind, 1);
            set(sh, &name, b"?".to_vec());
            return Ok(1);
        }
        if arg.len() < 2 || arg[0] != b'-' {
            set(sh, &name, b"?".to_vec());
            sh.vars.unset_internal(b"OPTARG");
            return Ok(1);
        }
    }
    let c = arg[pos];
    pos += 1;
    let spec = optstring.iter().position(|&o| o == c && o != b':');
    let takes_arg = spec.is_some_and(|i| optstring.get(i + 1) == Some(&b':'));
    let mut status = 0;
    if spec.is_none() {
        if silent {
            set(sh, b"OPTARG", vec![c]);
        } else {
            getopts_error(sh, &format!("illegal option -- {}", c as char));
            sh.vars.unset_internal(b"OPTARG");
        }
        set(sh, &name, b"?".to_vec());
    } else if takes_arg {
        if pos < arg.len() {
            set(sh, b"OPTARG", arg[pos..].to_vec());
            pos = arg.len();
        } else if let Some(next) = args.get(ind) {
            set(sh, b"OPTARG", next.clone());
            ind += 1;
        } else {
            if silent {
                set(sh, &name, b":".to_vec());
                set(sh, b"OPTARG", vec![c]);
            } else {
                getopts_error(sh, &format!("option requires an argument -- {}", c as char));
                set(sh, &name, b"?".to_vec());
                sh.vars.unset_internal(b"OPTARG");
            }
            ind += 1;
            sh.getopts_state = (ind, 1);
            set(sh, b"OPTIND", ind.to_string().into_bytes());
            return Ok(0);
        }
        set(sh, &name, vec![c]);
    } else {
        set(sh, &name, vec![c]);
        // A flag without an argument leaves OPTARG empty (set).
        set(sh, b"OPTARG", Vec::new());
    }
    if pos >= arg.len() {
        ind += 1;
        pos = 1;
    }
    sh.getopts_state = (ind, pos);
    set(sh, b"OPTIND", ind.to_string().into_bytes());
    if status != 0 {
        status = 1;
    }
    Ok(status)
}
