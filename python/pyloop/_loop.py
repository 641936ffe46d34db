"""pyloop.Loop: the asyncio API on top of the Rust core.

The hot paths live in Rust (``pyloop._pyloop``): scheduling, timers, the
epoll/timerfd/eventfd core, fd callbacks and the socket transports. This
module adds what asyncio users call rarely per second: running and stopping,
the exception handler, executors, name resolution, ``sock_*`` helpers,
connections, servers and signals. Its behaviour follows CPython's
``asyncio.base_events``, ``selector_events`` and ``unix_events``; where it
reuses a stdlib helper (address parsing, Happy Eyeballs) it calls it rather
than copying it.
"""

from __future__ import annotations

import asyncio
import collections.abc
import concurrent.futures
import errno
import io
import itertools
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import traceback
import warnings
import weakref
from asyncio import base_events, base_subprocess, constants, coroutines, events, futures, tasks, trsock
from asyncio.constants import _SendfileMode
from asyncio.exceptions import SendfileNotAvailableError
from asyncio.log import logger

from . import _pyloop
from ._pyloop import sock_io as _sock_io

try:
    import ssl as _ssl
except ImportError:  # Python built without OpenSSL
    _ssl = None

# asyncio's own check; its public name warns from Python 3.14 on, where
# asyncio calls this private one.
_iscoroutinefunction = getattr(coroutines, "_iscoroutinefunction", coroutines.iscoroutinefunction)


def _check_ssl_options(ssl, handshake_timeout=None, shutdown_timeout=None):
    """The TLS timeouts mean something only with ``ssl``, as in asyncio."""
    if ssl is None or ssl is False:
        if handshake_timeout is not None:
            raise ValueError("ssl_handshake_timeout is only meaningful with ssl")
        if shutdown_timeout is not None:
            raise ValueError("ssl_shutdown_timeout is only meaningful with ssl")
    elif _ssl is None:
        raise RuntimeError("Python ssl module is not available")


def _check_subprocess_options(universal_newlines, bufsize, encoding, errors, text):
    """The loop's pipes carry bytes, unbuffered, as in asyncio."""
    if universal_newlines:
        raise ValueError("universal_newlines must be False")
    if bufsize != 0:
        raise ValueError("bufsize must be 0")
    if text:
        raise ValueError("text must be False")
    if encoding is not None:
        raise ValueError("encoding must be None")
    if errors is not None:
        raise ValueError("errors must be None")


def _sighandler_noop(signum, frame):
    """Dummy signal handler: the wakeup fd carries the signal to the loop."""


def _format_handle(handle):
    cb = handle._callback
    if isinstance(getattr(cb, "__self__", None), tasks.Task):
        return repr(cb.__self__)
    return str(handle)


def _debug_default():
    return sys.flags.dev_mode or (
        not sys.flags.ignore_environment
        and bool(os.environ.get("PYTHONASYNCIODEBUG"))
    )


