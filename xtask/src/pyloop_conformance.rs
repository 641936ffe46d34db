//! `cargo xtask conformance pyloop`: runs modules of CPython's own
//! `test.test_asyncio` (from CPython 3.11.7) with pyloop, asyncio's default
//! loop and uvloop, one module per process, and prints pass/total per module
//! for each loop. `python/conformance/cpython_asyncio.py` runs one module.
//!
//! With `--projects`, instead, the own pytest suites of projects that run on
//! asyncio (`PROJECTS`), from their sdists on PyPI, with each loop
//! (`python/conformance/pytest_suite.py` runs one); the tests that fail
//! with pyloop but pass with asyncio's loop are listed by name. websockets'
//! suite, which its sdist lacks, runs from a checkout (`--websockets`).

use crate::{cmd, python};
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

/// The CPython whose test suite is the reference.
pub const CPYTHON: &str = "3.11.7";

/// The modules issue 5 names, in its order, then test_subprocess, and
/// the sendfile and TLS modules of issue 17.
pub const MODULES: &[&str] = &[
    "test_futures",
    "test_futures2",
    "test_tasks",
    "test_locks",
    "test_queues",
    "test_taskgroups",
    "test_timeouts",
    "test_waitfor",
    "test_context",
    "test_pep492",
    "test_runners",
    "test_threads",
    "test_streams",
    "test_events",
    "test_sock_lowlevel",
    "test_buffered_proto",
    "test_server",
    "test_subprocess",
    "test_sendfile",
    "test_ssl",
    "test_sslproto",
];

/// Modules that CPython 3.14's suite adds, run when the CPython is 3.14 or
/// newer (`--python 3.14`).
pub const MODULES_3_14: &[&str] = &[
    "test_eager_task_factory",
    "test_graph",
    "test_staggered",
    "test_tools",
];

pub const LOOPS: &[&str] = &["pyloop", "asyncio", "uvloop"];

/// uvloop's own test modules whose mixins apply to pyloop (TLS mixins
/// included).
pub const UVLOOP_MODULES: &[&str] = &[
    "test_base",
    "test_tcp",
    "test_unix",
    "test_sockets",
    "test_context",
    "test_executors",
    "test_signals",
    "test_pipes",
    "test_process",
    "test_udp",
];

/// Projects whose own test suites run with each loop (`--projects`): the
/// sdist's version, and what its tests import beyond pytest. Not
/// `blockbuster`: see `python/conformance/pytest_suite.py`.
pub const PROJECTS: &[(&str, &str, &[&str])] = &[
    (
        "anyio",
        "4.16.0",
        &[
            "pytest>=9",
            "pytest-mock",
            "pytest-timeout",
            "trustme",
            "truststore",
            "hypothesis",
            "psutil",
        ],
    ),
    (
        "aiohttp",
        "3.14.5",
        &[
            "pytest-xdist",
            // Its pytest.ini's filterwarnings names a coverage warning.
            "coverage",
            "pytest-mock",
            "pytest-timeout",
            "pytest-codspeed",
            "freezegun",
            "proxy.py>=2.4.4rc5",
            "trustme",
            "isal",
            "zlib-ng",
            "brotli",
            "pkgconfig",
            "setuptools-git",
            "python-on-whales",
        ],
    ),
    (
        "uvicorn",
        "0.54.0",
        &[
            "uvicorn[standard]==0.54.0",
            "pytest-xdist",
            "pytest-mock",
            "trustme",
            "cryptography",
            "httpx2",
            "a2wsgi",
            "wsproto",
            "zttp",
            "coverage-conditional-plugin",
            // For websockets' proxy tests (`--websockets`).
            "python-socks[asyncio]",
        ],
    ),
    (
        "httpx",
        "0.28.1",
        &[
            "httpx[brotli,zstd,http2,socks]==0.28.1",
            // Its pytest config's filterwarnings names trio's warning; the
            // trio-backend tests are not run.
            "trio",
            "trustme",
            "chardet",
            "cryptography",
            "uvicorn",
        ],
    ),
    (
        "asyncssh",
        "2.24.1",
        &[
            // Its extras, as its tox.ini installs them (not gssapi nor
            // python-pkcs11, which need system libraries).
            "bcrypt",
            "fido2",
            "pyOpenSSL",
            "aiofiles",
            "ifaddr",
            "cryptography",
        ],
    ),
    (
        "aiosmtpd",
        "1.4.6",
        &[
            "pytest-asyncio",
            "pytest-mock",
            // Its tests import pkg_resources.
            "setuptools<81",
        ],
    ),
];

