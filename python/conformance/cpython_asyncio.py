"""Runs one module of CPython's own test.test_asyncio with a chosen loop.

    python cpython_asyncio.py --loop pyloop|asyncio|uvloop MODULE

Prints one JSON line: the counts and the names of the tests that did not
pass. `cargo xtask conformance pyloop` runs every module in its own process,
for every loop, and prints the table.

The event loop policy is set before the module is imported. The modules that
test a loop class through a mixin get a subclass of their epoll (or selector)
test case whose `create_event_loop`/`new_loop` returns the chosen loop; only
those classes run there, since the other classes in those modules test
asyncio's own Handle, policy and helpers rather than a loop. Those modules
keep asyncio's default policy: their setUp installs a child watcher through
the policy, which uvloop's policy refuses.

One shim, for uvloop only: CPython's test utilities read the private
attribute `loop._default_executor` when they close a loop, and uvloop's
Cython loop does not expose it, so every test would fail in tearDown. The
runner sets it to None on uvloop loops that lack it.

A test that runs longer than --test-timeout seconds is stopped by SIGALRM and
counted as a hang.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import signal
import sys
import unittest

# module -> (class to derive from, name of the loop factory method)
MIXIN_CLASSES = {
    "test_events": ("EPollEventLoopTests", "create_event_loop"),
    "test_sock_lowlevel": ("EPollEventLoopTests", "create_event_loop"),
    "test_buffered_proto": ("BufferedProtocolSelectorTests", "new_loop"),
    "test_server": ("SelectorStartServerTests", "new_loop"),
    "test_sendfile": ("EPollEventLoopTests", "create_event_loop"),
    "test_sslproto": ("SelectorStartTLSTests", "new_loop"),
}


class Hang(BaseException):
    """Raised by the watchdog in a test that ran too long."""


def loop_factory(name):
    if name == "pyloop":
        import pyloop

        return pyloop.new_event_loop, pyloop.EventLoopPolicy()
    if name == "uvloop":
        import uvloop

        return uvloop.new_event_loop, uvloop.EventLoopPolicy()
    if name == "asyncio":
        # asyncio.DefaultEventLoopPolicy, by a name that does not warn on 3.14.
        return asyncio.SelectorEventLoop, asyncio.unix_events._UnixDefaultEventLoopPolicy()
    raise SystemExit(f"unknown loop {name!r}")


def _with_default_executor_attr(factory):
    def make():
        loop = factory()
        if not hasattr(loop, "_default_executor"):
            loop._default_executor = None
        return loop

    return make


class Result(unittest.TestResult):
    def __init__(self, timeout):
        super().__init__()
        self.timeout = timeout
        self.passed = []
        self.bad = {}
        self.hung = []

    def startTest(self, test):
        super().startTest(test)
        signal.alarm(self.timeout)

    def stopTest(self, test):
        signal.alarm(0)
        super().stopTest(test)

    def addSuccess(self, test):
        self.passed.append(test.id())

    def _bad(self, test, err, kind):
        if err:
            (self.failures if kind == "fail" else self.errors).append(
                (test, self._exc_info_to_string(err, test))
            )
        if err and err[0] is Hang:
            self.hung.append(test.id())
            kind = "hang"
        self.bad[test.id()] = kind

    def addFailure(self, test, err):
        self._bad(test, err, "fail")

    def addError(self, test, err):
        self._bad(test, err, "error")

    def addSubTest(self, test, subtest, err):
        # A failed subtest fails its test, which then never reaches
        # addSuccess: count it here, under the test's id.
        super().addSubTest(test, subtest, err)
        if err is not None:
            kind = "fail" if issubclass(err[0], test.failureException) else "error"
            if err[0] is Hang:
                self.hung.append(test.id())
                kind = "hang"
            self.bad.setdefault(test.id(), kind)

    def addUnexpectedSuccess(self, test):
        self.passed.append(test.id())

    def addExpectedFailure(self, test, err):
        self.passed.append(test.id())


def run_and_report(suite, args):
    """Runs `suite` with a SIGALRM watchdog per test, prints the JSON line
    and ends the process: the shared end of this runner and uvloop_suite.py."""

    def on_alarm(signum, frame):
        raise Hang(f"test ran longer than {args.test_timeout} s")

    signal.signal(signal.SIGALRM, on_alarm)
    result = Result(args.test_timeout)
    # Module-level fixtures (tearDownModule) run at the end of suite.run.
    suite.run(result)
    if args.verbose:
        for test, text in result.failures + result.errors:
            print(f"==== {test.id()}\n{text}", file=sys.stderr)
    skipped = len(result.skipped)
    out = {
        "module": args.module,
        "loop": args.loop,
        "passed": len(result.passed),
        "total": result.testsRun - skipped,
        "skipped": skipped,
        "hung": result.hung,
        "not_passed": result.bad,
    }
    print(json.dumps(out), flush=True)
    # Leave without joining leftover threads: a failed test can leave an
    # executor thread blocked in accept(), and interpreter shutdown would
    # wait for it forever. The result is already printed.
    sys.stderr.flush()
    os._exit(0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loop", required=True)
    ap.add_argument("--test-timeout", type=int, default=60)
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("module")
    ap.add_argument("tests", nargs="*", help="test method names to run (default: all)")
    args = ap.parse_args()

    factory, policy = loop_factory(args.loop)
    if args.module not in MIXIN_CLASSES:
        # asyncio's setter, without 3.14's deprecation warning.
        getattr(asyncio.events, "_set_event_loop_policy", asyncio.set_event_loop_policy)(policy)
    if args.loop == "uvloop":
        factory = _with_default_executor_attr(factory)
        policy._loop_factory = factory

    mod = importlib.import_module(f"test.test_asyncio.{args.module}")
    loader = unittest.TestLoader()
    if args.module in MIXIN_CLASSES:
        base_name, method = MIXIN_CLASSES[args.module]
        base = getattr(mod, base_name)
        cls = type(
            f"{args.loop.capitalize()}{base_name}",
            (base,),
            {method: lambda self: factory(), "__module__": mod.__name__},
        )
        suite = loader.loadTestsFromTestCase(cls)
    else:
        suite = loader.loadTestsFromModule(mod)
    if args.tests:
        wanted = set(args.tests)
        flat = []

        def walk(s):
            for t in s:
                if isinstance(t, unittest.TestSuite):
                    walk(t)
                elif t.id().rsplit(".", 1)[-1] in wanted:
                    flat.append(t)

        walk(suite)
        suite = unittest.TestSuite(flat)

    run_and_report(suite, args)


if __name__ == "__main__":
    main()