class Loop(_pyloop.LoopCore, asyncio.AbstractEventLoop):
    """An asyncio event loop whose core is written in Rust."""

    # The loop's own state lives in slots, so that its instance dict (which
    # LoopCore offers for users' attributes) stays empty. Looking up a method
    # such as `loop.call_soon`, which asyncio's tasks and futures do on every
    # step, probes that dict first: a miss in an empty one is cheap, where
    # the probe of these 14 names cost about 14 ns a task switch (profiled).
    __slots__ = (
        "_thread_id",
        "_exception_handler",
        "_default_executor",
        "_executor_shutdown_called",
        "_asyncgens",
        "_asyncgens_shutdown_called",
        "_signal_handlers",
        "_ssock",
        "_csock",
        "_coroutine_origin_tracking_enabled",
        "_coroutine_origin_tracking_saved_depth",
        "_unix_server_sockets",
        "_child_pidfds",
    )

    def __init__(self):
        self._thread_id = None
        self._exception_handler = None
        self._default_executor = None
        self._executor_shutdown_called = False
        self._asyncgens = weakref.WeakSet()
        self._asyncgens_shutdown_called = False
        self._signal_handlers = {}
        self._ssock = None
        self._csock = None
        self._coroutine_origin_tracking_enabled = False
        self._coroutine_origin_tracking_saved_depth = None
        self._unix_server_sockets = {}
        self._child_pidfds = {}  # pidfd -> subprocess transport
        # asyncio's default: debug under `python -X dev`, or with
        # PYTHONASYNCIODEBUG set (unless -E ignores the environment).
        self.set_debug(_debug_default())

    def __repr__(self):
        return (
            f"<{self.__class__.__name__} running={self.is_running()} "
            f"closed={self.is_closed()} debug={self.get_debug()}>"
        )

    # The module's globals are given as defaults: a loop still set in the
    # policy at exit is freed while the modules are torn down, when they may
    # be None already.
    def __del__(self, _warn=warnings.warn, _finalizing=sys.is_finalizing):
        if not self.is_closed():
            try:
                self._thread_id
            except AttributeError:
                # Made by `__new__` and never initialised: never a loop
                # anyone used, so no warning; its epoll and other fds close.
                self._close_core()
                return
            _warn(f"unclosed event loop {self!r}", ResourceWarning, source=self)
            if not self.is_running():
                # While the modules are torn down, `close()` would read them.
                if _finalizing():
                    self._close(True, _warn)
                else:
                    self.close()

    # Running and stopping.

    def _check_closed(self):
        if self.is_closed():
            raise RuntimeError("Event loop is closed")

    def _check_running(self):
        if self.is_running():
            raise RuntimeError("This event loop is already running")
        if events._get_running_loop() is not None:
            raise RuntimeError(
                "Cannot run the event loop while another loop is running"
            )

    def _check_thread(self):
        if self._thread_id is None:
            return
        if threading.get_ident() != self._thread_id:
            raise RuntimeError(
                "Non-thread-safe operation invoked on an event loop other "
                "than the current one"
            )

    def is_running(self):
        return self._thread_id is not None

    @property
    def _closed(self):
        # asyncio's loops have this attribute, and code in the wild reads it.
        return self.is_closed()

    def run_forever(self):
        self._check_closed()
        self._check_running()
        self._set_coroutine_origin_tracking(self.get_debug())
        old_agen_hooks = sys.get_asyncgen_hooks()
        try:
            self._thread_id = threading.get_ident()
            sys.set_asyncgen_hooks(
                firstiter=self._asyncgen_firstiter_hook,
                finalizer=self._asyncgen_finalizer_hook,
            )
            events._set_running_loop(self)
            self._run()
        finally:
            self._thread_id = None
            events._set_running_loop(None)
            self._set_coroutine_origin_tracking(False)
            sys.set_asyncgen_hooks(*old_agen_hooks)

    def run_until_complete(self, future):
        self._check_closed()
        self._check_running()
        new_task = not futures.isfuture(future)
        future = tasks.ensure_future(future, loop=self)
        if new_task:
            # An exception raised by the task is not "never retrieved".
            future._log_destroy_pending = False
        future.add_done_callback(_run_until_complete_cb)
        try:
            self.run_forever()
        except BaseException:
            if new_task and future.done() and not future.cancelled():
                future.exception()
            raise
        finally:
            future.remove_done_callback(_run_until_complete_cb)
        if not future.done():
            raise RuntimeError("Event loop stopped before Future completed.")
        return future.result()

    def close(self):
        self._close(sys.is_finalizing(), warnings.warn)

    def _close(self, finalizing, warn, _os_close=os.close):
        if self.is_running():
            raise RuntimeError("Cannot close a running event loop")
        if self.is_closed():
            return
        if not finalizing:
            for sig in list(self._signal_handlers):
                self.remove_signal_handler(sig)
        elif self._signal_handlers:
            # As asyncio: too late to restore the handlers.
            warn(
                f"Closing the loop {self!r} on interpreter shutdown stage, "
                "skipping signal handlers removal",
                ResourceWarning,
                source=self,
            )
            self._signal_handlers.clear()
        if self.get_debug():
            logger.debug("Close %r", self)
        self._close_core()
        self._close_self_pipe()
        for pidfd in self._child_pidfds:
            _os_close(pidfd)
        self._child_pidfds.clear()
        self._executor_shutdown_called = True
        executor = self._default_executor
        if executor is not None:
            self._default_executor = None
            executor.shutdown(wait=False)

    def set_debug(self, enabled):
        super().set_debug(enabled)
        if self.is_running():
            self.call_soon_threadsafe(self._set_coroutine_origin_tracking, enabled)

    def _set_coroutine_origin_tracking(self, enabled):
        if bool(enabled) == bool(self._coroutine_origin_tracking_enabled):
            return
        if enabled:
            self._coroutine_origin_tracking_saved_depth = (
                sys.get_coroutine_origin_tracking_depth()
            )
            sys.set_coroutine_origin_tracking_depth(
                asyncio.constants.DEBUG_STACK_DEPTH
            )
        else:
            sys.set_coroutine_origin_tracking_depth(
                self._coroutine_origin_tracking_saved_depth
            )
        self._coroutine_origin_tracking_enabled = enabled

    def _log_slow_callback(self, handle, dt):
        logger.warning("Executing %s took %.3f seconds", _format_handle(handle), dt)

    # Futures and tasks: create_future, create_task and the task factory
    # are the core's (fastcall.rs, core.rs).

    # Errors.

    def get_exception_handler(self):
        return self._exception_handler

    def set_exception_handler(self, handler):
        if handler is not None and not callable(handler):
            raise TypeError(
                f"A callable object or None is expected, got {handler!r}"
            )
        self._exception_handler = handler

    def default_exception_handler(self, context):
        message = context.get("message") or "Unhandled exception in event loop"
        exception = context.get("exception")
        if exception is not None:
            exc_info = (type(exception), exception, exception.__traceback__)
        else:
            exc_info = False
        log_lines = [message]
        for key in sorted(context):
            if key in {"message", "exception"}:
                continue
            value = context[key]
            if key == "source_traceback":
                tb = "".join(traceback.format_list(value))
                value = "Object created at (most recent call last):\n" + tb.rstrip()
            elif key == "handle_traceback":
                tb = "".join(traceback.format_list(value))
                value = "Handle created at (most recent call last):\n" + tb.rstrip()
            else:
                value = repr(value)
            log_lines.append(f"{key}: {value}")
        logger.error("\n".join(log_lines), exc_info=exc_info)

    def call_exception_handler(self, context):
        if self._exception_handler is None:
            try:
                self.default_exception_handler(context)
            except (SystemExit, KeyboardInterrupt):
                raise
            except BaseException:
                logger.error("Exception in default exception handler", exc_info=True)
            return
        try:
            ctx = None
            thing = context.get("task")
            if thing is None:
                thing = context.get("future")
            if thing is None:
                thing = context.get("handle")
            if thing is not None and hasattr(thing, "get_context"):
                ctx = thing.get_context()
            if ctx is not None and hasattr(ctx, "run"):
                ctx.run(self._exception_handler, self, context)
            else:
                self._exception_handler(self, context)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            try:
                self.default_exception_handler(
                    {
                        "message": "Unhandled error in exception handler",
                        "exception": exc,
                        "context": context,
                    }
                )
            except (SystemExit, KeyboardInterrupt):
                raise
            except BaseException:
                logger.error(
                    "Exception in default exception handler while handling an "
                    "unexpected error in custom exception handler",
                    exc_info=True,
                )

    # Async generators and executors.

    def _asyncgen_finalizer_hook(self, agen):
        self._asyncgens.discard(agen)
        if not self.is_closed():
            self.call_soon_threadsafe(self.create_task, agen.aclose())

    def _asyncgen_firstiter_hook(self, agen):
        if self._asyncgens_shutdown_called:
            warnings.warn(
                f"asynchronous generator {agen!r} was scheduled after "
                f"loop.shutdown_asyncgens() call",
                ResourceWarning,
                source=self,
            )
        self._asyncgens.add(agen)

    async def shutdown_asyncgens(self):
        self._asyncgens_shutdown_called = True
        if not len(self._asyncgens):
            return
        closing_agens = list(self._asyncgens)
        self._asyncgens.clear()
        results = await tasks.gather(
            *[ag.aclose() for ag in closing_agens], return_exceptions=True
        )
        for result, agen in zip(results, closing_agens):
            if isinstance(result, Exception):
                self.call_exception_handler(
                    {
                        "message": "an error occurred during closing of "
                        f"asynchronous generator {agen!r}",
                        "exception": result,
                        "asyncgen": agen,
                    }
                )

    async def shutdown_default_executor(self, timeout=None):
        self._executor_shutdown_called = True
        if self._default_executor is None:
            return
        future = self.create_future()
        thread = threading.Thread(target=self._do_shutdown, args=(future,))
        thread.start()
        try:
            async with asyncio.timeout(timeout):
                await future
        except TimeoutError:
            warnings.warn(
                "The executor did not finishing joining its threads within "
                f"{timeout} seconds.",
                RuntimeWarning,
                stacklevel=2,
            )
            self._default_executor.shutdown(wait=False)
        else:
            thread.join()

    def _do_shutdown(self, future):
        try:
            self._default_executor.shutdown(wait=True)
            if not self.is_closed():
                self.call_soon_threadsafe(
                    futures._set_result_unless_cancelled, future, None
                )
        except Exception as ex:
            if not self.is_closed() and not future.cancelled():
                self.call_soon_threadsafe(future.set_exception, ex)

    def run_in_executor(self, executor, func, *args):
        self._check_closed()
        if self.get_debug() and (
            coroutines.iscoroutine(func) or _iscoroutinefunction(func)
        ):
            raise TypeError("coroutines cannot be used with run_in_executor()")
        if executor is None:
            executor = self._default_executor
            if self._executor_shutdown_called:
                raise RuntimeError("Executor shutdown has been called")
            if executor is None:
                executor = concurrent.futures.ThreadPoolExecutor(
                    thread_name_prefix="pyloop"
                )
                self._default_executor = executor
        return futures.wrap_future(executor.submit(func, *args), loop=self)

    def set_default_executor(self, executor):
        if not isinstance(executor, concurrent.futures.ThreadPoolExecutor):
            raise TypeError("executor must be ThreadPoolExecutor")
        self._default_executor = executor

    async def getaddrinfo(self, host, port, *, family=0, type=0, proto=0, flags=0):
        return await self.run_in_executor(
            None, socket.getaddrinfo, host, port, family, type, proto, flags
        )

    async def getnameinfo(self, sockaddr, flags=0):
        return await self.run_in_executor(None, socket.getnameinfo, sockaddr, flags)

    async def _ensure_resolved(
        self, address, *, family=0, type=socket.SOCK_STREAM, proto=0, flags=0
    ):
        host, port = address[:2]
        info = base_events._ipaddr_info(host, port, family, type, proto, *address[2:])
        if info is not None:
            return [info]
        return await self.getaddrinfo(
            host, port, family=family, type=type, proto=proto, flags=flags
        )

    # Low-level socket operations, on top of add_reader/add_writer.

    def _check_nonblocking(self, sock):
        _pyloop.check_socket(self, sock)

    # The sock_* coroutines: the work is Rust's (`_pyloop.sock_io`), which
    # tries the call at once and otherwise waits for the socket.

    async def sock_recv(self, sock, n):
        return await _sock_io(self, sock, 0, n)

    async def sock_recv_into(self, sock, buf):
        return await _sock_io(self, sock, 1, buf)

    async def sock_recvfrom(self, sock, bufsize):
        return await _sock_io(self, sock, 2, bufsize)

    async def sock_recvfrom_into(self, sock, buf, nbytes=0):
        return await _sock_io(self, sock, 3, buf, nbytes or len(buf))

    async def sock_sendto(self, sock, data, address):
        return await _sock_io(self, sock, 4, data, address)

    async def sock_sendall(self, sock, data):
        return await _sock_io(self, sock, 5, data)

    async def sock_accept(self, sock):
        return await _sock_io(self, sock, 6)

    async def sock_connect(self, sock, address):
        if sock.family == socket.AF_INET or sock.family == socket.AF_INET6:
            self._check_nonblocking(sock)
            resolved = await self._ensure_resolved(
                address, family=sock.family, type=sock.type, proto=sock.proto
            )
            _, _, _, _, address = resolved[0]
        return await _sock_io(self, sock, 7, address)

    # Transports.

    def _make_socket_transport(self, sock, protocol, waiter=None, extra=None, server=None):
        return _pyloop.make_socket_transport(self, sock, protocol, waiter, extra, server)

    def _make_ssl_transport(
        self,
        rawsock,
        protocol,
        sslcontext,
        waiter=None,
        *,
        server_side=False,
        server_hostname=None,
        extra=None,
        server=None,
        ssl_handshake_timeout=None,
        ssl_shutdown_timeout=None,
    ):
        """TLS over the Rust socket transport: pyloop's ``SSLProtocol``
        (Rust, over ``ssl.SSLObject``) sits between the socket transport and
        the application's protocol, as uvloop's does."""
        ssl_protocol = _pyloop.SSLProtocol(
            self,
            protocol,
            sslcontext,
            waiter,
            server_side,
            server_hostname,
            ssl_handshake_timeout=ssl_handshake_timeout,
            ssl_shutdown_timeout=ssl_shutdown_timeout,
        )
        self._make_socket_transport(rawsock, ssl_protocol, extra=extra, server=server)
        return ssl_protocol._app_transport

    async def _create_connection_transport(
        self,
        sock,
        protocol_factory,
        ssl=None,
        server_hostname=None,
        server_side=False,
        ssl_handshake_timeout=None,
        ssl_shutdown_timeout=None,
    ):
        sock.setblocking(False)
        protocol = protocol_factory()
        waiter = self.create_future()
        try:
            if ssl:
                # ssl=True: SSLProtocol makes a default client context.
                sslcontext = None if isinstance(ssl, bool) else ssl
                transport = self._make_ssl_transport(
                    sock,
                    protocol,
                    sslcontext,
                    waiter,
                    server_side=server_side,
                    server_hostname=server_hostname,
                    ssl_handshake_timeout=ssl_handshake_timeout,
                    ssl_shutdown_timeout=ssl_shutdown_timeout,
                )
            else:
                transport = self._make_socket_transport(sock, protocol, waiter)
        except BaseException:
            # No transport owns the socket (gh-153133, as asyncio).
            sock.close()
            raise
        try:
            await waiter
        except BaseException:
            transport.close()
            # The error's traceback holds this frame, and the waiter holds
            # the error: a cycle that kept the transports alive until a
            # collection (gh-159049, as asyncio).
            waiter = None
            raise
        return transport, protocol

    async def _connect_sock(self, exceptions, addr_info, local_addr_infos=None):
        my_exceptions = []
        exceptions.append(my_exceptions)
        family, type_, proto, _, address = addr_info
        sock = None
        try:
            sock = socket.socket(family=family, type=type_, proto=proto)
            sock.setblocking(False)
            if local_addr_infos is not None:
                for lfamily, _, _, _, laddr in local_addr_infos:
                    if lfamily != family:
                        continue
                    try:
                        sock.bind(laddr)
                        break
                    except OSError as exc:
                        msg = (
                            f"error while attempting to bind on address {laddr!r}: "
                            f"{exc.strerror.lower()}"
                        )
                        my_exceptions.append(OSError(exc.errno, msg))
                else:
                    if my_exceptions:
                        raise my_exceptions.pop()
                    raise OSError(f"no matching local address with {family=} found")
            await self.sock_connect(sock, address)
            return sock
        except OSError as exc:
            my_exceptions.append(exc)
            if sock is not None:
                sock.close()
            raise
        except BaseException:
            if sock is not None:
                sock.close()
            raise
        finally:
            exceptions = my_exceptions = None

    async def create_connection(
        self,
        protocol_factory,
        host=None,
        port=None,
        *,
        ssl=None,
        family=0,
        proto=0,
        flags=0,
        sock=None,
        local_addr=None,
        server_hostname=None,
        ssl_handshake_timeout=None,
        ssl_shutdown_timeout=None,
        happy_eyeballs_delay=None,
        interleave=None,
        all_errors=False,
    ):
        if server_hostname is not None and not ssl:
            raise ValueError("server_hostname is only meaningful with ssl")
        if server_hostname is None and ssl:
            # The host is the default name to check the certificate against;
            # without one, the caller must say (or pass '' to skip the check).
            if not host:
                raise ValueError("You must set server_hostname when using ssl without a host")
            server_hostname = host
        _check_ssl_options(ssl, ssl_handshake_timeout, ssl_shutdown_timeout)
        if sock is not None:
            base_events._check_ssl_socket(sock)
        if happy_eyeballs_delay is not None and interleave is None:
            interleave = 1
        if host is not None or port is not None:
            if sock is not None:
                raise ValueError("host/port and sock can not be specified at the same time")
            infos = await self._ensure_resolved(
                (host, port), family=family, type=socket.SOCK_STREAM, proto=proto, flags=flags
            )
            if not infos:
                raise OSError("getaddrinfo() returned empty list")
            if local_addr is not None:
                laddr_infos = await self._ensure_resolved(
                    local_addr, family=family, type=socket.SOCK_STREAM, proto=proto, flags=flags
                )
                if not laddr_infos:
                    raise OSError("getaddrinfo() returned empty list")
            else:
                laddr_infos = None
            if interleave:
                infos = base_events._interleave_addrinfos(infos, interleave)
            exceptions = []
            if happy_eyeballs_delay is None:
                for addrinfo in infos:
                    try:
                        sock = await self._connect_sock(exceptions, addrinfo, laddr_infos)
                        break
                    except OSError:
                        continue
            else:
                # Neither a functools.partial nor the race's own list of
                # exceptions is kept: either would keep the exceptions
                # raised below, and their frames, alive (asyncio's
                # test_open_connection_happy_eyeball_refcycles).
                sock = (
                    await asyncio.staggered.staggered_race(
                        (
                            lambda addrinfo=addrinfo: self._connect_sock(exceptions, addrinfo, laddr_infos)
                            for addrinfo in infos
                        ),
                        happy_eyeballs_delay,
                        loop=self,
                    )
                )[0]
            if sock is None:
                exceptions = [exc for sub in exceptions for exc in sub]
                try:
                    if all_errors:
                        raise ExceptionGroup("create_connection failed", exceptions)
                    if len(exceptions) == 1:
                        raise exceptions[0]
                    if not exceptions:
                        # The race ended before any attempt failed.
                        raise TimeoutError("create_connection failed")
                    model = str(exceptions[0])
                    if all(str(exc) == model for exc in exceptions):
                        raise exceptions[0]
                    raise OSError(
                        "Multiple exceptions: {}".format(", ".join(str(exc) for exc in exceptions))
                    )
                finally:
                    exceptions = None
        else:
            if sock is None:
                raise ValueError("host and port was not specified and no sock specified")
            if sock.type != socket.SOCK_STREAM:
                raise ValueError(f"A Stream Socket was expected, got {sock!r}")
        return await self._create_connection_transport(
            sock,
            protocol_factory,
            ssl,
            server_hostname,
            ssl_handshake_timeout=ssl_handshake_timeout,
            ssl_shutdown_timeout=ssl_shutdown_timeout,
        )

    async def create_unix_connection(
        self,
        protocol_factory,
        path=None,
        *,
        ssl=None,
        sock=None,
        server_hostname=None,
        ssl_handshake_timeout=None,
        ssl_shutdown_timeout=None,
    ):
        if ssl:
            if server_hostname is None:
                raise ValueError("you have to pass server_hostname when using ssl")
        elif server_hostname is not None:
            raise ValueError("server_hostname is only meaningful with ssl")
        _check_ssl_options(ssl, ssl_handshake_timeout, ssl_shutdown_timeout)
        if path is not None:
            if sock is not None:
                raise ValueError("path and sock can not be specified at the same time")
            path = os.fspath(path)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, 0)
            try:
                sock.setblocking(False)
                await self.sock_connect(sock, path)
            except BaseException:
                sock.close()
                raise
        else:
            if sock is None:
                raise ValueError("no path and sock were specified")
            if sock.family != socket.AF_UNIX or sock.type != socket.SOCK_STREAM:
                raise ValueError(f"A UNIX Domain Stream Socket was expected, got {sock!r}")
        return await self._create_connection_transport(
            sock,
            protocol_factory,
            ssl,
            server_hostname,
            ssl_handshake_timeout=ssl_handshake_timeout,
            ssl_shutdown_timeout=ssl_shutdown_timeout,
        )

    async def connect_accepted_socket(
        self,
        protocol_factory,
        sock,
        *,
        ssl=None,
        ssl_handshake_timeout=None,
        ssl_shutdown_timeout=None,
    ):
        if sock.type != socket.SOCK_STREAM:
            raise ValueError(f"A Stream Socket was expected, got {sock!r}")
        _check_ssl_options(ssl, ssl_handshake_timeout, ssl_shutdown_timeout)
        return await self._create_connection_transport(
            sock,
            protocol_factory,
            ssl,
            "",
            server_side=True,
            ssl_handshake_timeout=ssl_handshake_timeout,
            ssl_shutdown_timeout=ssl_shutdown_timeout,
        )

    # Servers.

    async def create_server(
        self,
        protocol_factory,
        host=None,
        port=None,
        *,
        family=socket.AF_UNSPEC,
        flags=socket.AI_PASSIVE,
        sock=None,
        backlog=100,
        ssl=None,
        reuse_address=None,
        reuse_port=None,
        keep_alive=None,
        ssl_handshake_timeout=None,
        ssl_shutdown_timeout=None,
        start_serving=True,
    ):
        if isinstance(ssl, bool):
            raise TypeError("ssl argument must be an SSLContext or None")
        _check_ssl_options(ssl, ssl_handshake_timeout, ssl_shutdown_timeout)
        if sock is not None:
            base_events._check_ssl_socket(sock)
        if host is not None or port is not None:
            if sock is not None:
                raise ValueError("host/port and sock can not be specified at the same time")
            if reuse_address is None:
                reuse_address = True
            sockets = []
            if host == "":
                hosts = [None]
            elif isinstance(host, str) or not isinstance(host, collections.abc.Iterable):
                hosts = [host]
            else:
                hosts = host
            fs = [self._create_server_getaddrinfo(h, port, family, flags) for h in hosts]
            infos = await tasks.gather(*fs)
            infos = set(itertools.chain.from_iterable(infos))
            completed = False
            try:
                for af, socktype, proto, _canonname, sa in infos:
                    try:
                        sock = socket.socket(af, socktype, proto)
                    except OSError:
                        if self.get_debug():
                            logger.warning(
                                "create_server() failed to create socket.socket(%r, %r, %r)",
                                af, socktype, proto, exc_info=True,
                            )
                        continue
                    sockets.append(sock)
                    if reuse_address:
                        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, True)
                    if reuse_port:
                        base_events._set_reuseport(sock)
                    if keep_alive:
                        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, True)
                    if af == socket.AF_INET6:
                        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, True)
                    try:
                        sock.bind(sa)
                    except OSError as err:
                        msg = (
                            "error while attempting to bind on address %r: %s"
                            % (sa, err.strerror.lower())
                        )
                        if err.errno == errno.EADDRNOTAVAIL:
                            # Assume the family is not enabled (bpo-30945).
                            sockets.pop()
                            sock.close()
                            if self.get_debug():
                                logger.warning(msg)
                            continue
                        raise OSError(err.errno, msg) from None
                if not sockets:
                    raise OSError(
                        "could not bind on any address out of %r"
                        % [info[4] for info in infos]
                    )
                completed = True
            finally:
                if not completed:
                    for s in sockets:
                        s.close()
        else:
            if sock is None:
                raise ValueError("Neither host/port nor sock were specified")
            if sock.type != socket.SOCK_STREAM:
                raise ValueError(f"A Stream Socket was expected, got {sock!r}")
            sockets = [sock]
        for s in sockets:
            s.setblocking(False)
        server = Server(
            self, sockets, protocol_factory, backlog, ssl, ssl_handshake_timeout, ssl_shutdown_timeout
        )
        if start_serving:
            server._start_serving()
            await tasks.sleep(0)
        if self.get_debug():
            logger.info("%r is serving", server)
        return server

    async def _create_server_getaddrinfo(self, host, port, family, flags):
        infos = await self._ensure_resolved(
            (host, port), family=family, type=socket.SOCK_STREAM, flags=flags
        )
        if not infos:
            raise OSError(f"getaddrinfo({host!r}) returned empty list")
        return infos

    async def create_unix_server(
        self,
        protocol_factory,
        path=None,
        *,
        sock=None,
        backlog=100,
        ssl=None,
        ssl_handshake_timeout=None,
        ssl_shutdown_timeout=None,
        start_serving=True,
        cleanup_socket=None,
    ):
        if isinstance(ssl, bool):
            raise TypeError("ssl argument must be an SSLContext or None")
        _check_ssl_options(ssl, ssl_handshake_timeout, ssl_shutdown_timeout)
        if path is not None:
            if sock is not None:
                raise ValueError("path and sock can not be specified at the same time")
            path = os.fspath(path)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            if path[0] not in (0, "\x00"):
                try:
                    if stat.S_ISSOCK(os.stat(path).st_mode):
                        os.remove(path)
                except FileNotFoundError:
                    pass
                except OSError as err:
                    logger.error(
                        "Unable to check or remove stale UNIX socket %r: %r", path, err
                    )
            try:
                sock.bind(path)
            except OSError as exc:
                sock.close()
                if exc.errno == errno.EADDRINUSE:
                    raise OSError(
                        errno.EADDRINUSE, f"Address {path!r} is already in use"
                    ) from None
                raise
            except BaseException:
                sock.close()
                raise
        else:
            if sock is None:
                raise ValueError("path was not specified, and no sock specified")
            if sock.family != socket.AF_UNIX or sock.type != socket.SOCK_STREAM:
                raise ValueError(f"A UNIX Domain Stream Socket was expected, got {sock!r}")
        unix_path = None
        if cleanup_socket is None:
            # asyncio removes the socket file on close from 3.13 on; before,
            # it leaves it (and has no such parameter). Follow the running
            # version, so that a program sees what asyncio would do.
            cleanup_socket = sys.version_info >= (3, 13)
        if cleanup_socket:
            name = sock.getsockname()
            if isinstance(name, (str, bytes)) and name and name[0] not in (0, "\x00"):
                try:
                    unix_path = (name, os.stat(name).st_ino)
                except OSError:
                    pass
        sock.setblocking(False)
        server = Server(
            self,
            [sock],
            protocol_factory,
            backlog,
            ssl,
            ssl_handshake_timeout,
            ssl_shutdown_timeout,
            unix_path,
        )
        if start_serving:
            server._start_serving()
            await tasks.sleep(0)
        return server

    def _start_serving(self, protocol_factory, sock, server, backlog):
        # The listening socket's reader (Rust) accepts and makes transports.
        self.add_reader(
            sock.fileno(), _pyloop.Acceptor(self, protocol_factory, sock, server, backlog)
        )

    def _stop_serving(self, sock):
        try:
            self.remove_reader(sock.fileno())
        except ValueError:
            pass
        sock.close()

    # Signals.

    def _make_self_pipe(self):
        if self._ssock is not None:
            return
        self._ssock, self._csock = socket.socketpair()
        self._ssock.setblocking(False)
        self._csock.setblocking(False)
        self.add_reader(self._ssock.fileno(), self._read_from_self)

    def _close_self_pipe(self):
        if self._ssock is None:
            return
        self._ssock.close()
        self._csock.close()
        self._ssock = self._csock = None

    def _read_from_self(self):
        while True:
            try:
                data = self._ssock.recv(4096)
                if not data:
                    break
                for signum in data:
                    if signum:
                        self._handle_signal(signum)
            except InterruptedError:
                continue
            except BlockingIOError:
                break

    def _handle_signal(self, sig):
        handle = self._signal_handlers.get(sig)
        if handle is None:
            return
        if handle._cancelled:
            self.remove_signal_handler(sig)
        else:
            self.call_soon(handle._run)

    def _check_signal(self, sig):
        if not isinstance(sig, int):
            raise TypeError(f"sig must be an int, not {sig!r}")
        if sig not in signal.valid_signals():
            raise ValueError(f"invalid signal number {sig}")

    def add_signal_handler(self, sig, callback, *args):
        if coroutines.iscoroutine(callback) or _iscoroutinefunction(callback):
            raise TypeError("coroutines cannot be used with add_signal_handler()")
        self._check_signal(sig)
        self._check_closed()
        self._make_self_pipe()
        try:
            signal.set_wakeup_fd(self._csock.fileno())
        except (ValueError, OSError) as exc:
            raise RuntimeError(str(exc))
        handle = events.Handle(callback, args, self, None)
        self._signal_handlers[sig] = handle
        try:
            signal.signal(sig, _sighandler_noop)
            signal.siginterrupt(sig, False)
        except OSError as exc:
            del self._signal_handlers[sig]
            if not self._signal_handlers:
                try:
                    signal.set_wakeup_fd(-1)
                except (ValueError, OSError) as nexc:
                    logger.info("set_wakeup_fd(-1) failed: %s", nexc)
            if exc.errno == errno.EINVAL:
                raise RuntimeError(f"sig {sig:d} cannot be caught")
            raise

    def remove_signal_handler(self, sig):
        self._check_signal(sig)
        try:
            del self._signal_handlers[sig]
        except KeyError:
            return False
        handler = signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL
        try:
            signal.signal(sig, handler)
        except OSError as exc:
            if exc.errno == errno.EINVAL:
                raise RuntimeError(f"sig {sig:d} cannot be caught")
            raise
        if not self._signal_handlers:
            try:
                signal.set_wakeup_fd(-1)
            except (ValueError, OSError) as exc:
                logger.info("set_wakeup_fd(-1) failed: %s", exc)
        return True

    # Pipes.

    def _make_pipe_transport(self, kind, pipe, protocol, waiter=None, extra=None):
        fileno = pipe.fileno()
        mode = os.fstat(fileno).st_mode
        is_socket = stat.S_ISSOCK(mode)
        is_fifo = stat.S_ISFIFO(mode)
        if not (is_fifo or is_socket or stat.S_ISCHR(mode)):
            raise ValueError("Pipe transport is only for pipes, sockets and character devices")
        cls = ReadPipeTransport if kind == "read_pipe" else WritePipeTransport
        os.set_blocking(fileno, False)
        extra = dict(extra or ())
        extra["pipe"] = pipe
        transport = cls(_pyloop.SocketTransport(self, pipe, protocol, extra, None, kind), extra)
        self.call_soon(protocol.connection_made, transport)
        # A read pipe reads; a write pipe on a FIFO or a socket watches for
        # readability, which means its reader went away (a PTY never says).
        if kind == "read_pipe" or is_fifo or is_socket:
            self.call_soon(transport._start_reading)
        if waiter is not None:
            self.call_soon(futures._set_result_unless_cancelled, waiter, None)
        return transport

    def _make_read_pipe_transport(self, pipe, protocol, waiter=None, extra=None):
        return self._make_pipe_transport("read_pipe", pipe, protocol, waiter, extra)

    def _make_write_pipe_transport(self, pipe, protocol, waiter=None, extra=None):
        return self._make_pipe_transport("write_pipe", pipe, protocol, waiter, extra)

    async def _connect_pipe(self, kind, protocol_factory, pipe):
        protocol = protocol_factory()
        waiter = self.create_future()
        transport = self._make_pipe_transport(kind, pipe, protocol, waiter)
        try:
            await waiter
        except BaseException:
            transport.close()
            waiter = None  # no cycle through the error's traceback
            raise
        if self.get_debug():
            logger.debug("%s pipe=%r transport=%r protocol=%r", kind, pipe, transport, protocol)
        return transport, protocol

    async def connect_read_pipe(self, protocol_factory, pipe):
        """Reads a pipe (any object with ``fileno()``) into a protocol."""
        return await self._connect_pipe("read_pipe", protocol_factory, pipe)

    async def connect_write_pipe(self, protocol_factory, pipe):
        """Writes to a pipe through a transport with a buffer and water marks."""
        return await self._connect_pipe("write_pipe", protocol_factory, pipe)

    # Subprocesses: asyncio's subprocess transport over pyloop's pipe
    # transports; a pidfd in the loop's epoll reports the exit.

    async def subprocess_exec(
        self,
        protocol_factory,
        program,
        *args,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        universal_newlines=False,
        shell=False,
        bufsize=0,
        encoding=None,
        errors=None,
        text=None,
        **kwargs,
    ):
        if shell:
            raise ValueError("shell must be False")
        _check_subprocess_options(universal_newlines, bufsize, encoding, errors, text)
        return await self._subprocess(
            protocol_factory, (program, *args), False, stdin, stdout, stderr, bufsize, kwargs
        )

    async def subprocess_shell(
        self,
        protocol_factory,
        cmd,
        *,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        universal_newlines=False,
        shell=True,
        bufsize=0,
        encoding=None,
        errors=None,
        text=None,
        **kwargs,
    ):
        if not isinstance(cmd, (bytes, str)):
            raise ValueError("cmd must be a string")
        if not shell:
            raise ValueError("shell must be True")
        _check_subprocess_options(universal_newlines, bufsize, encoding, errors, text)
        return await self._subprocess(
            protocol_factory, cmd, True, stdin, stdout, stderr, bufsize, kwargs
        )

    async def _subprocess(self, protocol_factory, args, shell, stdin, stdout, stderr, bufsize, kwargs):
        protocol = protocol_factory()
        if self.get_debug():
            logger.debug("run %s %r stdin=%r stdout=%r stderr=%r",
                         "shell command" if shell else "program", args, stdin, stdout, stderr)
        transport = await self._make_subprocess_transport(
            protocol, args, shell, stdin, stdout, stderr, bufsize, **kwargs
        )
        return transport, protocol

    async def _make_subprocess_transport(
        self, protocol, args, shell, stdin, stdout, stderr, bufsize, extra=None, **kwargs
    ):
        self._check_closed()
        waiter = self.create_future()
        transp = SubprocessTransport(
            self, protocol, args, shell, stdin, stdout, stderr, bufsize,
            waiter=waiter, extra=extra, **kwargs,
        )
        self._watch_child(transp)
        try:
            await waiter
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException:
            transp.close()
            await transp._wait()
            raise
        return transp

    def _watch_child(self, transp):
        try:
            pidfd = os.pidfd_open(transp.get_pid())
        except ProcessLookupError:
            # Already reaped, by Popen itself (it polls when it fails to
            # start the program, for one).
            self.call_soon(self._child_exited_without_status, transp)
            return
        self._child_pidfds[pidfd] = transp
        self.add_reader(pidfd, self._child_exited, pidfd)

    def _child_exited(self, pidfd):
        """The pidfd is readable: the child has exited. Reap it."""
        transp = self._child_pidfds.pop(pidfd)
        self.remove_reader(pidfd)
        os.close(pidfd)
        try:
            _, status = os.waitpid(transp.get_pid(), 0)
        except ChildProcessError:
            # Someone else reaped it (Popen.poll() from transport.close()).
            self._child_exited_without_status(transp)
        else:
            transp._process_exited(os.waitstatus_to_exitcode(status))

    def _child_exited_without_status(self, transp):
        returncode = transp._proc.returncode if transp._proc is not None else None
        if returncode is None:
            logger.warning("child process pid %d exit status already read: will report 255",
                           transp.get_pid())
            returncode = 255
        transp._process_exited(returncode)

    # UDP.

    async def create_datagram_endpoint(
        self,
        protocol_factory,
        local_addr=None,
        remote_addr=None,
        *,
        family=0,
        proto=0,
        flags=0,
        reuse_address=None,
        reuse_port=None,
        allow_broadcast=None,
        sock=None,
    ):
        """A datagram (UDP or Unix datagram) endpoint, as asyncio makes it.

        ``reuse_address`` is accepted for old code, as uvloop does (asyncio
        3.11 removed it): True is refused, since SO_REUSEADDR on UDP lets
        another process take the port's traffic, and False warns."""
        if reuse_address:
            raise ValueError(
                "Passing `reuse_address=True` is no longer supported, as the usage of "
                "SO_REUSEPORT in UDP poses a significant security concern."
            )
        if reuse_address is not None:
            warnings.warn(
                "The *reuse_address* parameter has been deprecated as of 0.15.",
                DeprecationWarning,
                stacklevel=2,
            )
        if sock is not None:
            if sock.type == socket.SOCK_STREAM:
                raise ValueError(f"A datagram socket was expected, got {sock!r}")
            if (local_addr or remote_addr or family or proto or flags or reuse_port
                    or allow_broadcast):
                opts = dict(local_addr=local_addr, remote_addr=remote_addr, family=family,
                            proto=proto, flags=flags, reuse_address=reuse_address,
                            reuse_port=reuse_port, allow_broadcast=allow_broadcast)
                problems = ", ".join(f"{k}={v}" for k, v in opts.items() if v)
                raise ValueError(
                    f"socket modifier keyword arguments can not be used when sock is "
                    f"specified. ({problems})"
                )
            sock.setblocking(False)
            r_addr = None
        else:
            sock, r_addr = await self._datagram_socket(
                local_addr, remote_addr, family, proto, flags, reuse_port, allow_broadcast
            )
        protocol = protocol_factory()
        waiter = self.create_future()
        extra = {"socket": trsock.TransportSocket(sock)}
        for key, get in (("sockname", sock.getsockname), ("peername", sock.getpeername)):
            try:
                extra[key] = get()
            except OSError:
                extra[key] = None
        core = _pyloop.DatagramTransport(self, sock, protocol, extra, r_addr)
        transport = DatagramTransport(core, extra)
        core._start(transport)
        self.call_soon(futures._set_result_unless_cancelled, waiter, None)
        try:
            await waiter
        except BaseException:
            transport.close()
            waiter = None  # no cycle through the error's traceback
            raise
        return transport, protocol

    async def _datagram_socket(
        self, local_addr, remote_addr, family, proto, flags, reuse_port, allow_broadcast
    ):
        """Resolves the addresses and makes the socket, for each family that
        has both, until one works (asyncio's order)."""
        if not (local_addr or remote_addr):
            if family == 0:
                raise ValueError("unexpected address family")
            addr_pairs_info = (((family, proto), (None, None)),)
        elif hasattr(socket, "AF_UNIX") and family == socket.AF_UNIX:
            for addr in (local_addr, remote_addr):
                if addr is not None and not isinstance(addr, str):
                    raise TypeError("string is expected")
            if local_addr and local_addr[0] not in (0, "\x00"):
                try:
                    if stat.S_ISSOCK(os.stat(local_addr).st_mode):
                        os.remove(local_addr)
                except FileNotFoundError:
                    pass
                except OSError as err:
                    logger.error(
                        "Unable to check or remove stale UNIX socket %r: %r", local_addr, err
                    )
            addr_pairs_info = (((family, proto), (local_addr, remote_addr)),)
        else:
            addr_infos = {}  # (family, proto) -> [local, remote]
            for idx, addr in ((0, local_addr), (1, remote_addr)):
                if addr is None:
                    continue
                if not (isinstance(addr, tuple) and len(addr) == 2):
                    raise TypeError("2-tuple is expected")
                infos = await self._ensure_resolved(
                    addr, family=family, type=socket.SOCK_DGRAM, proto=proto, flags=flags
                )
                if not infos:
                    raise OSError("getaddrinfo() returned empty list")
                for fam, _, pro, _, address in infos:
                    key = (fam, pro)
                    if key not in addr_infos:
                        addr_infos[key] = [None, None]
                    addr_infos[key][idx] = address
            addr_pairs_info = [
                (key, addr_pair)
                for key, addr_pair in addr_infos.items()
                if not ((local_addr and addr_pair[0] is None)
                        or (remote_addr and addr_pair[1] is None))
            ]
            if not addr_pairs_info:
                raise ValueError("can not get address information")
        exceptions = []
        for (fam, pro), (local_address, remote_address) in addr_pairs_info:
            sock = None
            r_addr = None
            try:
                sock = socket.socket(family=fam, type=socket.SOCK_DGRAM, proto=pro)
                if reuse_port:
                    base_events._set_reuseport(sock)
                if allow_broadcast:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
                sock.setblocking(False)
                if local_addr:
                    sock.bind(local_address)
                if remote_addr:
                    if not allow_broadcast:
                        await self.sock_connect(sock, remote_address)
                    r_addr = remote_address
            except OSError as exc:
                if sock is not None:
                    sock.close()
                exceptions.append(exc)
            except BaseException:
                if sock is not None:
                    sock.close()
                raise
            else:
                return sock, r_addr
        raise exceptions[0]

    # What part 1 does not have.


    async def start_tls(
        self,
        transport,
        protocol,
        sslcontext,
        *,
        server_side=False,
        server_hostname=None,
        ssl_handshake_timeout=None,
        ssl_shutdown_timeout=None,
    ):
        """Upgrades a connection to TLS: the socket transport's protocol
        becomes an ``SSLProtocol``, and the returned transport carries the
        application's protocol."""
        if _ssl is None:
            raise RuntimeError("Python ssl module is not available")
        if not isinstance(sslcontext, _ssl.SSLContext):
            raise TypeError(
                f"sslcontext is expected to be an instance of ssl.SSLContext, got {sslcontext!r}"
            )
        if not getattr(transport, "_start_tls_compatible", False):
            raise TypeError(f"transport {transport!r} is not supported by start_tls()")
        waiter = self.create_future()
        ssl_protocol = _pyloop.SSLProtocol(
            self,
            protocol,
            sslcontext,
            waiter,
            server_side,
            server_hostname,
            ssl_handshake_timeout=ssl_handshake_timeout,
            ssl_shutdown_timeout=ssl_shutdown_timeout,
            call_connection_made=False,
        )
        # Pause first, so that the SSL protocol sees no data before
        # connection_made.
        transport.pause_reading()
        # What a stream's reader holds already (a client's TLS hello that
        # came with, or right after, the plain data the server read) is the
        # start of the TLS stream: it goes to the TLS protocol, after its
        # connection_made, before anything more is read (gh-142352; Python
        # 3.14's asyncio does the same; before, the handshake waited for it).
        buffered = None
        if server_side and isinstance(protocol, asyncio.StreamReaderProtocol):
            reader = getattr(protocol, "_stream_reader", None)
            if reader is not None and reader._buffer:
                buffered = bytes(reader._buffer)
                reader._buffer.clear()
        transport.set_protocol(ssl_protocol)
        conmade_cb = self.call_soon(ssl_protocol.connection_made, transport)
        data_cb = buffered and self.call_soon(ssl_protocol.data_received, buffered)
        resume_cb = self.call_soon(transport.resume_reading)
        try:
            await waiter
        except BaseException:
            transport.close()
            conmade_cb.cancel()
            if data_cb:
                data_cb.cancel()
            resume_cb.cancel()
            waiter = None  # no cycle through the error's traceback
            raise
        return ssl_protocol._app_transport

    # sendfile.

    async def sendfile(self, transport, file, offset=0, count=None, *, fallback=True):
        """Sends ``file`` (from ``offset``, ``count`` bytes or to its end) over
        ``transport``, and returns the byte count. A plain socket transport
        sends it with ``sendfile(2)``, zero-copy; a TLS transport, or a file
        that ``sendfile(2)`` refuses, is read and written in chunks
        (unless ``fallback`` is false). The file's position ends after the
        last byte sent."""
        if transport.is_closing():
            raise RuntimeError("Transport is closing")
        mode = getattr(transport, "_sendfile_compatible", _SendfileMode.UNSUPPORTED)
        if mode is _SendfileMode.UNSUPPORTED:
            raise RuntimeError(f"sendfile is not supported for transport {transport!r}")
        if mode is _SendfileMode.TRY_NATIVE:
            try:
                return await self._sendfile_native(transport, file, offset, count)
            except SendfileNotAvailableError:
                if not fallback:
                    raise
        if not fallback:
            raise RuntimeError(
                f"fallback is disabled and native sendfile is not "
                f"supported for transport {transport!r}"
            )
        return await self._sendfile_fallback(transport, file, offset, count)

    async def _sendfile_native(self, transp, file, offset, count):
        core = getattr(transp, "_core", None)
        if not isinstance(core, _pyloop.SocketTransport):
            raise SendfileNotAvailableError(f"{transp!r} is not a pyloop socket transport")
        fileno = _sendfile_fileno(file)
        if count == 0:
            return 0
        resume_reading = transp.is_reading()
        transp.pause_reading()
        fut = self.create_future()
        sent = 0
        try:
            core._sendfile_start(fileno, offset, count, fut)
            return await fut
        finally:
            sent = core._sendfile_stop()
            if sent or _SENDFILE_ALWAYS_SEEKS:
                os.lseek(fileno, offset + sent, os.SEEK_SET)
            if resume_reading:
                transp.resume_reading()

    async def _sendfile_fallback(self, transp, file, offset, count):
        """Reads the file in the default executor and writes it, waiting
        whenever the transport's buffer is over its high-water mark."""
        if offset or (_SENDFILE_ALWAYS_SEEKS and _seekable(file)):
            file.seek(offset)
        blocksize = min(count, _SENDFILE_CHUNK) if count else _SENDFILE_CHUNK
        buf = bytearray(blocksize)
        total = 0
        proto = _SendfileFlowProtocol(transp)
        try:
            while True:
                if count:
                    blocksize = min(count - total, blocksize)
                    if blocksize <= 0:
                        return total
                view = memoryview(buf)[:blocksize]
                n = await self.run_in_executor(None, file.readinto, view)
                if not n:
                    return total
                await proto.drain()
                # write() copies what the kernel does not take at once, so
                # the buffer can be reused for the next chunk.
                transp.write(view[:n])
                total += n
        finally:
            if total > 0 and _seekable(file):
                file.seek(offset + total)
            proto.restore()

    async def sock_sendfile(self, sock, file, offset=0, count=None, *, fallback=True):
        """``loop.sendfile`` for a non-blocking stream socket: ``sendfile(2)``
        while the socket is writable, else (with ``fallback``) reads of the
        file and ``sock_sendall``."""
        self._check_nonblocking(sock)
        _check_sendfile_params(sock, file, offset, count)
        try:
            return await self._sock_sendfile_native(sock, file, offset, count)
        except SendfileNotAvailableError:
            if not fallback:
                raise
        return await self._sock_sendfile_fallback(sock, file, offset, count)

    async def _sock_sendfile_native(self, sock, file, offset, count):
        # sendfile(2) while the socket is writable, in Rust (`sock_io`).
        return await _sock_io(self, sock, 8, _sendfile_fileno(file), offset, count)

    async def _sock_sendfile_fallback(self, sock, file, offset, count):
        if offset or (_SENDFILE_ALWAYS_SEEKS and _seekable(file)):
            file.seek(offset)
        size = constants.SENDFILE_FALLBACK_READBUFFER_SIZE
        blocksize = min(count, size) if count else size
        buf = bytearray(blocksize)
        total = 0
        try:
            while True:
                if count:
                    blocksize = min(count - total, blocksize)
                    if blocksize <= 0:
                        break
                view = memoryview(buf)[:blocksize]
                n = await self.run_in_executor(None, file.readinto, view)
                if not n:
                    break
                await self.sock_sendall(sock, view[:n])
                total += n
            return total
        finally:
            if total > 0 and _seekable(file):
                file.seek(offset + total)



