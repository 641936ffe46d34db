//! The command line.

use anyhow::{Result, bail};

const HELP: &str = "\
cargo xtask: the repository's task runner

USAGE:
    cargo xtask test  [SYSTEM...]
    cargo xtask bench [SYSTEM...] [--quick] [--micro]
    cargo xtask install [BIN...] [--root DIR]
    cargo xtask conformance rush --oils PATH [--python PATH] [SPEC...]
    cargo xtask conformance pyloop [--python PATH] [--uvloop PATH] [MODULE...]

COMMANDS:
    test    fmt, clippy -D warnings, and every test (Rust, and Python/Node as
            packages land). With SYSTEMs, only their tests.
    bench   Builds in release mode and runs each system's benchmarks against
            its peers, interleaved. Writes target/bench/results.json,
            report.md and SVG charts, and prints each system's table.
    install Builds the binaries in release mode, statically linked (faster
            to start), and copies them into DIR/bin (default ~/.cargo/bin).
    conformance
            Runs the Oils shell spec tests (a checkout of oils-for-unix/oils
            at PATH; the runner needs Python 2.7) against the release build
            of rush, and prints pass/total per spec file and in total.
            With pyloop: runs CPython 3.11.7's own test.test_asyncio modules
            with pyloop, asyncio and uvloop, one module per process, and
            prints pass/total per module for each loop. With --uvloop (a
            checkout of MagicStack/uvloop), also uvloop's own test mixins
            for TCP, Unix, sockets, context, executors, signals and the base
            loop.

OPTIONS:
    --quick   a short run, for smoke checks (bench)
    --micro   run the criterion micro-benchmarks of the crates instead (bench)
    --root    where to install (install)
    --oils    the Oils checkout (conformance)
    --uvloop  a MagicStack/uvloop checkout (conformance pyloop)
    --python  the Python to run it with (conformance: 2.7 for rush,
              CPython 3.11.7 for pyloop; found with pyenv by default)
    -h, --help

SYSTEMS:
    floor (the machine's physical limits), fast-rm, rush, pyloop
";

/// What the user asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Help,
    Test {
        systems: Vec<String>,
    },
    Bench {
        systems: Vec<String>,
        quick: bool,
        micro: bool,
    },
    Install {
        bins: Vec<String>,
        root: Option<std::path::PathBuf>,
    },
    Conformance {
        system: String,
        oils: Option<std::path::PathBuf>,
        python: Option<std::path::PathBuf>,
        uvloop: Option<std::path::PathBuf>,
        only: Vec<String>,
    },
}

pub fn parse(args: impl IntoIterator<Item = std::ffi::OsString>) -> Result<Command> {
    use lexopt::prelude::*;
    let mut p = lexopt::Parser::from_args(args);
    let mut verb: Option<String> = None;
    let (mut systems, mut quick, mut micro, mut help) = (Vec::new(), false, false, false);
    let mut root = None;
    let (mut oils, mut python, mut uvloop) = (None, None, None);
    while let Some(arg) = p.next()? {
        match arg {
            Short('h') | Long("help") => help = true,
            Long("quick") => quick = true,
            Long("micro") => micro = true,
            Long("root") => root = Some(std::path::PathBuf::from(p.value()?)),
            Long("oils") => oils = Some(std::path::PathBuf::from(p.value()?)),
            Long("python") => python = Some(std::path::PathBuf::from(p.value()?)),
            Long("uvloop") => uvloop = Some(std::path::PathBuf::from(p.value()?)),
            Value(v) if verb.is_none() => verb = Some(v.string()?),
            Value(v) => systems.push(v.string()?),
            _ => return Err(arg.unexpected().into()),
        }
    }
    if help {
        return Ok(Command::Help);
    }
    if (oils.is_some() || python.is_some() || uvloop.is_some())
        && verb.as_deref() != Some("conformance")
    {
        bail!("--oils, --uvloop and --python belong to `conformance`");
    }
    Ok(match verb.as_deref() {
        None | Some("help") => Command::Help,
        Some("test") if quick || micro => bail!("--quick and --micro belong to `bench`"),
        Some("test") if root.is_some() => bail!("--root belongs to `install`"),
        Some("test") => Command::Test { systems },
        Some("bench") if root.is_some() => bail!("--root belongs to `install`"),
        Some("bench") => Command::Bench {
            systems,
            quick,
            micro,
        },
        Some("conformance") => {
            let mut rest = systems.into_iter();
            let Some(system) = rest.next() else {
                bail!("conformance needs a system: `cargo xtask conformance rush --oils PATH`");
            };
            Command::Conformance {
                system,
                oils,
                python,
                uvloop,
                only: rest.collect(),
            }
        }
        _ if oils.is_some() || python.is_some() => {
            bail!("--oils and --python belong to `conformance`")
        }
        Some("install") if quick || micro => bail!("--quick and --micro belong to `bench`"),
        Some("install") => Command::Install {
            bins: systems,
            root,
        },
        Some(other) => bail!("unknown command {other:?}; try `cargo xtask help`"),
    })
}

pub fn main() -> Result<()> {
    match parse(std::env::args_os().skip(1))? {
        Command::Help => {
            print!("{HELP}");
            Ok(())
        }
        Command::Test { systems } => crate::test::run(&systems),
        Command::Bench {
            systems,
            quick,
            micro,
        } if micro => crate::bench::micro(&systems, quick),
        Command::Bench { systems, quick, .. } => crate::bench::run(&systems, quick),
        Command::Install { bins, root } => crate::install::run(&bins, root),
        Command::Conformance {
            system,
            oils,
            python,
            uvloop,
            only,
        } => crate::conformance::run(
            &system,
            oils.as_deref(),
            python.as_deref(),
            uvloop.as_deref(),
            &only,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Command> {
        parse(s.split_whitespace().map(std::ffi::OsString::from))
    }

    #[test]
    fn parses_the_commands() {
        assert_eq!(p("").unwrap(), Command::Help);
        assert_eq!(p("test").unwrap(), Command::Test { systems: vec![] });
        assert_eq!(
            p("bench floor --quick").unwrap(),
            Command::Bench {
                systems: vec!["floor".into()],
                quick: true,
                micro: false
            }
        );
        assert_eq!(p("bench --help").unwrap(), Command::Help);
        assert!(
            p("frobnicate")
                .unwrap_err()
                .to_string()
                .contains("unknown command")
        );
        assert!(p("test --quick").is_err());
        assert!(p("bench --bogus").is_err());
        assert_eq!(
            p("install fast-rm --root /tmp/x").unwrap(),
            Command::Install {
                bins: vec!["fast-rm".into()],
                root: Some("/tmp/x".into())
            }
        );
        assert!(p("bench --root /tmp").is_err());
        assert_eq!(
            p("conformance rush --oils /o glob").unwrap(),
            Command::Conformance {
                system: "rush".into(),
                oils: Some("/o".into()),
                python: None,
                uvloop: None,
                only: vec!["glob".into()]
            }
        );
        assert_eq!(
            p("conformance pyloop --uvloop /u test_tasks").unwrap(),
            Command::Conformance {
                system: "pyloop".into(),
                oils: None,
                python: None,
                uvloop: Some("/u".into()),
                only: vec!["test_tasks".into()]
            }
        );
        assert!(p("conformance").is_err());
        assert!(p("bench --oils /o").is_err());
        assert!(p("test --uvloop /u").is_err());
    }
}