/// A project's whole suite, with one loop, that runs longer than this is
/// stopped and counted as no result.
const PROJECT_TIMEOUT_S: u32 = 3600;

/// A whole module that runs longer than this is stopped and counted as hung
/// (the runner also stops any single test after 60 s).
const MODULE_TIMEOUT_S: u32 = 900;

/// The suites `conformance pyloop` runs beside CPython's own (its flags).
#[derive(Debug, Default, Clone, Copy)]
pub struct Suites<'a> {
    /// `--uvloop`: a MagicStack/uvloop checkout, for its test mixins.
    pub uvloop: Option<&'a Path>,
    /// `--projects`: the projects' own suites, instead of CPython's.
    pub projects: bool,
    /// `--websockets`: a python-websockets checkout (with `--projects`).
    pub websockets: Option<&'a Path>,
}

impl Suites<'_> {
    /// Whether any was asked for (`conformance rush` refuses them).
    pub fn any(&self) -> bool {
        self.uvloop.is_some() || self.projects || self.websockets.is_some()
    }

    /// Refuses flags that do not go together, and names in `only` that
    /// are not a module (or, with `--projects`, a project) it knows.
    fn check(&self, only: &[String]) -> Result<()> {
        if self.websockets.is_some() && !self.projects {
            bail!("--websockets goes with --projects");
        }
        if self.projects && self.uvloop.is_some() {
            bail!("--uvloop and --projects are separate runs");
        }
        let known: Vec<&str> = if self.projects {
            PROJECTS
                .iter()
                .map(|p| p.0)
                .chain(self.websockets.map(|_| "websockets"))
                .collect()
        } else {
            MODULES.iter().chain(MODULES_3_14).copied().collect()
        };
        let what = if self.projects { "project" } else { "module" };
        for name in only {
            if !known.contains(&name.as_str()) {
                bail!("unknown {what} {name:?}; known: {}", known.join(", "));
            }
        }
        Ok(())
    }
}

pub fn run(python: Option<&Path>, suites: Suites<'_>, only: &[String]) -> Result<()> {
    suites.check(only)?;
    let python = match python {
        // A minor version ("3.14"): found as `cargo xtask test` finds it
        // (for the newest, Debian's build, with its test package).
        Some(p) if !p.exists() && p.to_str().is_some_and(is_minor) => {
            let minor = p.to_str().unwrap_or_default();
            python::find(minor).with_context(|| format!("CPython {minor} not found"))?
        }
        Some(p) => p.to_path_buf(),
        None => python::find_exact(CPYTHON).with_context(|| {
            format!("CPython {CPYTHON} not found: `pyenv install {CPYTHON}`, or pass --python")
        })?,
    };
    // "3.14.7t" for a free-threaded build, so that its venv is its own.
    let version = cmd::output(Command::new(&python).args([
        "-c",
        "import platform, sysconfig; print(platform.python_version() \
         + ('t' if sysconfig.get_config_var('Py_GIL_DISABLED') else ''))",
    ]))
    .with_context(|| format!("{} does not run", python.display()))?;
    if suites.projects {
        let out = crate::target_dir().join("conformance");
        std::fs::create_dir_all(&out)?;
        let table = project_suites(&python, only, suites.websockets, &out)?;
        println!(
            "Projects' own test suites (sdists; websockets from a checkout), with each loop:\n"
        );
        println!("{table}");
        println!("Details: {}", out.display());
        return Ok(());
    }
    let modules: Vec<&str> = if !only.is_empty() {
        only.iter().map(String::as_str).collect()
    } else if at_least(&version, 3, 14) {
        MODULES.iter().chain(MODULES_3_14).copied().collect()
    } else {
        MODULES.to_vec()
    };
    let py = python::venv(
        &format!("conformance-{version}"),
        &python,
        // pyOpenSSL: uvloop's test_tcp imports it.
        &["maturin>=1.7,<2", "pyOpenSSL", "psutil"],
    )?;
    // uvloop as a built wheel only: where it has none (a free-threaded
    // CPython), its column is left out rather than built from source.
    let loops: Vec<&str> = if python::install_wheel_only(&py, "uvloop").is_ok() {
        LOOPS.to_vec()
    } else {
        eprintln!("no uvloop wheel for CPython {version}: its column is left out");
        LOOPS.iter().copied().filter(|l| *l != "uvloop").collect()
    };
    python::install_pyloop(&py, true)?;
    let runner = crate::root().join("python/conformance/cpython_asyncio.py");
    let out = crate::target_dir().join("conformance");
    std::fs::create_dir_all(&out)?;
    let cpython = suite(&py, &[runner], &modules, &loops, &out.join("pyloop.json"))?;
    println!("CPython {version} test.test_asyncio, one module per process:\n");
    println!("{cpython}");
    if let Some(checkout) = suites.uvloop {
        let tests = checkout.join("tests");
        if !tests.join("test_tcp.py").is_file() {
            bail!(
                "{} has no tests/test_tcp.py; is it a uvloop checkout?",
                checkout.display()
            );
        }
        let runner = crate::root().join("python/conformance/uvloop_suite.py");
        let args = [runner, "--tests".into(), tests];
        let table = suite(
            &py,
            &args,
            UVLOOP_MODULES,
            &loops,
            &out.join("pyloop-uvloop-suite.json"),
        )?;
        println!("uvloop's own test mixins, one module per process:\n");
        println!("{table}");
    }
    println!("Details: {}", out.display());
    Ok(())
}

