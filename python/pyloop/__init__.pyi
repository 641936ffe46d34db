import asyncio
import contextvars
import socket
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

_T = TypeVar("_T")

__version__: str

class Handle:
    def cancel(self) -> None: ...
    def cancelled(self) -> bool: ...
    def get_context(self) -> contextvars.Context: ...

class TimerHandle(Handle):
    def when(self) -> float: ...

class SocketTransport(asyncio.Transport):
    def get_extra_info(self, name: str, default: Any = None) -> Any: ...

class Server(asyncio.AbstractServer):
    @property
    def sockets(self) -> tuple[socket.socket, ...]: ...
    def close_clients(self) -> None: ...
    def abort_clients(self) -> None: ...

class Loop(asyncio.AbstractEventLoop):
    slow_callback_duration: float
    def call_soon(
        self, callback: Callable[..., object], *args: Any, context: contextvars.Context | None = None
    ) -> Handle: ...
    def call_soon_threadsafe(
        self, callback: Callable[..., object], *args: Any, context: contextvars.Context | None = None
    ) -> Handle: ...
    def call_later(
        self,
        delay: float,
        callback: Callable[..., object],
        *args: Any,
        context: contextvars.Context | None = None,
    ) -> TimerHandle: ...
    def call_at(
        self,
        when: float,
        callback: Callable[..., object],
        *args: Any,
        context: contextvars.Context | None = None,
    ) -> TimerHandle: ...

class EventLoopPolicy(asyncio.DefaultEventLoopPolicy): ...

def new_event_loop() -> Loop: ...
def run(main: Coroutine[Any, Any, _T], *, debug: bool | None = None) -> _T: ...
def install() -> None: ...