_SENDFILE_CHUNK = 256 * 1024

# From Python 3.14 on, asyncio's sendfile sets the file's position even
# where it did not before: its fallbacks seek to `offset` first even when
# it is 0 (before, they read on from the current position), and its native
# sendfile seeks to `offset + sent` after even when nothing was sent.
_SENDFILE_ALWAYS_SEEKS = sys.version_info >= (3, 14)


def _seekable(file):
    """A pipe or socket file has a ``seek`` that always fails."""
    try:
        return file.seekable()
    except (AttributeError, ValueError):
        return hasattr(file, "seek")


def _sendfile_fileno(file):
    """The file's descriptor, if ``sendfile(2)`` can read it: a regular
    file."""
    try:
        fileno = file.fileno()
    except (AttributeError, io.UnsupportedOperation) as exc:
        raise SendfileNotAvailableError("not a regular file") from exc
    try:
        st = os.fstat(fileno)
    except OSError as exc:
        raise SendfileNotAvailableError("not a regular file") from exc
    if not stat.S_ISREG(st.st_mode):
        raise SendfileNotAvailableError("not a regular file")
    return fileno


def _check_sendfile_params(sock, file, offset, count):
    if "b" not in getattr(file, "mode", "b"):
        raise ValueError("file should be opened in binary mode")
    if sock.type != socket.SOCK_STREAM:
        raise ValueError("only SOCK_STREAM type sockets are supported")
    if count is not None:
        if not isinstance(count, int):
            raise TypeError(f"count must be a positive integer (got {count!r})")
        if count <= 0:
            raise ValueError(f"count must be a positive integer (got {count!r})")
    if not isinstance(offset, int):
        raise TypeError(f"offset must be a non-negative integer (got {offset!r})")
    if offset < 0:
        raise ValueError(f"offset must be a non-negative integer (got {offset!r})")