/// Runs every project in `PROJECTS` (or those `only` names) with every loop, in a venv of their
/// own, and returns the table. A test that fails with pyloop and passes
/// with asyncio's loop is printed by name; the details go to
/// `out/projects.json`.
fn project_suites(
    python: &Path,
    only: &[String],
    websockets: Option<&Path>,
    out: &Path,
) -> Result<String> {
    let mut packages = vec!["maturin>=1.7,<2".to_string(), "uvloop".to_string()];
    for (name, version, deps) in PROJECTS {
        packages.push(format!("{name}=={version}"));
        packages.extend(deps.iter().map(|d| d.to_string()));
    }
    let packages: Vec<&str> = packages.iter().map(String::as_str).collect();
    let py = python::venv(&format!("projects-{CPYTHON}"), python, &packages)?;
    python::install_pyloop(&py, true)?;
    let sdists = out.join("sdists");
    let runner = crate::root().join("python/conformance/pytest_suite.py");
    let mut rows = vec![
        std::iter::once("project".to_string())
            .chain(LOOPS.iter().map(|l| l.to_string()))
            .collect::<Vec<_>>(),
    ];
    let mut all = Vec::new();
    // (the row's name, the runner's suite, its source folder)
    let mut suites = Vec::new();
    for (name, version, _) in PROJECTS {
        if only.is_empty() || only.iter().any(|o| o == name) {
            let src = sdist(&py, name, version, &sdists)?;
            suites.push((format!("{name} {version}"), *name, src));
        }
    }
    if let Some(checkout) = websockets
        && (only.is_empty() || only.iter().any(|o| o == "websockets"))
    {
        if !checkout.join("tests/asyncio").is_dir() || !checkout.join("src/websockets").is_dir() {
            bail!(
                "{} has no tests/asyncio or src/websockets; is it a websockets checkout?",
                checkout.display()
            );
        }
        let rev = cmd::output(Command::new("git").arg("-C").arg(checkout).args([
            "rev-parse",
            "--short",
            "HEAD",
        ]))
        .unwrap_or_else(|| "checkout".to_string());
        suites.push((
            format!("websockets {rev}"),
            "websockets",
            checkout.to_path_buf(),
        ));
    }
    for (label, name, src) in &suites {
        let version = label.rsplit(' ').next().unwrap_or_default();
        let mut row = vec![label.clone()];
        let mut results = Vec::new();
        for lp in LOOPS {
            eprintln!("-- {label} with {lp}");
            let mut c = Command::new("timeout");
            c.args(["--kill-after=10", &PROJECT_TIMEOUT_S.to_string()])
                .arg(&py)
                .arg("-P")
                .arg(&runner)
                .args(["--loop", lp, "--suite", name])
                .arg(src)
                .stdin(Stdio::null())
                .stderr(Stdio::null());
            let result = last_json(&mut c, &format!("{name} with {lp}"));
            row.push(match &result {
                Ok(v) => format!(
                    "{}/{}",
                    v["passed"].as_u64().unwrap_or(0),
                    v["total"].as_u64().unwrap_or(0)
                ),
                Err(e) => {
                    eprintln!("{e:#}");
                    "no result (crash or hang)".to_string()
                }
            });
            results.push(result.ok());
        }
        // Tests that fail with pyloop and pass with asyncio's loop.
        if let [Some(ours), Some(theirs), ..] = &results[..]
            && let Some(bad) = ours["not_passed"].as_object()
        {
            let also = theirs["not_passed"].as_object();
            for (test, kind) in bad {
                let shared = also.is_some_and(|a| a.contains_key(test));
                if !shared {
                    eprintln!("   pyloop {kind}, asyncio passed: {test}");
                }
            }
        }
        all.push(serde_json::json!({"project": name, "version": version, "results": results}));
        rows.push(row);
    }
    std::fs::write(
        out.join("projects.json"),
        serde_json::to_string_pretty(&all)?,
    )?;
    Ok(crate::report::markdown_table(&rows))
}

