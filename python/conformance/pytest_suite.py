"""Runs a third-party project's own pytest suite with a chosen loop.

    python pytest_suite.py --loop pyloop|asyncio|uvloop --suite NAME SRC

SRC is the project's unpacked sdist (its `tests/` folder and its pytest
configuration); the project itself is imported from the venv, where the same
version is installed. For websockets, whose sdist has no tests, SRC is a
checkout, and its `src/` is imported. Nothing in SRC is changed.

The loop is chosen through the event loop policy, which this module sets as
a pytest plugin (`-p pytest_suite`, in every xdist worker too) from the
environment variable PYLOOP_SUITE_LOOP: the suites make their asyncio loops with `asyncio.new_event_loop()` or an
`asyncio.Runner` without a factory, which ask the policy. Only the suite's
own plain-asyncio parametrisation runs (anyio's `asyncio` backend, in debug
mode as anyio's suite sets it; aiohttp's `pyloop` factory, which is
`asyncio.new_event_loop`; uvicorn's tests run on anyio's `asyncio` backend),
so each loop runs the same tests.

Not installed on purpose: `blockbuster`. anyio's and aiohttp's suites use it, when present, to
flag blocking calls made on the loop's thread, and it allows the ones
asyncio's own modules make by their file name (`subprocess.Popen` reading its
exec pipe, from `asyncio/base_events.py`); the same call from pyloop's
`_loop.py` would be flagged.

Prints one JSON line: the counts and the ids of the tests that did not pass
(failed in their call, or errored in setup or teardown).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

SUITES = {
    # anyio's pyproject sets `-p anyio`, the timeout and `filterwarnings =
    # error`; only the backend is chosen here.
    "anyio": ["-k", "asyncio and not uvloop and not eager and not trio"],
    # aiohttp's pytest.ini adds coverage and xdist options (`addopts`): set
    # aside, with its default marker selection kept. Two workers, as the
    # suite is written for.
    "aiohttp": [
        "-o",
        "addopts=",
        "-m",
        "not dev_mode and not autobahn and not internal",
        "--aiohttp-loop=pyloop",
        "-n",
        "2",
    ],
    # uvicorn's servers run in the test's own loop (anyio's `asyncio`
    # backend). Its addopts ask for 8 xdist workers: two here; its
    # benchmarks need pytest-codspeed's runner and are left out.
    "uvicorn": ["-o", "addopts=", "-n", "2", "--ignore=tests/benchmarks"],
    # httpx's async tests run on anyio's backends; its test servers are
    # uvicorn's, in a thread.
    "httpx": ["-k", "not trio"],
    # websockets' sdist has no tests: SRC is a checkout, whose `src/` is put
    # first on the path. Its unittest cases (IsolatedAsyncioTestCase, whose
    # runner asks the policy) for the asyncio implementation.
    "websockets": [],
    # asyncssh's unittest cases make their loop with
    # `asyncio.new_event_loop()`; its servers, clients, forwarding, SFTP and
    # subprocesses all run on it.
    "asyncssh": [],
    # aiosmtpd's pytest.ini adds coverage (`addopts`); its `filterwarnings =
    # error` turns pytest-asyncio's notice about an unset fixture loop scope
    # into an error, so the scope is set. Its servers run a loop of their
    # own in a thread (`Controller`).
    "aiosmtpd": ["-o", "addopts=", "-o", "asyncio_default_fixture_loop_scope=function"],
}

# The folders pytest is given, when it is not `tests`.
PATHS = {"websockets": ["tests/asyncio"], "aiosmtpd": ["aiosmtpd/tests"]}

# The suites written for pytest-asyncio, which the venv has for them; the
# others run without it, as they are written to (anyio's `filterwarnings =
# error` would stop at pytest-asyncio's notice).
PYTEST_ASYNCIO = {"aiosmtpd"}


LOOP_VAR = "PYLOOP_SUITE_LOOP"


def set_policy(name):
    if name == "pyloop":
        import pyloop

        asyncio.set_event_loop_policy(pyloop.EventLoopPolicy())
    elif name == "uvloop":
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    elif name != "asyncio":
        raise SystemExit(f"unknown loop {name!r}")


def pytest_configure(config):
    """As a plugin: the chosen loop's policy, before any test runs."""
    set_policy(os.environ[LOOP_VAR])


class Collect:
    """A pytest plugin that keeps each test's outcome."""

    def __init__(self):
        self.outcome = {}

    def pytest_runtest_logreport(self, report):
        tid = report.nodeid
        if report.failed:
            self.outcome[tid] = "failed" if report.when == "call" else "error"
        elif report.skipped:
            self.outcome.setdefault(tid, "skipped")
        elif report.when == "call":
            self.outcome.setdefault(tid, "passed")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loop", required=True, choices=["pyloop", "asyncio", "uvloop"])
    ap.add_argument("--suite", required=True, choices=sorted(SUITES))
    ap.add_argument("--test-timeout", type=int, default=60)
    ap.add_argument("src")
    ap.add_argument("pytest_args", nargs="*", help="more arguments for pytest")
    args = ap.parse_args()

    here = os.path.dirname(os.path.abspath(__file__))
    first = [here]
    if args.suite == "websockets":
        first.append(os.path.join(os.path.abspath(args.src), "src"))
    os.environ[LOOP_VAR] = args.loop
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (*first, os.environ.get("PYTHONPATH")) if p
    )
    sys.path[:0] = first

    import pytest

    os.chdir(args.src)
    collect = Collect()
    argv = [
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "pytest_suite",
        f"--timeout={args.test_timeout}",
        *SUITES[args.suite],
        *args.pytest_args,
    ]
    if args.suite not in PYTEST_ASYNCIO:
        argv += ["-p", "no:asyncio"]
    argv.extend(PATHS.get(args.suite, ["tests"]))
    try:
        code = pytest.main(argv, plugins=[collect])
    except Exception as e:
        # Raised after the tests ran, from pytest's own unconfigure (uvloop's
        # handles' finalizers under aiosmtpd's `filterwarnings = error`):
        # the outcomes are kept, the exit says it.
        print(f"pytest ended with {e!r}", file=sys.stderr)
        code = -1
    counts = {k: 0 for k in ("passed", "failed", "error", "skipped")}
    for kind in collect.outcome.values():
        counts[kind] += 1
    out = {
        "suite": args.suite,
        "loop": args.loop,
        "passed": counts["passed"],
        "total": len(collect.outcome) - counts["skipped"],
        "skipped": counts["skipped"],
        "exit": int(code),
        "not_passed": {t: k for t, k in sorted(collect.outcome.items()) if k in ("failed", "error")},
    }
    print(json.dumps(out), flush=True)
    sys.stderr.flush()
    # As the other runners: leftover threads of a failed test must not hold
    # the process at exit; the result is printed.
    os._exit(0)


if __name__ == "__main__":
    main()