class _SendfileFlowProtocol(asyncio.Protocol):
    """Stands in for the transport's protocol while ``loop.sendfile`` writes
    a file through it: reading is paused, and ``drain()`` waits while the
    transport's buffer is over its high-water mark. ``restore()`` puts the
    protocol back, and passes on a ``resume_writing`` it missed."""

    def __init__(self, transp):
        self._transport = transp
        self._proto = transp.get_protocol()
        self._resume_reading = transp.is_reading()
        self._was_paused = bool(getattr(transp, "_protocol_paused", False))
        transp.pause_reading()
        transp.set_protocol(self)
        loop = asyncio.get_running_loop()
        self._loop = loop
        self._ready = loop.create_future() if self._was_paused else None

    async def drain(self):
        if self._transport.is_closing():
            raise ConnectionError("Connection closed by peer")
        if self._ready is not None:
            await self._ready

    def connection_made(self, transport):
        raise RuntimeError("Invalid state: the connection is made already")

    def connection_lost(self, exc):
        if self._ready is not None and not self._ready.done():
            self._ready.set_exception(exc or ConnectionError("Connection is closed by peer"))
        self._proto.connection_lost(exc)

    def pause_writing(self):
        if self._ready is None:
            self._ready = self._loop.create_future()

    def resume_writing(self):
        if self._ready is not None:
            if not self._ready.done():
                self._ready.set_result(None)
            self._ready = None

    def data_received(self, data):
        raise RuntimeError("Invalid state: reading should be paused")

    def eof_received(self):
        raise RuntimeError("Invalid state: reading should be paused")

    def restore(self):
        self._transport.set_protocol(self._proto)
        if self._resume_reading:
            self._transport.resume_reading()
        if self._ready is not None:
            self._ready.cancel()
        if self._was_paused:
            # The protocol was paused before, and the transport's buffer
            # has drained since: it is waiting for this.
            self._proto.resume_writing()