/// Downloads and unpacks a project's sdist (once) into `dir`; returns the
/// unpacked folder.
fn sdist(py: &Path, name: &str, version: &str, dir: &Path) -> Result<std::path::PathBuf> {
    let src = dir.join(format!("{name}-{version}"));
    if src.join("tests").is_dir() {
        return Ok(src);
    }
    std::fs::create_dir_all(dir)?;
    cmd::run(
        Command::new(py)
            .args(["-m", "pip", "download", "-q", "--disable-pip-version-check"])
            .args(["--no-deps", "--no-binary", ":all:", "-d"])
            .arg(dir)
            .arg(format!("{name}=={version}")),
    )?;
    let archive = dir.join(format!("{name}-{version}.tar.gz"));
    cmd::run(
        Command::new("tar")
            .arg("-xzf")
            .arg(&archive)
            .arg("-C")
            .arg(dir),
    )?;
    // Its tests: in `tests/`, or in the package (aiosmtpd's).
    if !src.join("tests").is_dir() && !src.join(name).join("tests").is_dir() {
        bail!("{} has no tests/ folder", src.display());
    }
    Ok(src)
}

/// Runs `modules` with every loop through `runner` (a script and its first
/// arguments), and returns the table; the details go to `json`.
fn suite(
    py: &Path,
    runner: &[std::path::PathBuf],
    modules: &[&str],
    loops: &[&str],
    json: &Path,
) -> Result<String> {
    let mut rows = vec![
        std::iter::once("module".to_string())
            .chain(loops.iter().map(|l| l.to_string()))
            .collect::<Vec<_>>(),
    ];
    let mut all = Vec::new();
    let mut totals = vec![(0u64, 0u64); loops.len()];
    for module in modules {
        let mut row = vec![module.to_string()];
        for (i, lp) in loops.iter().enumerate() {
            eprintln!("-- {module} with {lp}");
            let result = run_module(py, runner, lp, module);
            let cell = match &result {
                Ok(v) => {
                    let passed = v["passed"].as_u64().unwrap_or(0);
                    let total = v["total"].as_u64().unwrap_or(0);
                    totals[i].0 += passed;
                    totals[i].1 += total;
                    let hung = v["hung"].as_array().map_or(0, Vec::len);
                    if hung > 0 {
                        format!("{passed}/{total} ({hung} hung)")
                    } else {
                        format!("{passed}/{total}")
                    }
                }
                Err(e) => {
                    eprintln!("{e:#}");
                    "no result (crash or hang)".to_string()
                }
            };
            if let (Ok(v), "pyloop") = (&result, *lp)
                && let Some(bad) = v["not_passed"].as_object()
            {
                for (test, kind) in bad {
                    eprintln!("   pyloop {kind}: {test}");
                }
            }
            all.push(serde_json::json!({
                "module": module,
                "loop": lp,
                "result": result.as_ref().ok(),
            }));
            row.push(cell);
        }
        rows.push(row);
    }
    rows.push(
        std::iter::once("total".to_string())
            .chain(totals.iter().map(|(p, t)| format!("{p}/{t}")))
            .collect(),
    );
    std::fs::write(json, serde_json::to_string_pretty(&all)?)?;
    Ok(crate::report::markdown_table(&rows))
}

