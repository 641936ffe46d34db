"""Runs one module of uvloop's own test suite with a chosen loop.

    python uvloop_suite.py --tests PATH --loop pyloop|asyncio|uvloop MODULE

PATH is the `tests/` folder of a MagicStack/uvloop checkout. Its test cases
are a mixin of loop-independent tests (`_TestTCP`, `_TestUnix`, ...) combined
with `uvloop._testbase.UVTestCase` (uvloop) or `AIOTestCase` (asyncio). For
each such pair in the module, this runs the mixin alone with the chosen
loop's test case: uvloop-only tests written in the UV subclass itself do not
run for anyone.

Prints one JSON line, as cpython_asyncio.py does.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpython_asyncio import run_and_report  # noqa: E402

NEW_LOOP_EXPR = {
    "pyloop": "__import__('pyloop').new_event_loop()",
    "uvloop": "uvloop.new_event_loop()",
    "asyncio": "asyncio.new_event_loop()",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tests", required=True)
    ap.add_argument("--loop", required=True)
    ap.add_argument("--test-timeout", type=int, default=60)
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("module")
    args = ap.parse_args()

    tests_dir = os.path.abspath(args.tests)
    sys.path.insert(0, os.path.dirname(tests_dir))
    from uvloop import _testbase as tb

    if args.loop == "pyloop":
        import pyloop

        class Case(tb.BaseTestCase):
            implementation = "pyloop"

            def new_loop(self):
                return pyloop.new_event_loop()

            def new_policy(self):
                return pyloop.EventLoopPolicy()

    elif args.loop == "uvloop":
        Case = tb.UVTestCase
    elif args.loop == "asyncio":
        Case = tb.AIOTestCase
    else:
        raise SystemExit(f"unknown loop {args.loop!r}")

    mod = importlib.import_module(f"{os.path.basename(tests_dir)}.{args.module}")
    loader = unittest.TestLoader()
    suite = unittest.TestSuite()
    seen = set()
    for name, obj in sorted(vars(mod).items()):
        if not (isinstance(obj, type) and issubclass(obj, tb.UVTestCase)):
            continue
        mixin = obj.__bases__[0]
        if issubclass(mixin, tb.BaseTestCase) or mixin in seen:
            continue
        seen.add(mixin)
        # Settings the UV subclass gives its mixin (test_signals' NEW_LOOP,
        # the loop a child process makes), pointed at the chosen loop.
        attrs = {"__module__": mod.__name__}
        for key, value in vars(obj).items():
            if key.isupper() and isinstance(value, str):
                attrs[key] = value.replace(
                    "uvloop.new_event_loop()", NEW_LOOP_EXPR[args.loop]
                )
        cls = type(f"{mixin.__name__}_{args.loop}", (mixin, Case), attrs)
        suite.addTests(loader.loadTestsFromTestCase(cls))

    run_and_report(suite, args)


if __name__ == "__main__":
    main()