class _CoreTransport:
    """What the Python faces of the Rust transport share.

    The work is done by ``pyloop._pyloop.SocketTransport`` (Rust). The
    classes below make it an ``asyncio.Transport``, ``ReadTransport`` or
    ``WriteTransport`` for ``isinstance``; the methods called per message
    (``write``, ``writelines``, ``get_extra_info``, ``is_closing``) are the
    Rust object's own bound methods, stored in slots, so calling them costs no
    Python frame. They also have a ``__dict__``: code and tests patch
    methods on a transport instance, as they can on asyncio's.
    """

    __slots__ = ()
    _bound = ("get_extra_info", "is_closing")

    def __init__(self, core, extra):
        self._extra = extra
        self._core = core
        for name in self._bound:
            setattr(self, name, getattr(core, name))

    def __repr__(self):
        return repr(self._core)

    def close(self):
        self._core.close()

    def get_protocol(self):
        return self._core.get_protocol()

    def set_protocol(self, protocol):
        self._core.set_protocol(protocol)

    def _start_reading(self):
        self._core._start_reading()

    def _force_close(self, exc):
        self._core._force_close(exc)


class _ReadingTransport(_CoreTransport):
    __slots__ = ()

    def is_reading(self):
        return self._core.is_reading()

    def pause_reading(self):
        self._core.pause_reading()

    def resume_reading(self):
        self._core.resume_reading()