fn run_module(py: &Path, runner: &[std::path::PathBuf], lp: &str, module: &str) -> Result<Value> {
    let mut c = Command::new("timeout");
    c.args(["--kill-after=10", &MODULE_TIMEOUT_S.to_string()])
        .arg(py)
        .arg("-P")
        .args(runner)
        .args(["--loop", lp, module])
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    last_json(&mut c, &format!("{module} with {lp}"))
}

/// Runs a runner (under `timeout`, see [`cmd::contained`]) and parses the
/// JSON line it prints last. (uvloop's test_subprocess left `sleep(3600)`
/// processes behind.)
fn last_json(c: &mut Command, what: &str) -> Result<Value> {
    let (status, bytes) = cmd::contained(c, false, what)?;
    let stdout = String::from_utf8_lossy(&bytes);
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .with_context(|| format!("{what} gave no result ({status})"))?;
    Ok(serde_json::from_str(line)?)
}

/// Whether `s` names a CPython minor version ("3.14", "3.14t").
fn is_minor(s: &str) -> bool {
    // "3.14t": the free-threaded build of 3.14.
    let s = s.strip_suffix('t').unwrap_or(s);
    s.split_once('.').is_some_and(|(a, b)| {
        !a.is_empty() && !b.is_empty() && (a.chars().chain(b.chars())).all(|c| c.is_ascii_digit())
    })
}

/// Whether the version `v` ("3.14.10") is at least `major.minor`.
fn at_least(v: &str, major: u32, minor: u32) -> bool {
    let mut parts = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (a, b) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (a, b) >= (major, minor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runner_that_leaves_children_behind_gives_its_result_at_once() {
        // The child of `sh` outlives it, with the runner's stdout: before,
        // reading that to its end waited the minute out.
        let start = std::time::Instant::now();
        let mut c = Command::new("timeout");
        c.args(["30", "sh", "-c", "sleep 60 & echo '{\"passed\": 1}'"]);
        let v = last_json(&mut c, "a test runner").unwrap();
        assert_eq!(v["passed"], 1);
        assert!(start.elapsed() < std::time::Duration::from_secs(20));
    }

    #[test]
    fn reads_minor_versions() {
        assert!(
            is_minor("3.14") && !is_minor("3.14.10") && !is_minor("python3") && !is_minor("3.")
        );
        assert!(is_minor("3.14t") && !is_minor("3.14tt") && !is_minor("t"));
        assert!(at_least("3.14.10", 3, 14) && at_least("3.15.0a1", 3, 14));
        assert!(!at_least("3.11.7", 3, 14) && !at_least("3.13.12", 3, 14));
    }

    fn refused(suites: Suites<'_>, only: &[&str]) -> String {
        let only: Vec<String> = only.iter().map(|s| s.to_string()).collect();
        // The flags are checked before CPython is looked for.
        format!("{:#}", run(None, suites, &only).unwrap_err())
    }

    #[test]
    fn flags_that_do_not_go_together_and_unknown_names_are_refused() {
        let ws = Path::new("/w");
        let e = refused(
            Suites {
                websockets: Some(ws),
                ..Default::default()
            },
            &[],
        );
        assert_eq!(e, "--websockets goes with --projects");
        let e = refused(
            Suites {
                uvloop: Some(ws),
                projects: true,
                ..Default::default()
            },
            &[],
        );
        assert_eq!(e, "--uvloop and --projects are separate runs");
        let projects = Suites {
            projects: true,
            ..Default::default()
        };
        let e = refused(projects, &["anyio", "trio"]);
        assert!(
            e.starts_with("unknown project \"trio\"; known: anyio, aiohttp"),
            "{e}"
        );
        // websockets is a project only when its checkout is given.
        let e = refused(projects, &["websockets"]);
        assert!(e.starts_with("unknown project \"websockets\""), "{e}");
        let e = refused(Suites::default(), &["test_nothing"]);
        assert!(
            e.starts_with("unknown module \"test_nothing\"; known: test_futures"),
            "{e}"
        );
    }

    #[test]
    fn rush_refuses_the_pyloop_flags() {
        let e = crate::conformance::run(
            "rush",
            None,
            None,
            None,
            Suites {
                projects: true,
                ..Default::default()
            },
            &[],
        )
        .unwrap_err();
        assert!(
            format!("{e}").contains("belong to `conformance pyloop`"),
            "{e}"
        );
    }
}
