//! The command line: `cargo xtask help`, and `cargo xtask <command> --help`
//! for each command's own.

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// cargo xtask: the repository's task runner.
#[derive(Debug, Parser, PartialEq, Eq)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    max_term_width = 100,
    after_help = "Systems: floor (the machine's physical limits), fast-rm, rush, pyloop, greppy, termio.\n\
                  `cargo xtask <command> --help` tells more about each command."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// What the user asked for. (Parsed once a run: the conformance variant's
/// size costs nothing.)
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
pub enum Command {
    /// fmt, clippy -D warnings, and every test (Rust, Python, Node, browser)
    #[command(
        long_about = "First installs what the tests need from Debian (see `cargo xtask deps`).\n\
Then runs cargo fmt --check, cargo clippy --workspace --all-targets -D warnings,\n\
every Rust test, and pyloop's pytest suite: on its dev build for CPython\n\
3.11 and 3.14t, and on its release wheel for each CPython 3.11 to 3.14 and\n\
3.14t (3.14 from pyenv or the PATH, otherwise from Debian's unstable suite,\n\
downloaded by apt-get and unpacked under target/pyloop, not installed), each\n\
in a private venv under target/pyloop. Some tests use root where they have it (mounting a\n\
tmpfs, dropping to nobody so permissions bite) and say \"skipped\" where they\n\
do not. This is the command CI runs."
    )]
    Test {
        /// Only these systems' tests (fast-rm, rush, pyloop, greppy, termio, floor, latency, xtask)
        systems: Vec<String>,
    },
    /// Every benchmark against its peers, in release mode
    #[command(
        long_about = "Builds in release mode and runs each system's workloads against the tools its\n\
users would otherwise pick, interleaved (A B A B …) after a warm-up, with the\n\
machine's physical floor as a row where one exists. Prints a table per system\n\
and writes target/bench/results.json (one record per system, workload, subject\n\
and size, with the histogram), target/bench/report.md and an SVG chart per\n\
workload.\n\
\n\
Peers are installed first, where they can be: apt-get when run as root (dash,\n\
bash, zsh, mksh for rush), cargo install --root target/peers (rmz for fast-rm,\n\
ripgrep for greppy), go install into target/peers/bin (zoekt for greppy), pip\n\
into pyloop's benchmark venv under target/pyloop (uvloop, rloop, and uvicorn,\n\
httptools and aiohttp for its HTTP rows, which wrk from apt loads; valgrind\n\
from apt counts its micro rows' instructions), npm into target/peers/npm. A\n\
peer that cannot be installed is reported on its row, not dropped silently.\n\
\n\
How long a run takes on the 2-vCPU development VM (measured 2026-11-23, with\n\
other work on the machine): a full run of floor takes about 4 minutes, rush 4,\n\
pyloop 45 (with its TLS, UDP, sendfile and HTTP rows and its micro rows on\n\
CPython 3.14 and 3.14t, 2026-11-28; a first run also builds 3.14t, about 3\n\
minutes more), greppy\n\
about 25 (its first run also vendors its corpus), termio 26 (2026-12-01),\n\
fast-rm 61 to 121 minutes by the machine (2026-12-02; its trees reach a\n\
million files; FAST_RM_BENCH_SIZES, _SHAPES and _FS narrow it); --quick\n\
takes 16 s for floor, 2 minutes for rush, 4 for pyloop and 5.5 for fast-rm, for\n\
smoke checks; its figures are not for quoting."
    )]
    Bench {
        /// Only these systems (floor, fast-rm, rush, pyloop, greppy, termio)
        systems: Vec<String>,
        /// A short run, for smoke checks
        #[arg(long)]
        quick: bool,
        /// The criterion micro-benchmarks inside the crates instead
        #[arg(long)]
        micro: bool,
    },
    /// What the tests (and benchmarks) need from the machine: checked, and installed with apt
    #[command(
        long_about = "Checks every Debian package and tool that `cargo xtask test` uses (the\n\
programs, files, Python modules and Node version its tests probe for) and\n\
prints one line each: ok or MISSING, the package, what is probed, and why.\n\
Missing ones are installed with one `apt-get update` and one `apt-get\n\
install` (root, Debian or Ubuntu). `cargo xtask test` and `cargo xtask bench`\n\
do the same first, before they build anything, and stop with the install\n\
command where they cannot."
    )]
    Deps {
        /// Only print what is missing, and exit non-zero if anything is
        #[arg(long)]
        check: bool,
        /// Also what the benchmarks need (their peers from apt)
        #[arg(long)]
        bench: bool,
        /// Only these systems' needs
        systems: Vec<String>,
    },
    /// pyloop's wheels and sdist, into target/dist
    #[command(
        long_about = "Builds pyloop's packages into target/dist: one manylinux2014 (glibc 2.17)\n\
wheel per CPython (3.11 to 3.14) that pyenv or the PATH has (or Debian, for\n\
3.14, as for `cargo xtask test`), linked with\n\
zig (PyPI's ziglang, installed into target/pyloop/dist), and the source\n\
distribution pip builds from. `cargo xtask test pyloop` installs each wheel\n\
into an empty venv and runs the pytest suite against it."
    )]
    Dist {
        /// Only these systems (pyloop)
        systems: Vec<String>,
    },
    /// The binaries, statically linked, into DIR/bin
    #[command(
        long_about = "Builds the binaries in release mode, statically linked (they start sooner than\n\
dynamically linked ones), and copies them into DIR/bin, by default\n\
~/.cargo/bin. `cargo install --path crates/<name>` builds the same code,\n\
dynamically linked."
    )]
    Install {
        /// Only these binaries (fast-rm, rush)
        bins: Vec<String>,
        /// Where to install (DIR/bin)
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
    },
    /// The last benchmark run's figures, as a markdown table for a README
    #[command(
        long_about = "Prints SYSTEM's records from target/bench/results.json (the last\n\
`cargo xtask bench` run) as a short markdown table: per workload and size,\n\
each subject's p50, p99 and p99.9 and its ratio to the reference, with the\n\
run's revision and date. READMEs' tables are this output, not typed by hand."
    )]
    Table {
        /// The system (termio, greppy, ...)
        system: String,
        /// Only workloads whose names start with these
        workloads: Vec<String>,
        /// Only records of these sizes (comma-separated: 100000,1000000)
        #[arg(long, value_delimiter = ',', value_name = "N,...")]
        sizes: Vec<u64>,
        /// Only these subjects, by exact name (comma-separated: "fast-rm,rm -r,rmz")
        #[arg(long, value_delimiter = ',', value_name = "NAME,...")]
        subjects: Vec<String>,
    },
    /// Fuzz targets (cargo-fuzz, libFuzzer, AddressSanitizer; nightly)
    #[command(
        long_about = "Runs the fuzz targets in fuzz/ (one per input that crosses a trust boundary:\n\
rush-parse, greppy-frames, termio-upgrade, ...) with cargo-fuzz and libFuzzer,\n\
built by the nightly toolchain with AddressSanitizer and debug assertions.\n\
Installs the nightly toolchain and cargo-fuzz when missing. Each target starts\n\
from its committed seeds (fuzz/corpus/TARGET) and keeps what it finds worth\n\
keeping in target/fuzz/corpus/TARGET; an input that crashes, leaks or runs\n\
over 10 s is left in target/fuzz/artifacts/TARGET (a crash or leak minimized\n\
beside it), and the command exits non-zero. Prints executions and coverage per\n\
target at the end. `cargo test` runs every committed input through its check\n\
(fuzz/tests/corpus.rs)."
    )]
    Fuzz {
        /// One target (every target without)
        target: Option<String>,
        /// Print the targets, one a line
        #[arg(long)]
        list: bool,
        /// Seconds each target runs
        #[arg(long, value_name = "SECONDS", default_value_t = 60)]
        time: u64,
    },
    /// The code with `unsafe` blocks under Miri and AddressSanitizer (nightly)
    #[command(
        long_about = "miri: termio's ring, pyloop's GilCell and the pure fuzz targets' committed\n\
inputs (greppy's index and frames, termio's ring, UTF-8 framing and plan\n\
detector), interpreted by Miri. address: the tests of rush, fast-rm, greppy,\n\
termio and latency, and pyloop's pytest suite on CPython 3.11, built with\n\
AddressSanitizer (target/address). Installs the nightly toolchain, Miri and\n\
the standard library's source when missing. thread: pyloop's pytest suite on a\n\
free-threaded CPython 3.14 built with --with-thread-sanitizer (built from\n\
CPython's source under target/pyloop, or --python), with CPython's\n\
suppressions file (or --suppressions). Not run by `cargo xtask test`."
    )]
    Sanitize {
        /// Which checker (`all` is miri and address)
        #[arg(value_enum, default_value_t = crate::sanitize::Checker::All)]
        checker: crate::sanitize::Checker,
        /// thread: a CPython built with ThreadSanitizer (default: built here)
        #[arg(long, value_name = "PATH")]
        python: Option<PathBuf>,
        /// thread: a suppressions file (CPython's Tools/tsan/suppressions_free_threading.txt)
        #[arg(long, value_name = "FILE")]
        suppressions: Option<PathBuf>,
    },
    /// External test suites: Oils' spec tests for rush, CPython's for pyloop
    #[command(
        long_about = "rush: runs the Oils shell spec tests (a checkout of oils-for-unix/oils at\n\
--oils PATH; the runner needs Python 2.7) against the release build of rush,\n\
and prints pass/total per spec file and in total (skipped without --oils):\n\
the 53 POSIX-core files, then the bash-feature files (arrays, [[, extglob,\n\
brace expansion, ${…} operators, declare, shopt, traps, process\n\
substitution, namerefs) with rush, bash, zsh, mksh and dash side by side,\n\
each under the same neutral name.\n\
With --bash PATH (a checkout or clone of bminor/bash), GNU bash's own\n\
tests/: each run-X with THIS_SH set to this machine's bash and to rush, each\n\
as a link named bash, pass or fail and differing lines per file, side by side\n\
(from a clone, at the commit of the installed bash's release).\n\
Then real bash programs, from Debian's bash-completion and git packages\n\
(installed with apt when missing): every completion file parsed by rush and\n\
bash with -O extglob -n, and completions of git and common commands driven\n\
through complete -F in a real repository, rush's candidates beside bash's.\n\
\n\
pyloop: runs CPython 3.11.7's own test.test_asyncio modules with pyloop,\n\
asyncio and uvloop, one module per process, and prints pass/total per module\n\
for each loop (with --python 3.14, CPython 3.14's suite, and the modules it\n\
adds). With --uvloop (a checkout of MagicStack/uvloop), also uvloop's\n\
own test mixins. With --projects, instead, the own pytest suites of anyio,\n\
aiohttp, uvicorn, httpx, asyncssh and aiosmtpd (pinned versions, their sdists\n\
from PyPI), with each loop; a test that fails with pyloop and passes with asyncio's loop is printed\n\
by name. With --websockets (a checkout of python-websockets/websockets, whose\n\
sdist has no tests), its asyncio suite too.\n\
\n\
greppy: with --ripgrep (a clone of BurntSushi/ripgrep), ripgrep's own\n\
integration tests at the tag of the rg it installs (cargo install ripgrep\n\
into target/peers), run against that rg, greppy installed as rg, and greppy\n\
with GREPPY_NO_DAEMON=1; the tests rg passes and greppy fails, by name.\n\
\n\
termio: with --node-pty (a clone of microsoft/node-pty), node-pty's own\n\
Unix tests at the tag of the node-pty npm installs, run with mocha against\n\
node-pty and against termio's node-pty API (termio/node-pty).\n\
\n\
fast-rm: with --coreutils and --gnulib (clones of coreutils/coreutils and\n\
coreutils/gnulib), GNU coreutils' own tests/rm at the tag of the GNU rm\n\
installed here, run against that rm and against fast-rm installed as rm,\n\
first on PATH; as root and as nobody when run as root.\n\
\n\
The suites run from fetched copies; nothing of them is committed."
    )]
    Conformance {
        /// rush, pyloop, greppy, termio or fast-rm
        system: String,
        /// Only these spec files (rush) or modules (pyloop)
        only: Vec<String>,
        /// The Oils checkout (rush)
        #[arg(long, value_name = "PATH")]
        oils: Option<PathBuf>,
        /// A checkout or clone of GNU bash (bminor/bash): its own tests/ (rush)
        #[arg(long, value_name = "PATH")]
        bash: Option<PathBuf>,
        /// A clone of BurntSushi/ripgrep: its own tests/ (greppy)
        #[arg(long, value_name = "PATH")]
        ripgrep: Option<PathBuf>,
        /// A clone of microsoft/node-pty: its own tests (termio)
        #[arg(long = "node-pty", value_name = "PATH")]
        node_pty: Option<PathBuf>,
        /// A clone of coreutils/coreutils: its own tests/rm (fast-rm)
        #[arg(long, value_name = "PATH")]
        coreutils: Option<PathBuf>,
        /// A clone of coreutils/gnulib: its tests/init.sh (fast-rm)
        #[arg(long, value_name = "PATH")]
        gnulib: Option<PathBuf>,
        /// The Python to run it with (2.7 for rush, CPython 3.11.7 for pyloop; found with pyenv by default). For pyloop also a minor version, `3.14`: that CPython's own test_asyncio then runs (Debian's build where pyenv lacks it)
        #[arg(long, value_name = "PATH")]
        python: Option<PathBuf>,
        /// A MagicStack/uvloop checkout (pyloop)
        #[arg(long, value_name = "PATH")]
        uvloop: Option<PathBuf>,
        /// Projects' own test suites instead: anyio, aiohttp, uvicorn, httpx (pyloop)
        #[arg(long)]
        projects: bool,
        /// With --projects: a python-websockets/websockets checkout (pyloop)
        #[arg(long, value_name = "PATH")]
        websockets: Option<PathBuf>,
    },
}