class _WritingTransport(_CoreTransport):
    __slots__ = ()
    _bound = ("get_extra_info", "is_closing", "write", "writelines")

    def abort(self):
        self._core.abort()

    def set_write_buffer_limits(self, high=None, low=None):
        self._core.set_write_buffer_limits(high, low)

    def get_write_buffer_size(self):
        return self._core.get_write_buffer_size()

    def get_write_buffer_limits(self):
        return self._core.get_write_buffer_limits()

    def write_eof(self):
        self._core.write_eof()

    def can_write_eof(self):
        return True

    @property
    def _protocol_paused(self):
        return self._core._protocol_paused


class SocketTransport(_ReadingTransport, _WritingTransport, asyncio.Transport):
    """The transport of a TCP or Unix stream socket."""

    __slots__ = ("_core", "write", "writelines", "get_extra_info", "is_closing", "__weakref__", "__dict__")
    _start_tls_compatible = True
    _sendfile_compatible = _SendfileMode.TRY_NATIVE

    @property
    def _sock(self):
        return self._core._sock


class _PipeTransport(_CoreTransport):
    __slots__ = ()

    def __init__(self, core, extra):
        super().__init__(core, extra)
        self._pipe = extra["pipe"]

    def __del__(self, _warn=warnings.warn):
        # As asyncio's pipe transports: a transport dropped while its pipe is
        # open warns and closes the pipe. Tests that mean to leak a transport
        # set _pipe to None first.
        if self._pipe is not None and not self._core.is_closing():
            _warn(f"unclosed transport {self!r}", ResourceWarning, source=self)
            try:
                self._core.abort()  # connection_lost closes the pipe
            except RuntimeError:
                self._pipe.close()  # the loop is closed: nothing else will


