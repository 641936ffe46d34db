"""pyloop: a drop-in asyncio event loop written in Rust.

    import pyloop
    pyloop.run(main())                       # like asyncio.run(main())

    with asyncio.Runner(loop_factory=pyloop.new_event_loop) as runner:
        runner.run(main())

    pyloop.install()                         # older code: set the policy
"""

from __future__ import annotations

import asyncio as __asyncio
import sys as __sys
import warnings as __warnings
from asyncio import unix_events as __unix_events

from ._loop import (
    DatagramTransport,
    Loop,
    ReadPipeTransport,
    Server,
    SocketTransport,
    SubprocessTransport,
    WritePipeTransport,
)
from ._pyloop import Handle, TimerHandle

__all__ = (
    "DatagramTransport",
    "EventLoopPolicy",
    "Handle",
    "Loop",
    "ReadPipeTransport",
    "Server",
    "SocketTransport",
    "SubprocessTransport",
    "TimerHandle",
    "WritePipeTransport",
    "install",
    "new_event_loop",
    "run",
)

__version__ = "0.1.0"


def new_event_loop() -> Loop:
    """Returns a new pyloop event loop."""
    return Loop()


def run(main, *, debug=None):
    """Runs the coroutine ``main`` on a new pyloop loop, as ``asyncio.run``."""
    with __asyncio.Runner(loop_factory=new_event_loop, debug=debug) as runner:
        return runner.run(main)


# asyncio.DefaultEventLoopPolicy is this class, under a name that warns
# from Python 3.14 on (asyncio's policies are deprecated there): subclassing
# it by that name would warn at every `import pyloop`.
class EventLoopPolicy(__unix_events._UnixDefaultEventLoopPolicy):
    """An event loop policy whose loops are pyloop loops.

    asyncio's policy system is deprecated from Python 3.14 on: prefer
    ``pyloop.run()`` or ``asyncio.Runner(loop_factory=pyloop.new_event_loop)``.
    """

    def _loop_factory(self):
        return new_event_loop()


def install() -> None:
    """Makes pyloop the loop of ``asyncio.new_event_loop()`` and ``asyncio.run()``.

    From Python 3.14 on, where asyncio deprecates its policies, this warns
    (once, from the caller's line) and still installs the policy.
    """
    if __sys.version_info >= (3, 14):
        __warnings.warn(
            "pyloop.install() sets an asyncio event loop policy, which Python 3.14 "
            "deprecates; use pyloop.run(main()) or "
            "asyncio.Runner(loop_factory=pyloop.new_event_loop)",
            DeprecationWarning,
            stacklevel=2,
        )
        __asyncio.events._set_event_loop_policy(EventLoopPolicy())
    else:
        __asyncio.set_event_loop_policy(EventLoopPolicy())
