"""pyloop: a drop-in asyncio event loop written in Rust.

    import pyloop
    pyloop.run(main())                       # like asyncio.run(main())

    with asyncio.Runner(loop_factory=pyloop.new_event_loop) as runner:
        runner.run(main())

    pyloop.install()                         # older code: set the policy
"""

from __future__ import annotations

import asyncio as __asyncio

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


class EventLoopPolicy(__asyncio.DefaultEventLoopPolicy):
    """An event loop policy whose loops are pyloop loops."""

    def _loop_factory(self):
        return new_event_loop()


def install() -> None:
    """Makes pyloop the loop of ``asyncio.new_event_loop()`` and ``asyncio.run()``."""
    __asyncio.set_event_loop_policy(EventLoopPolicy())