class ReadPipeTransport(_PipeTransport, _ReadingTransport, asyncio.ReadTransport):
    """The transport of the read end of a pipe (``connect_read_pipe``)."""

    __slots__ = ("_core", "get_extra_info", "is_closing", "_pipe", "__weakref__", "__dict__")


class WritePipeTransport(_PipeTransport, _WritingTransport, asyncio.Transport):
    """The transport of the write end of a pipe (``connect_write_pipe``).

    An ``asyncio.Transport``, as asyncio's is: its reading methods raise
    ``NotImplementedError``.
    """

    __slots__ = ("_core", "write", "writelines", "get_extra_info", "is_closing", "_pipe", "__weakref__", "__dict__")


class DatagramTransport(_ReadingTransport, asyncio.DatagramTransport, asyncio.Transport):
    """The transport of a UDP or Unix datagram socket
    (``create_datagram_endpoint``); the work is done by
    ``pyloop._pyloop.DatagramTransport`` (Rust). Also an
    ``asyncio.Transport``, as asyncio's is."""

    __slots__ = ("_core", "sendto", "get_extra_info", "is_closing", "__weakref__", "__dict__")
    _bound = ("get_extra_info", "is_closing", "sendto")

    def __del__(self, _warn=warnings.warn):
        # As asyncio's: a transport dropped open warns and closes its socket.
        core = self._core
        if not core._closed and not core.is_closing():
            _warn(f"unclosed transport {self!r}", ResourceWarning, source=self)
            try:
                core.abort()  # connection_lost closes the socket
            except RuntimeError:
                core._sock.close()  # the loop is closed: nothing else will

    @property
    def _sock(self):
        return self._core._sock

    def abort(self):
        self._core.abort()

    def get_write_buffer_size(self):
        return self._core.get_write_buffer_size()

    def set_write_buffer_limits(self, high=None, low=None):
        self._core.set_write_buffer_limits(high, low)

    def get_write_buffer_limits(self):
        return self._core.get_write_buffer_limits()