pub fn main() -> Result<()> {
    match Cli::parse().command {
        Command::Test { systems } => crate::test::run(&systems),
        Command::Table {
            system,
            workloads,
            sizes,
            subjects,
        } => crate::table::run(
            &system,
            &crate::table::Only {
                workloads,
                sizes,
                subjects,
            },
        ),
        Command::Fuzz { target, list, time } => crate::fuzz::run(target.as_deref(), list, time),
        Command::Sanitize {
            checker,
            python,
            suppressions,
        } => crate::sanitize::run(
            checker,
            &crate::sanitize::ThreadArgs {
                python,
                suppressions,
            },
        ),
        Command::Deps {
            check,
            bench,
            systems,
        } => crate::deps::run(check, bench, &systems),
        Command::Bench {
            systems,
            quick,
            micro,
        } if micro => crate::bench::micro(&systems, quick),
        Command::Bench { systems, quick, .. } => crate::bench::run(&systems, quick),
        Command::Install { bins, root } => crate::install::run(&bins, root),
        Command::Dist { systems } => crate::dist::run(&systems),
        Command::Conformance {
            system,
            ripgrep,
            only,
            ..
        } if system == "greppy" => match ripgrep {
            Some(r) => crate::ripgrep_suite::run(&r, &only),
            None => anyhow::bail!(
                "conformance greppy needs --ripgrep PATH, a clone of BurntSushi/ripgrep"
            ),
        },
        Command::Conformance {
            system, node_pty, ..
        } if system == "termio" => match node_pty {
            Some(p) => crate::node_pty_suite::run(&p),
            None => anyhow::bail!(
                "conformance termio needs --node-pty PATH, a clone of microsoft/node-pty"
            ),
        },
        Command::Conformance {
            system,
            coreutils,
            gnulib,
            only,
            ..
        } if system == "fast-rm" => match (coreutils, gnulib) {
            (Some(c), Some(g)) => crate::coreutils_suite::run(&c, &g, &only),
            _ => anyhow::bail!(
                "conformance fast-rm needs --coreutils PATH and --gnulib PATH, clones of \
                 coreutils/coreutils and coreutils/gnulib"
            ),
        },
        Command::Conformance {
            system,
            oils,
            bash,
            python,
            uvloop,
            projects,
            websockets,
            only,
            ..
        } => crate::conformance::run(
            &system,
            oils.as_deref(),
            bash.as_deref(),
            python.as_deref(),
            crate::pyloop_conformance::Suites {
                uvloop: uvloop.as_deref(),
                projects,
                websockets: websockets.as_deref(),
            },
            &only,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn p(s: &str) -> Result<Command, clap::Error> {
        Cli::try_parse_from(std::iter::once("xtask").chain(s.split_whitespace())).map(|c| c.command)
    }

    /// The help a command prints (clap reports help as an "error").
    fn help(s: &str) -> String {
        p(s).unwrap_err().to_string()
    }

    #[test]
    fn parses_the_commands() {
        assert_eq!(p("test").unwrap(), Command::Test { systems: vec![] });
        assert_eq!(
            p("bench floor --quick").unwrap(),
            Command::Bench {
                systems: vec!["floor".into()],
                quick: true,
                micro: false
            }
        );
        assert!(p("frobnicate").is_err());
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
            p("dist pyloop").unwrap(),
            Command::Dist {
                systems: vec!["pyloop".into()]
            }
        );
        assert_eq!(
            p("conformance rush --oils /o glob").unwrap(),
            Command::Conformance {
                system: "rush".into(),
                oils: Some("/o".into()),
                bash: None,
                ripgrep: None,
                node_pty: None,
                coreutils: None,
                gnulib: None,
                python: None,
                uvloop: None,
                projects: false,
                websockets: None,
                only: vec!["glob".into()]
            }
        );
        assert_eq!(
            p("conformance pyloop --projects anyio").unwrap(),
            Command::Conformance {
                system: "pyloop".into(),
                oils: None,
                bash: None,
                ripgrep: None,
                node_pty: None,
                coreutils: None,
                gnulib: None,
                python: None,
                uvloop: None,
                projects: true,
                websockets: None,
                only: vec!["anyio".into()]
            }
        );
        assert_eq!(
            p("conformance greppy --ripgrep /r").unwrap(),
            Command::Conformance {
                system: "greppy".into(),
                oils: None,
                bash: None,
                ripgrep: Some("/r".into()),
                node_pty: None,
                coreutils: None,
                gnulib: None,
                python: None,
                uvloop: None,
                projects: false,
                websockets: None,
                only: vec![]
            }
        );
        assert_eq!(
            p("conformance termio --node-pty /n").unwrap(),
            Command::Conformance {
                system: "termio".into(),
                oils: None,
                bash: None,
                ripgrep: None,
                node_pty: Some("/n".into()),
                coreutils: None,
                gnulib: None,
                python: None,
                uvloop: None,
                projects: false,
                websockets: None,
                only: vec![]
            }
        );
        assert_eq!(
            p("deps --check rush").unwrap(),
            Command::Deps {
                check: true,
                bench: false,
                systems: vec!["rush".into()]
            }
        );
        assert_eq!(
            p("sanitize").unwrap(),
            Command::Sanitize {
                checker: crate::sanitize::Checker::All,
                python: None,
                suppressions: None,
            }
        );
        assert_eq!(
            p("sanitize thread --python /opt/py/bin/python3.14t").unwrap(),
            Command::Sanitize {
                checker: crate::sanitize::Checker::Thread,
                python: Some("/opt/py/bin/python3.14t".into()),
                suppressions: None,
            }
        );
        assert!(p("sanitize memory").is_err());
        assert_eq!(
            p("fuzz rush-parse --time 30").unwrap(),
            Command::Fuzz {
                target: Some("rush-parse".into()),
                list: false,
                time: 30
            }
        );
        assert_eq!(
            p("fuzz --list").unwrap(),
            Command::Fuzz {
                target: None,
                list: true,
                time: 60
            }
        );
        assert!(p("conformance").is_err());
        assert!(p("bench --oils /o").is_err());
        assert!(p("test --uvloop /u").is_err());
    }

    #[test]
    fn each_command_has_its_own_help() {
        let bench = help("bench --help");
        assert!(
            bench.contains("Usage: cargo xtask bench [OPTIONS] [SYSTEMS]..."),
            "{bench}"
        );
        assert!(
            bench.contains("--quick") && bench.contains("61 to 121 minutes"),
            "{bench}"
        );
        assert!(
            bench.contains("target/peers") && bench.contains("apt-get"),
            "{bench}"
        );
        assert!(!bench.contains("conformance"), "{bench}");
        let test = help("test --help");
        assert!(
            test.contains("Usage: cargo xtask test") && test.contains("pytest"),
            "{test}"
        );
        let conf = help("conformance --help");
        assert!(conf.contains("--oils") && conf.contains("Oils"), "{conf}");
        let top = help("--help");
        for c in [
            "test",
            "bench",
            "deps",
            "dist",
            "install",
            "conformance",
            "fuzz",
            "sanitize",
        ] {
            assert!(top.contains(c), "{top}");
        }
        Cli::command().debug_assert();
    }
}