class SSLTransport(asyncio.Transport):
    """The application's side of a TLS connection: what ``connection_made``
    gets for ``ssl=``, ``start_tls`` and ``StreamWriter.start_tls``. The
    TLS protocol, ``pyloop._pyloop.SSLProtocol`` (Rust), does the work."""

    __slots__ = ("_ssl_protocol", "write", "writelines", "get_extra_info", "__weakref__", "__dict__")
    _sendfile_compatible = _SendfileMode.FALLBACK
    _start_tls_compatible = True  # TLS inside TLS, as uvloop allows

    def __init__(self, ssl_protocol):
        self._ssl_protocol = ssl_protocol
        self.write = ssl_protocol._write
        self.writelines = ssl_protocol._writelines
        self.get_extra_info = ssl_protocol._get_extra_info

    def __repr__(self):
        return f"<pyloop.SSLTransport {self._ssl_protocol!r}>"

    def __del__(self, _warn=warnings.warn):
        proto = self._ssl_protocol
        if not proto._is_closing():
            proto._mark_closed()
            _warn(f"unclosed transport {self!r}", ResourceWarning, source=self)

    def set_protocol(self, protocol):
        self._ssl_protocol._set_app_protocol(protocol)

    def get_protocol(self):
        return self._ssl_protocol._get_app_protocol()

    def is_closing(self):
        proto = self._ssl_protocol
        return proto._is_closing() or proto._is_transport_closing()

    def close(self):
        """Flushes what was written, sends close_notify and waits for the
        peer's; then ``connection_lost(None)``."""
        self._ssl_protocol._close()

    def is_reading(self):
        return self._ssl_protocol._is_reading()

    def pause_reading(self):
        self._ssl_protocol._pause_reading()

    def resume_reading(self):
        self._ssl_protocol._resume_reading()

    def set_write_buffer_limits(self, high=None, low=None):
        self._ssl_protocol._set_write_buffer_limits(high, low)

    def get_write_buffer_limits(self):
        return self._ssl_protocol._get_write_buffer_limits()

    def get_write_buffer_size(self):
        return self._ssl_protocol._get_write_buffer_size()

    def set_read_buffer_limits(self, high=None, low=None):
        self._ssl_protocol._set_read_buffer_limits(high, low)

    def get_read_buffer_limits(self):
        return self._ssl_protocol._get_read_buffer_limits()

    def get_read_buffer_size(self):
        return self._ssl_protocol._get_read_buffer_size()

    @property
    def _protocol_paused(self):
        return self._ssl_protocol._app_writing_paused

    def write_eof(self):
        raise NotImplementedError("TLS transports cannot half-close")

    def can_write_eof(self):
        return False

    def abort(self):
        self._force_close(None)

    def _force_close(self, exc):
        self._ssl_protocol._abort(exc)

    def _test__append_write_backlog(self, data):
        self._ssl_protocol._test__append_write_backlog(data)


class SubprocessTransport(base_subprocess.BaseSubprocessTransport):
    """asyncio's subprocess transport: ``subprocess.Popen`` starts the child,
    its pipes become pyloop pipe transports, and the loop learns of the exit
    through a pidfd."""

    def _start(self, args, shell, stdin, stdout, stderr, bufsize, **kwargs):
        self._proc = subprocess.Popen(
            args, shell=shell, stdin=stdin, stdout=stdout, stderr=stderr,
            universal_newlines=False, bufsize=bufsize, **kwargs,
        )


def _run_until_complete_cb(fut):
    if not fut.cancelled():
        exc = fut.exception()
        if isinstance(exc, (SystemExit, KeyboardInterrupt)):
            # Let run_forever propagate it: the loop is stopped by the raise.
            return
    fut.get_loop().stop()


# Server.wait_closed before 3.12 (see there).
_WAIT_CLOSED_RETURNS_ONCE_CLOSED = sys.version_info < (3, 12)


class Server(asyncio.AbstractServer):
    """What ``create_server`` and ``create_unix_server`` return."""

    def __init__(
        self,
        loop,
        sockets,
        protocol_factory,
        backlog,
        ssl_context=None,
        ssl_handshake_timeout=None,
        ssl_shutdown_timeout=None,
        unix_path=None,
    ):
        self._loop = loop
        self._ssl_context = ssl_context
        self._ssl_handshake_timeout = ssl_handshake_timeout
        self._ssl_shutdown_timeout = ssl_shutdown_timeout
        self._sockets = sockets
        self._active_count = 0
        self._clients = weakref.WeakSet()
        self._waiters = []
        self._protocol_factory = protocol_factory
        self._backlog = backlog
        self._serving = False
        self._serving_forever_fut = None
        self._unix_path = unix_path

    def __repr__(self):
        return f"<{self.__class__.__name__} sockets={self.sockets!r}>"

    def _attach(self, transport):
        assert self._sockets is not None
        self._active_count += 1
        self._clients.add(transport)

    def _detach(self):
        self._active_count -= 1
        if self._active_count == 0 and self._sockets is None:
            self._wakeup()

    def _wakeup(self):
        waiters = self._waiters
        self._waiters = None
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _start_serving(self):
        if self._serving:
            return
        self._serving = True
        for sock in self._sockets:
            sock.listen(self._backlog)
            self._loop._start_serving(self._protocol_factory, sock, self, self._backlog)

    def get_loop(self):
        return self._loop

    def is_serving(self):
        return self._serving

    @property
    def sockets(self):
        if self._sockets is None:
            return ()
        return tuple(trsock.TransportSocket(s) for s in self._sockets)

    def close(self):
        sockets = self._sockets
        if sockets is None:
            return
        self._sockets = None
        for sock in sockets:
            self._loop._stop_serving(sock)
        self._serving = False
        if self._unix_path is not None:
            path, ino = self._unix_path
            self._unix_path = None
            try:
                if os.stat(path).st_ino == ino:
                    os.unlink(path)
            except OSError:
                pass
        if self._serving_forever_fut is not None and not self._serving_forever_fut.done():
            self._serving_forever_fut.cancel()
            self._serving_forever_fut = None
        if self._active_count == 0:
            self._wakeup()

    def close_clients(self):
        for transport in list(self._clients):
            transport.close()

    def abort_clients(self):
        for transport in list(self._clients):
            transport.abort()

    async def start_serving(self):
        self._start_serving()
        await tasks.sleep(0)

    async def serve_forever(self):
        if self._serving_forever_fut is not None:
            raise RuntimeError(f"server {self!r} is already being awaited on serve_forever()")
        if self._sockets is None:
            raise RuntimeError(f"server {self!r} is closed")
        self._start_serving()
        self._serving_forever_fut = self._loop.create_future()
        try:
            await self._serving_forever_fut
        except asyncio.CancelledError:
            try:
                self.close()
                await self.wait_closed()
            finally:
                raise
        finally:
            self._serving_forever_fut = None

    async def wait_closed(self):
        # As the running Python's asyncio: from 3.12 a closed server's
        # wait lasts until its connections are gone; before, it returns
        # once the server is closed, and code written for 3.11 (asyncssh's
        # test teardown) awaits it with connections still open.
        if self._waiters is None or (_WAIT_CLOSED_RETURNS_ONCE_CLOSED and self._sockets is None):
            return
        waiter = self._loop.create_future()
        self._waiters.append(waiter)
        await waiter


# The Rust transports that Rust makes itself (an accepted connection's, a TLS
# connection's application side) get these faces: handed down, so that the
# Rust module never imports this one.
_pyloop.set_transport_faces(SocketTransport, SSLTransport)
