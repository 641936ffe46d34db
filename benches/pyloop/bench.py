"""pyloop's benchmark driver, run by `cargo xtask bench pyloop`.

Each measurement runs in a fresh process (`bench.py child WORKLOAD LOOP`),
and the loops take turns within every round (A B C D, then B C D A, ...),
after a warm-up round. The driver writes `latency` events as JSON lines on
stdout: a `run` event per workload, with one sample per loop per round; xtask
turns them into histograms, medians and ratios against pyloop.

The echo workloads run the server in the measured process and drive it from a
dedicated client process that uses plain blocking sockets, the same for every
loop. They run twice: as the scheduler places the two processes, and with
both pinned to one vCPU (see `pin_to_one_cpu`). Each echo row also runs its
floor (`floor_echo`): the same client served with no loop at all.

Every child runs `gc.collect()` after its imports and before it starts timing
(see `child`), so that the collection its imports leave owed falls in no
timed window.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.metadata
import json
import os
import platform
import random
import re
import resource
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time

LOOPS = ["pyloop", "asyncio", "uvloop", "rloop"]


def new_loop(name):
    if name == "pyloop":
        import pyloop

        return pyloop.new_event_loop()
    if name == "asyncio":
        return asyncio.SelectorEventLoop()
    if name == "uvloop":
        import uvloop

        return uvloop.new_event_loop()
    if name == "rloop":
        import rloop

        return rloop.new_event_loop()
    raise SystemExit(f"unknown loop {name}")


def version(name, python=None):
    """The version column of loop `name`, in this interpreter or in the venv
    interpreter `python` (see `OTHER_PYTHONS`); None if it lacks the loop."""
    if python is not None:
        return other_versions(python).get(name)
    if name == "asyncio":
        free_threaded = sysconfig.get_config_var("Py_GIL_DISABLED")
        return f"CPython {platform.python_version()}{'t' if free_threaded else ''}"
    try:
        return f"{name} {importlib.metadata.version(name)}"
    except importlib.metadata.PackageNotFoundError:
        return None


def versions():
    """Every loop's version in this interpreter, for a driver running
    another (`bench.py versions`)."""
    return {name: version(name) for name in LOOPS if version(name) is not None}


_OTHER_VERSIONS = {}


def other_versions(python):
    """`versions()` as the interpreter `python` reports them; empty if it
    cannot (the driver then notes it and runs nothing there)."""
    if python not in _OTHER_VERSIONS:
        out = subprocess.run([python, "-P", __file__, "versions"], capture_output=True, text=True)
        try:
            _OTHER_VERSIONS[python] = json.loads(out.stdout) if out.returncode == 0 else {}
        except json.JSONDecodeError:
            _OTHER_VERSIONS[python] = {}
    return _OTHER_VERSIONS[python]


# The micro rows run again on the CPythons that xtask prepared besides the
# driver's own (`XTASK_PYLOOP_PYTHONS`: a JSON list of {"name": "3.14t",
# "python": venv interpreter}), each venv with pyloop's release build and
# whichever peers have wheels for it.
OTHER_PYTHONS = json.loads(os.environ.get("XTASK_PYLOOP_PYTHONS", "[]"))


# The workloads. Each child returns {"value": int} in the run's unit.


def w_call_soon(loop, n):
    """Chained call_soon, with a live socket registered so polling happens."""
    a, b = socket.socketpair()
    loop.add_reader(a.fileno(), lambda: None)
    left = [n]

    def step():
        left[0] -= 1
        if left[0]:
            loop.call_soon(step)
        else:
            loop.stop()

    loop.call_soon(step)
    t0 = time.perf_counter_ns()
    loop.run_forever()
    dt = time.perf_counter_ns() - t0
    loop.remove_reader(a.fileno())
    a.close()
    b.close()
    return dt // n


def w_threadsafe(loop, n):
    """call_soon_threadsafe from another thread, n calls, until all ran."""
    done = loop.create_future()
    count = [0]

    def cb():
        count[0] += 1
        if count[0] == n:
            done.set_result(None)

    def producer():
        for _ in range(n):
            loop.call_soon_threadsafe(cb)

    async def main():
        t = threading.Thread(target=producer)
        t0 = time.perf_counter_ns()
        t.start()
        await done
        dt = time.perf_counter_ns() - t0
        t.join()
        return dt // n

    return loop.run_until_complete(main())


def w_future(loop, n):
    """A future round trip: create, resolve from a callback, await."""

    async def main():
        t0 = time.perf_counter_ns()
        for _ in range(n):
            fut = loop.create_future()
            loop.call_soon(fut.set_result, None)
            await fut
        return (time.perf_counter_ns() - t0) // n

    return loop.run_until_complete(main())


def w_sleep0(loop, n):
    """sleep(0) task switching between two tasks."""

    async def spin():
        for _ in range(n):
            await asyncio.sleep(0)

    async def main():
        t0 = time.perf_counter_ns()
        await asyncio.gather(spin(), spin())
        return (time.perf_counter_ns() - t0) // (2 * n)

    return loop.run_until_complete(main())


def w_gather(loop, n):
    """gather of n tasks that each switch once; the whole gather's time."""

    async def one():
        await asyncio.sleep(0)

    async def main():
        t0 = time.perf_counter_ns()
        await asyncio.gather(*[one() for _ in range(n)])
        return time.perf_counter_ns() - t0

    return loop.run_until_complete(main())


def w_timers(loop, n):
    """Schedule n timers and cancel them all; the whole time."""

    async def main():
        t0 = time.perf_counter_ns()
        hs = [loop.call_later(1 + i * 1e-6, _noop) for i in range(n)]
        for h in hs:
            h.cancel()
        await asyncio.sleep(0)
        return time.perf_counter_ns() - t0

    return loop.run_until_complete(main())


def _noop():
    pass


def w_lateness(loop, n):
    """Lateness of n timers, delays log-uniform in 0.1..10 ms: the loop's
    clock read in the timer's callback minus its deadline (rloop's clock is
    not time.monotonic, so both ends use loop.time()). Returns a list (ns)."""
    rng = random.Random(7)
    delays = [10 ** rng.uniform(-4, -2) for _ in range(n)]

    async def main():
        out = []
        for d in delays:
            fut = loop.create_future()
            when = loop.time() + d
            loop.call_at(when, lambda f=fut: f.set_result(loop.time()))
            fired = await fut
            out.append(round((fired - when) * 1e9))
        return out

    return loop.run_until_complete(main())


def w_idle(loop, seconds):
    """CPU time and context switches of the process over an idle period."""

    async def main():
        await asyncio.sleep(0.05)
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        await asyncio.sleep(seconds)
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        switches = (r1.ru_nvcsw - r0.ru_nvcsw) + (r1.ru_nivcsw - r0.ru_nivcsw)
        return {"cpu_ns": cpu_ns(r0, r1), "switches": switches}

    return loop.run_until_complete(main())


def w_rss(loop, n):
    """RSS growth (KiB) from after 1M callbacks to after n callbacks."""

    def rss_kib():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)

    def run(count):
        left = [count]

        def step():
            left[0] -= 1
            if left[0]:
                loop.call_soon(step)
            else:
                loop.stop()

        loop.call_soon(step)
        loop.run_forever()

    run(1_000_000)
    before = rss_kib()
    run(n)
    return max(0, rss_kib() - before)


# The ping-pong rounds of an echo client, once `s` is connected: `size`
# bytes out and back, `n` times after a warm-up; prints ns per round trip.
ECHO_ROUNDS = r"""
msg = b"x" * size
buf = bytearray(size)
view = memoryview(buf)
def once():
    s.sendall(msg)
    got = 0
    while got < size:
        k = s.recv_into(view[got:])
        if not k:
            raise SystemExit("server closed")
        got += k
for _ in range(max(10, n // 10)):
    once()
t0 = time.perf_counter_ns()
for _ in range(n):
    once()
print((time.perf_counter_ns() - t0) // n)
s.close()"""

CLIENT = r"""
import socket, sys, time
family, addr, size, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
if family == "unix":
    s = socket.socket(socket.AF_UNIX)
    s.connect(addr)
else:
    host, port = addr.rsplit(":", 1)
    s = socket.create_connection((host, int(port)))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
""" + ECHO_ROUNDS


def echo_client(family, addr, size, n):
    """The echo rows' client process (CLIENT), for a server at `addr`."""
    return subprocess.Popen(
        [sys.executable, "-c", CLIENT, family, addr, str(size), str(n)],
        stdout=subprocess.PIPE,
    )


def echo_trips(n):
    """The round trips an echo client makes: its warm-up (ECHO_ROUNDS) and n."""
    return n + max(10, n // 10)


def cpu_ns(r0, r1):
    """User and system CPU between two `getrusage` samples, in ns."""
    return int(((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)) * 1e9)


def w_echo(loop, mode, family, size, n):
    """Echo ping-pong, served by `mode` (protocol, streams, sock) on `loop`.

    Returns the client's round-trip time and the server process's CPU time
    (user + system) per round trip. The CPU time covers the whole serving,
    warm-up round trips and the client's start included, divided by all the
    round trips; the fixed part is some µs over thousands of round trips.
    """

    class Echo(asyncio.Protocol):
        def connection_made(self, transport):
            self.t = transport

        def data_received(self, data):
            self.t.write(data)

    async def stream_handler(reader, writer):
        while True:
            data = await reader.read(262144)
            if not data:
                break
            writer.write(data)
            await writer.drain()
        writer.close()

    async def sock_handler(conn):
        while True:
            data = await loop.sock_recv(conn, 262144)
            if not data:
                break
            await loop.sock_sendall(conn, data)
        conn.close()

    async def main():
        tmp = None
        if family == "unix":
            tmp = tempfile.mkdtemp()
            path = os.path.join(tmp, "s")
            addr = path
        if mode == "protocol":
            if family == "unix":
                server = await loop.create_unix_server(Echo, path)
            else:
                server = await loop.create_server(Echo, "127.0.0.1", 0)
        elif mode == "streams":
            if family == "unix":
                server = await asyncio.start_unix_server(stream_handler, path)
            else:
                server = await asyncio.start_server(stream_handler, "127.0.0.1", 0)
        else:
            lsock = socket.socket(socket.AF_UNIX if family == "unix" else socket.AF_INET)
            lsock.bind(path if family == "unix" else ("127.0.0.1", 0))
            lsock.listen()
            lsock.setblocking(False)
            server = None
        if family != "unix":
            sock = server.sockets[0] if server else lsock
            host, port = sock.getsockname()[:2]
            addr = f"{host}:{port}"
        # The client is started with subprocess.Popen: subprocesses are not
        # part of every loop's feature set, and the client's start is not timed.
        client = echo_client(family, addr, size, n)
        handler = None
        if server is None:
            conn, _ = await loop.sock_accept(lsock)
            conn.setblocking(False)
            handler = asyncio.ensure_future(sock_handler(conn))
        out = await loop.run_in_executor(None, client.communicate)
        if client.returncode != 0:
            raise SystemExit(f"echo client failed: {client.returncode}")
        if handler is not None:
            await handler
            lsock.close()
        else:
            server.close()
            await server.wait_closed()
        if tmp:
            try:
                os.unlink(path)
            except OSError:
                pass
            os.rmdir(tmp)
        return int(out[0])

    r0 = resource.getrusage(resource.RUSAGE_SELF)
    rtt = loop.run_until_complete(main())
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    return {"rtt_ns": rtt, "cpu_ns": cpu_ns(r0, r1) // echo_trips(n)}


CERTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "tests", "certs")

TLS_CLIENT = r"""
import socket, ssl, sys, time
certs, addr, size, n, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
host, port = addr.rsplit(":", 1)
ctx = ssl.create_default_context(cafile=certs + "/ca.pem")
def connect():
    raw = socket.create_connection((host, int(port)))
    raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return ctx.wrap_socket(raw, server_hostname="localhost")
if mode == "handshake":
    # A connection's life: connect, handshake, one byte echoed, close.
    def once():
        s = connect()
        s.sendall(b"x")
        if s.recv(1) != b"x":
            raise SystemExit("bad echo")
        s.close()
    for _ in range(max(5, n // 10)):
        once()
    t0 = time.perf_counter_ns()
    for _ in range(n):
        once()
    print((time.perf_counter_ns() - t0) // n)
    sys.exit(0)
s = connect()
""" + ECHO_ROUNDS

def _serve_with_client(loop, start_server, client_args):
    """Starts a server with `start_server()` (returning it and its address),
    runs the client process against it, and returns the client's one line
    of output and the server's CPU time (user + system) in ns."""

    async def main():
        server, addr = await start_server()
        client = subprocess.Popen([sys.executable, "-c", *client_args(addr)], stdout=subprocess.PIPE)
        out = await loop.run_in_executor(None, client.communicate)
        if client.returncode != 0:
            raise SystemExit(f"client failed: {client.returncode}")
        server.close()
        if hasattr(server, "wait_closed"):
            await server.wait_closed()
        return int(out[0])

    r0 = resource.getrusage(resource.RUSAGE_SELF)
    v = loop.run_until_complete(main())
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    return v, cpu_ns(r0, r1)


def w_tls(loop, what, size, n):
    """TLS echo (`what` "echo") or whole TLS connections ("handshake")
    against a server on `loop` with the test certificate; the client is a
    blocking `ssl` client in another process, the same for every loop."""
    import ssl

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(CERTS, "cert.pem"), os.path.join(CERTS, "key.pem"))

    class Echo(asyncio.Protocol):
        def connection_made(self, transport):
            self.t = transport

        def data_received(self, data):
            self.t.write(data)

    async def start():
        server = await loop.create_server(Echo, "127.0.0.1", 0, ssl=ctx)
        host, port = server.sockets[0].getsockname()[:2]
        return server, f"{host}:{port}"

    value, cpu = _serve_with_client(
        loop, start, lambda addr: [TLS_CLIENT, CERTS, addr, str(size), str(n), what]
    )
    trips = n + max(5 if what == "handshake" else 10, n // 10)
    return {"value": value, "cpu_ns": cpu // trips}


UDP_CLIENT = r"""
import socket, sys, time
addr, size, n, window = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
host, port = addr.rsplit(":", 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect((host, int(port)))
s.settimeout(2)
msg = b"x" * size
def run(count):
    # `window` datagrams in flight: one sent for each one echoed. A lost
    # datagram (a receive that times out) is sent again.
    sent = got = 0
    while sent < min(window, count):
        s.send(msg); sent += 1
    while got < count:
        try:
            s.recv(65536)
        except socket.timeout:
            s.send(msg); continue
        got += 1
        if sent < count:
            s.send(msg); sent += 1
run(max(100, n // 10))
t0 = time.perf_counter_ns()
run(n)
print((time.perf_counter_ns() - t0) // n)
"""


def w_udp(loop, size, n, window=32):
    """UDP echo: a datagram endpoint on `loop` echoes what a client in
    another process sends, `window` datagrams in flight; ns per datagram
    echoed (packets per second = 1e9 / that)."""

    class Echo(asyncio.DatagramProtocol):
        def connection_made(self, transport):
            self.t = transport

        def datagram_received(self, data, addr):
            self.t.sendto(data, addr)

    async def start():
        tr, _ = await loop.create_datagram_endpoint(Echo, local_addr=("127.0.0.1", 0))
        host, port = tr.get_extra_info("sockname")[:2]
        return tr, f"{host}:{port}"

    value, cpu = _serve_with_client(
        loop, start, lambda addr: [UDP_CLIENT, addr, str(size), str(n), str(window)]
    )
    return {"value": value, "cpu_ns": cpu // (n + max(100, n // 10))}


SINK_CLIENT = r"""
import socket, sys, time
addr, total = sys.argv[1], int(sys.argv[2])
host, port = addr.rsplit(":", 1)
s = socket.create_connection((host, int(port)))
buf = bytearray(1 << 20)
got = 0
t0 = None
while got < total:
    k = s.recv_into(buf)
    if not k:
        raise SystemExit("short: %d of %d" % (got, total))
    if t0 is None:
        t0 = time.perf_counter_ns()
    got += k
print(time.perf_counter_ns() - t0)
"""


def w_sendfile(loop, path):
    """A server on `loop` sends the file at `path` (in tmpfs) to each client
    with `loop.sendfile`, as aiohttp serves files; a loop without it
    (NotImplementedError) sends it as asyncio's fallback does, chunks read
    and written with the transport's flow control. Returns the client's
    receiving time and the server's CPU time, in ns."""
    size = os.path.getsize(path)

    class Send(asyncio.Protocol):
        def connection_made(self, transport):
            self.t = transport
            asyncio.ensure_future(self.send())

        async def send(self):
            with open(path, "rb") as f:
                try:
                    await loop.sendfile(self.t, f)
                except NotImplementedError:
                    while chunk := f.read(1 << 18):
                        self.t.write(chunk)
                        if self.ready is not None:
                            await self.ready
            self.t.close()

        ready = None

        def pause_writing(self):
            self.ready = loop.create_future()

        def resume_writing(self):
            self.ready.set_result(None)
            self.ready = None

    async def start():
        server = await loop.create_server(Send, "127.0.0.1", 0)
        host, port = server.sockets[0].getsockname()[:2]
        return server, f"{host}:{port}"

    value, cpu = _serve_with_client(loop, start, lambda addr: [SINK_CLIENT, addr, str(size)])
    return {"value": value, "cpu_ns": cpu}


def floor_echo(family, size, n):
    """The floor for the echo rows: no loop, the same client served by one
    blocking `recv_into` and `sendall` after another in the measured process.
    A loop's server sleeps in `epoll_wait` and then reads; this one sleeps in
    `recv` itself, so what is left is the kernel's wake-ups and copies, the
    same for every mode (protocol, streams, sock) of a row."""
    tmp = None
    if family == "unix":
        tmp = tempfile.mkdtemp()
        addr = os.path.join(tmp, "s")
        lsock = socket.socket(socket.AF_UNIX)
        lsock.bind(addr)
        lsock.listen()
    else:
        lsock = socket.create_server(("127.0.0.1", 0))
        addr = "127.0.0.1:%d" % lsock.getsockname()[1]
    client = echo_client(family, addr, size, n)
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    conn, _ = lsock.accept()
    lsock.close()
    if family != "unix":
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buf = bytearray(262144)
    view = memoryview(buf)
    while k := conn.recv_into(buf):
        conn.sendall(view[:k])
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    conn.close()
    out = client.communicate()[0]
    if client.returncode != 0:
        raise SystemExit(f"echo client failed: {client.returncode}")
    if tmp:
        os.unlink(addr)
        os.rmdir(tmp)
    return {"rtt_ns": int(out), "cpu_ns": cpu_ns(r0, r1) // echo_trips(n)}


def floor_sendfile(path):
    """The floor for the sendfile rows: no loop, one blocking `os.sendfile`
    call after another to the same client. On this VM's loopback, with both
    processes on one vCPU, sendfile(2) itself is slower than reading and
    writing the file; a loop that uses it cannot beat this row."""
    size = os.path.getsize(path)
    srv = socket.create_server(("127.0.0.1", 0))
    client = subprocess.Popen(
        [sys.executable, "-c", SINK_CLIENT, f"127.0.0.1:{srv.getsockname()[1]}", str(size)],
        stdout=subprocess.PIPE,
    )
    conn, _ = srv.accept()
    srv.close()
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    with open(path, "rb") as f:
        off = 0
        while off < size:
            off += os.sendfile(conn.fileno(), f.fileno(), off, size - off)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    conn.close()
    out = client.communicate()[0]
    return {"value": int(out), "cpu_ns": cpu_ns(r0, r1)}


HTTP_APPS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "http_apps.py")


def _wrk_time(text):
    """wrk's "99%  2.56ms" into ns."""
    num = float(text.rstrip("usm"))
    unit = text[len(str(text).rstrip("usm")):]
    return int(num * {"us": 1e3, "ms": 1e6, "s": 1e9}[unit])


def run_wrk(wrk, url, conns, seconds, pin):
    """wrk's requests per second and p99 latency (ns) for `url`."""
    threads = 1 if conns < 64 else 2
    cmd = [wrk, f"-t{threads}", f"-c{conns}", f"-d{seconds}s", "--latency", url]
    out = subprocess.run(
        cmd, capture_output=True, text=True, timeout=seconds + 60,
        preexec_fn=pin_to_one_cpu if pin else None,
    ).stdout
    rps = p99 = None
    errors = 0
    for line in out.splitlines():
        parts = line.split()
        if line.startswith("Requests/sec:"):
            rps = float(parts[1])
        elif parts[:1] == ["99%"]:
            p99 = _wrk_time(parts[1])
        elif "Non-2xx" in line or line.strip().startswith("Socket errors"):
            errors += 1
    if rps is None or p99 is None:
        raise RuntimeError(f"wrk printed no result: {out[-500:]}")
    return rps, p99, errors


def http_server(server, loop_name, pin):
    """Starts `server` (uvicorn or aiohttp) on `loop_name` with a listening
    socket made here, and waits (a blocking request) until it answers."""
    import urllib.request

    lsock = socket.create_server(("127.0.0.1", 0), backlog=1024)
    port = lsock.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-P", HTTP_APPS, server, loop_name, str(lsock.fileno())],
        pass_fds=[lsock.fileno()],
        stderr=subprocess.PIPE,
        preexec_fn=pin_to_one_cpu if pin else None,
    )
    lsock.close()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=60) as r:
            r.read()
    except OSError as e:
        proc.kill()
        err = proc.communicate()[1].decode(errors="replace")[-800:]
        raise RuntimeError(f"{server} on {loop_name} did not answer: {e}: {err}") from e
    return proc, port


def stop_server(proc):
    """Ends an HTTP server from `http_server`: SIGTERM, then SIGKILL after
    5 s for a server that ignores it."""
    proc.terminate()
    try:
        proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()


def w_http_client(loop, n, in_flight=100):
    """aiohttp's client on `loop` fetching `/` `n` times, `in_flight` at a
    time over one ClientSession (its connection pool), from uvicorn with
    httptools on uvloop in another process: the same server for every loop.
    Returns wall ns per request and the client's CPU ns per request."""
    import aiohttp

    proc, port = http_server("uvicorn", "uvloop", pin=False)
    url = f"http://127.0.0.1:{port}/"

    async def main():
        conn = aiohttp.TCPConnector(limit=in_flight)
        async with aiohttp.ClientSession(connector=conn) as session:

            async def worker(count):
                for _ in range(count):
                    async with session.get(url) as r:
                        if r.status != 200:
                            raise SystemExit(f"status {r.status}")
                        await r.read()

            async def batch(total):
                per, extra = divmod(total, in_flight)
                await asyncio.gather(*(worker(per + (i < extra)) for i in range(in_flight)))

            await batch(max(in_flight, n // 10))  # warm-up: the pool's connections open
            r0 = resource.getrusage(resource.RUSAGE_SELF)
            t0 = time.perf_counter_ns()
            await batch(n)
            wall = time.perf_counter_ns() - t0
            r1 = resource.getrusage(resource.RUSAGE_SELF)
            return wall // n, cpu_ns(r0, r1) // n

    try:
        wall, cpu = loop.run_until_complete(main())
    finally:
        stop_server(proc)
    return {"value": wall, "cpu_ns": cpu}


def json_ceiling(pin):
    """How many times a second one process can make `/json`'s body alone
    (`json.dumps` of the document): the ceiling of the JSON rows on any
    loop, since the server makes it once per request."""
    code = (
        "import sys, time\n"
        f"sys.path.insert(0, {os.path.dirname(HTTP_APPS)!r})\n"
        "import http_apps\n"
        "http_apps.json_body()\n"
        "n = 300\n"
        "t0 = time.perf_counter()\n"
        "for _ in range(n):\n"
        "    http_apps.json_body()\n"
        "print(n / (time.perf_counter() - t0))\n"
    )
    out = subprocess.run(
        [sys.executable, "-P", "-c", code], capture_output=True, text=True, check=True,
        preexec_fn=pin_to_one_cpu if pin else None,
    )
    return float(out.stdout)


def http_rows(subjects, rounds, quick, wrk):
    """uvicorn (httptools), aiohttp's server and a bare asyncio.Protocol
    (what the loop alone costs) on each loop, loaded by wrk at 1, 64 and 256
    connections, unpinned and with the server and wrk on one vCPU. Per
    round, each loop's server starts once and serves every measurement of
    the round; the loops take turns."""
    seconds = 1 if quick else 3
    cases = [
        ("uvicorn+httptools hello", "uvicorn", "/"),
        ("uvicorn+httptools 64 KiB JSON", "uvicorn", "/json"),
        ("aiohttp hello", "aiohttp", "/"),
        ("asyncio.Protocol hello (no framework)", "protocol", "/"),
    ]
    conn_levels = [1, 64, 256]
    for pin in (False, True):
        where = ", one vCPU" if pin else ""
        for label, server, route in cases:
            emit({"event": "step", "label": f"{label}{where}"})
            if route == "/json":
                emit(
                    {
                        "event": "note",
                        "text": f"{label}{where}: the document's json.dumps alone runs "
                        f"{json_ceiling(pin):.0f} times a second, the ceiling of these rows",
                    }
                )
            active = list(subjects)
            # The hello rows at one connection also load the floor server
            # (http_apps.py's run_floor), which serves one connection only.
            floor = ["floor"] if route == "/" else []
            samples = {}  # (conns) -> list of rounds {loop: (rps, p99)}
            for r in range(rounds + 1):
                everyone = active + floor
                order = everyone[r % len(everyone):] + everyone[: r % len(everyone)]
                got = {c: {} for c in conn_levels}
                for lp in list(order):
                    levels = [1] if lp == "floor" else conn_levels
                    try:
                        proc, port = http_server("floor" if lp == "floor" else server, lp, pin)
                    except RuntimeError as e:
                        emit({"event": "note", "text": f"{label}: {lp} could not run it ({str(e)[:200]})"})
                        (floor if lp == "floor" else active).remove(lp)
                        continue
                    try:
                        url = f"http://127.0.0.1:{port}{route}"
                        run_wrk(wrk, url, min(levels[-1], 64), 1, pin)  # warm-up
                        for c in levels:
                            rps, p99, errors = run_wrk(wrk, url, c, seconds, pin)
                            if errors:
                                emit({"event": "note", "text": f"{label}: {lp} had socket errors at {c} connections"})
                            got[c][lp] = (rps, p99)
                    finally:
                        stop_server(proc)
                if r > 0:
                    for c in conn_levels:
                        samples.setdefault(c, []).append(got[c])
            if "pyloop" not in active:
                continue
            for c in conn_levels:
                row_subjects = active + (floor if c == 1 else [])
                rows = [row for row in samples.get(c, []) if all(s in row for s in row_subjects)]
                if not rows:
                    continue
                for what, unit, pick in (
                    ("time per request (1 / requests per second)", "ns", lambda v: 1e9 / v[0]),
                    ("p99 latency", "ns", lambda v: v[1]),
                ):
                    emit(
                        {
                            "event": "run",
                            "system": "pyloop",
                            "workload": f"HTTP {label}{where}: {what}",
                            "unit": unit,
                            "params": {"connections": str(c)},
                            "subjects": [
                                {
                                    "name": s,
                                    "version": "blocking recv/sendall, no parsing" if s == "floor" else version(s),
                                }
                                for s in row_subjects
                            ],
                            "reference": 0,
                            "rounds": [[{"value": int(pick(row[s]))} for s in row_subjects] for row in rows],
                        }
                    )


def workloads(quick):
    k = 10 if quick else 1
    w = [
        ("call_soon chain (socket registered)", "ns/callback", "call_soon", 300_000 // k),
        ("call_soon_threadsafe from a thread", "ns/call", "threadsafe", 100_000 // k),
        ("future round trip", "ns/round trip", "future", 100_000 // k),
        ("sleep(0) task switch", "ns/switch", "sleep0", 100_000 // k),
        ("gather of 10k tasks", "ns", "gather", 10_000),
        ("schedule and cancel 10k timers", "ns", "timers", 10_000),
    ]
    return w


# The first rows of `workloads`, which also run on `OTHER_PYTHONS`.
MICRO_ROWS = 4

ECHO_SIZES = [1024, 10 * 1024, 100 * 1024]


def floor_lateness(n):
    """The machine's floor for timer lateness: the same delays slept with
    time.sleep (clock_nanosleep), measured the same way. The thread's timer
    slack is set to 1 ns first (it is 50 us by default, and a timerfd has
    none), so this is the kernel's and the VM's wake-up latency alone."""
    import ctypes

    PR_SET_TIMERSLACK = 29
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_TIMERSLACK) failed")
    rng = random.Random(7)
    out = []
    for _ in range(n):
        d = 10 ** rng.uniform(-4, -2)
        deadline = time.monotonic_ns() + round(d * 1e9)
        time.sleep(d)
        out.append(time.monotonic_ns() - deadline)
    return out


def pin_to_one_cpu():
    """Pins this process, its later threads and its children (the echo
    client) to one vCPU, the lowest it may run on.

    Unpinned, the scheduler decides per run whether the echo client and the
    server share a vCPU, and on this VM the round trip differs by up to 10x
    between the two placements: medians then depend on which placements a
    loop drew. Pinned, every loop gets the same placement, and the round trip
    is the CPU that the client, the kernel and the loop spend on it.
    """
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def child(args):
    if args.workload.endswith(":pinned"):
        pin_to_one_cpu()
        args.workload = args.workload.removesuffix(":pinned")
    if args.loop == "floor":
        gc.collect()
        if args.workload.startswith("sendfile:"):
            print(json.dumps(floor_sendfile(args.workload.split(":", 1)[1])))
        elif args.workload.startswith("echo:"):
            _, _mode, family, size = args.workload.split(":")
            print(json.dumps(floor_echo(family, int(size), args.n)))
        else:
            print(json.dumps(floor_lateness(args.n)))
        return
    loop = new_loop(args.loop)
    asyncio.set_event_loop(loop)
    # The child's imports leave the collector a full collection owed, which
    # the next 40,000 or so container allocations set off (3.11, measured),
    # whoever makes them. A loop whose handles the collector tracks
    # (asyncio's, uvloop's, pyloop's) would pay all of it, 6-10 ms, inside
    # its timed window, and one whose handles it does not (rloop's) none.
    # Paid here, before any window, for every loop alike; what a loop's own
    # objects cost the collector in the window (its young collections)
    # stays in the numbers.
    gc.collect()
    try:
        kind = args.workload
        n = args.n
        if kind == "call_soon":
            v = w_call_soon(loop, n)
        elif kind == "threadsafe":
            v = w_threadsafe(loop, n)
        elif kind == "future":
            v = w_future(loop, n)
        elif kind == "sleep0":
            v = w_sleep0(loop, n)
        elif kind == "gather":
            v = w_gather(loop, n)
        elif kind == "timers":
            v = w_timers(loop, n)
        elif kind == "lateness":
            v = w_lateness(loop, n)
        elif kind == "idle":
            v = w_idle(loop, n)
        elif kind == "rss":
            v = w_rss(loop, n)
        elif kind.startswith("tls:"):
            _, what, size = kind.split(":")
            v = w_tls(loop, what, int(size), n)
        elif kind.startswith("udp:"):
            v = w_udp(loop, int(kind.split(":")[1]), n)
        elif kind.startswith("sendfile:"):
            v = w_sendfile(loop, kind.split(":", 1)[1])
        elif kind == "http_client":
            v = w_http_client(loop, n)
        elif kind.startswith("echo:"):
            _, mode, family, size = kind.split(":")
            v = w_echo(loop, mode, family, int(size), n)
        else:
            raise SystemExit(f"unknown workload {kind}")
    finally:
        loop.close()
    print(json.dumps(v))


def spawn(workload, loop, n, python=None):
    out = subprocess.run(
        [python or sys.executable, "-P", __file__, "child", workload, loop, str(n)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if out.returncode != 0:
        raise RuntimeError(f"{workload} on {loop} failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def instructions(valgrind, subjects, quick):
    """Instructions per operation of the micro rows, counted by callgrind:
    the same child at two sizes, and the difference per operation, so that
    start-up and imports cancel out. A count does not move with this VM's
    noise, as the times above do, so it shows which loop does less work even
    where their times are within that noise. It is not a time: a cache miss,
    a `rdtsc` or a locked instruction counts as one. Under valgrind the
    threads of `call_soon_threadsafe` take turns, so that row's producer
    runs in longer bursts than it does natively."""
    emit({"event": "step", "label": "instructions per operation (callgrind)"})
    rows = [
        ("call_soon chain (socket registered)", "call_soon", 20_000, 1),
        ("call_soon_threadsafe from a thread", "threadsafe", 10_000, 1),
        ("future round trip", "future", 10_000, 1),
        ("sleep(0) task switch", "sleep0", 10_000, 2),
    ]
    if quick:
        rows = [(a, b, n // 4, d) for a, b, n, d in rows]

    def count(workload, loop, n):
        out = subprocess.run(
            [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null",
             sys.executable, "-P", __file__, "child", workload, loop, str(n)],
            capture_output=True,
            text=True,
            timeout=1200,
        )
        m = re.search(r"Collected : (\d+)", out.stderr)
        if out.returncode != 0 or m is None:
            raise RuntimeError(f"callgrind of {workload} on {loop} failed: {out.stderr[-500:]}")
        return int(m.group(1))

    for label, workload, n, per in rows:
        got = {}
        for loop in subjects:
            try:
                got[loop] = (count(workload, loop, 3 * n) - count(workload, loop, n)) // (2 * n * per)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                emit({"event": "note", "text": f"{label} (callgrind): {loop} could not run it ({str(e)[-200:]})"})
        active = [loop for loop in subjects if loop in got]
        if "pyloop" not in active:
            continue
        emit(
            {
                "event": "run",
                "system": "pyloop",
                "workload": f"{label}: instructions (callgrind)",
                "unit": "count",
                "subjects": [{"name": loop, "version": version(loop)} for loop in active],
                "reference": 0,
                "rounds": [[{"value": got[loop]} for loop in active]],
            }
        )


def peer_program(name):
    """The program of peer `name` that xtask installed (`XTASK_PEERS`), or
    None where it could not."""
    peers = json.loads(os.environ.get("XTASK_PEERS", "[]"))
    return next((p.get("program") for p in peers if p.get("name") == name), None)


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def interleaved(label, workload, n, subjects, rounds, unit="ns", params=None, size=None, pick=None,
                also=(), floor=None, python=None):
    """Runs `rounds` rounds (plus a warm-up) and emits one run event, and one
    more for each (label, unit, pick) in `also`, from the same processes.

    With `python`, the children run in that venv interpreter instead of the
    driver's (see `OTHER_PYTHONS`).

    With `floor` (what the floor does, for its version column), the
    workload's floor takes its turn in every round beside the loops.

    A loop that fails the workload (rloop lacks Unix servers, say) is dropped
    from this workload's run, and a note says why.
    """
    emit({"event": "step", "label": label})
    active = list(subjects) + (["floor"] if floor else [])
    rows = []
    for r in range(rounds + 1):
        order = active[r % len(active):] + active[: r % len(active)]
        got = {}
        for s in order:
            try:
                v = spawn(workload, s, n, python)
            except (RuntimeError, subprocess.TimeoutExpired, ValueError) as e:
                last = str(e).strip().splitlines()[-1][:200]
                emit({"event": "note", "text": f"{label}: {s} could not run it ({last})"})
                active.remove(s)
                for row in rows:
                    row.pop(s, None)
                continue
            got[s] = v
        if r > 0:
            rows.append(got)
        if not active:
            return
    if "pyloop" not in active:
        return
    for run_label, run_unit, run_pick in [(label, unit, pick), *also]:
        table = [
            [{"value": max(0, int(run_pick(row[s]) if run_pick else row[s]))} for s in active]
            for row in rows
        ]
        run = {
            "event": "run",
            "system": "pyloop",
            "workload": run_label,
            "unit": run_unit,
            "subjects": [
                {"name": s, "version": floor if s == "floor" else version(s, python)} for s in active
            ],
            "reference": 0,
            "rounds": table,
        }
        if params:
            run["params"] = params
        if size is not None:
            run["size"] = size
        emit(run)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--scratch")
    ap.add_argument("--shm")
    args, _ = ap.parse_known_args()
    rounds = 3 if args.quick else 7

    subjects = []
    for name in LOOPS:
        if version(name) is None:
            emit({"event": "note", "text": f"peer {name} is missing: not installed in the bench venv"})
        else:
            subjects.append(name)
    wl = workloads(args.quick)
    echo = [
        (mode, fam, size)
        for mode in ("protocol", "streams", "sock")
        for fam in ("tcp", "unix")
        for size in ECHO_SIZES
    ]
    tls_sizes = ECHO_SIZES
    udp_sizes = [64, 1024]
    emit(
        {
            "event": "plan",
            "steps": len(wl)
            + MICRO_ROWS * len(OTHER_PYTHONS)
            + 4
            + 2 * len(echo)
            + 2 * (len(tls_sizes) + 2 + len(udp_sizes))
            + 2 * 4
            + 2,
        }
    )

    for label, unit_label, kind, n in wl:
        interleaved(label, kind, n, subjects, rounds, params={"per": unit_label})

    # The micro rows on the other CPythons: 3.14 (whose collector is
    # incremental) and the free-threaded 3.14t, where the loop's state is
    # behind a mutex and handles are not reused.
    for other in OTHER_PYTHONS:
        there = [s for s in LOOPS if version(s, other["python"]) is not None]
        if "pyloop" not in there:
            emit({"event": "note", "text": f"CPython {other['name']}: pyloop does not run there: no rows"})
            continue
        for name in LOOPS:
            if name not in there:
                emit({"event": "note", "text": f"CPython {other['name']}: {name} has no wheel there"})
        for label, unit_label, kind, n in wl[:MICRO_ROWS]:
            interleaved(
                f"{label}, CPython {other['name']}", kind, n, there, rounds,
                params={"per": unit_label}, python=other["python"],
            )

    valgrind = peer_program("valgrind")
    if valgrind:
        instructions(valgrind, subjects, args.quick)
    else:
        emit({"event": "note", "text": "valgrind is missing: no instruction counts"})

    # Timer lateness: every loop's samples from one process per round; the
    # run's rounds are the individual timers.
    emit({"event": "step", "label": "timer lateness"})
    per = 60 if args.quick else 200
    late_subjects = subjects + ["floor"]
    samples = {s: [] for s in late_subjects}
    for r in range(rounds):
        order = late_subjects[r % len(late_subjects):] + late_subjects[: r % len(late_subjects)]
        for s in order:
            samples[s].extend(spawn("lateness", s, per))
    k = min(len(v) for v in samples.values())
    emit(
        {
            "event": "run",
            "system": "pyloop",
            "workload": "timer lateness (0.1-10 ms delays)",
            "unit": "ns",
            "subjects": [
                {"name": s, "version": "time.sleep" if s == "floor" else version(s)}
                for s in late_subjects
            ],
            "reference": 0,
            "rounds": [
                [{"value": max(0, samples[s][i])} for s in late_subjects] for i in range(k)
            ],
        }
    )
    early = {s: sum(1 for x in samples[s] if x < 0) for s in late_subjects}
    emit(
        {
            "event": "note",
            "text": "timers that fired early (counted as 0 late in the table): "
            + ", ".join(f"{s} {early[s]} of {len(samples[s])}" for s in late_subjects),
        }
    )

    idle_rounds = 3 if args.quick else 5
    interleaved("idle second: CPU time", "idle", 1, subjects, idle_rounds, pick=lambda v: v["cpu_ns"])
    interleaved(
        "idle second: context switches", "idle", 1, subjects, idle_rounds, unit="count",
        pick=lambda v: v["switches"],
    )
    n_rss = 2_000_000 if args.quick else 10_000_000
    rss_label = f"RSS growth, 1M to {n_rss // 1_000_000}M callbacks"
    interleaved(rss_label, "rss", n_rss, subjects, 1 if args.quick else 3, unit="KiB")

    n_echo = 300 if args.quick else 2000
    for pinned in (False, True):
        where = ", one vCPU" if pinned else ""
        for mode, fam, size in echo:
            interleaved(
                f"echo {mode} {fam}{where}",
                f"echo:{mode}:{fam}:{size}" + (":pinned" if pinned else ""),
                n_echo,
                subjects,
                rounds,
                params={"size": f"{size // 1024} KiB"},
                size=size,
                pick=lambda v: v["rtt_ns"],
                also=[
                    (
                        f"echo {mode} {fam}{where}: server CPU per round trip",
                        "ns",
                        lambda v: v["cpu_ns"],
                    )
                ],
                floor="no loop: blocking recv_into/sendall",
            )

    wrk = peer_program("wrk")
    n_client = 2000 if args.quick else 10_000
    for pinned in (False, True):
        where = ", one vCPU" if pinned else ""
        interleaved(
            f"HTTP client: aiohttp, {n_client} requests, 100 in flight{where}",
            "http_client" + (":pinned" if pinned else ""),
            n_client,
            subjects,
            rounds,
            params={"per": "ns/request"},
            pick=lambda v: v["value"],
            also=[(f"HTTP client{where}: client CPU per request", "ns", lambda v: v["cpu_ns"])],
        )
    if wrk:
        http_rows(subjects, 3, args.quick, wrk)
    else:
        emit({"event": "note", "text": "wrk is missing: no HTTP server rows"})

    # TLS, UDP and sendfile (issue 17), each unpinned and on one vCPU.
    n_tls = 200 if args.quick else 1500
    n_hs = 40 if args.quick else 200
    n_udp = 2000 if args.quick else 20000
    big = os.path.join(args.shm or tempfile.gettempdir(), "pyloop-sendfile.bin")
    mib = 32 if args.quick else 256
    with open(big, "wb") as f:
        chunk = os.urandom(1 << 20)
        for _ in range(mib):
            f.write(chunk)
    try:
        for pinned in (False, True):
            where = ", one vCPU" if pinned else ""
            pin = ":pinned" if pinned else ""
            for size in tls_sizes:
                interleaved(
                    f"echo tls tcp{where}",
                    f"tls:echo:{size}{pin}",
                    n_tls,
                    subjects,
                    rounds,
                    params={"size": f"{size // 1024} KiB"},
                    size=size,
                    pick=lambda v: v["value"],
                    also=[(f"echo tls tcp{where}: server CPU per round trip", "ns", lambda v: v["cpu_ns"])],
                )
            interleaved(
                f"TLS connection: connect, handshake, 1-byte echo, close{where}",
                f"tls:handshake:1{pin}",
                n_hs,
                subjects,
                rounds,
                pick=lambda v: v["value"],
                also=[(f"TLS connection{where}: server CPU per connection", "ns", lambda v: v["cpu_ns"])],
            )
            for size in udp_sizes:
                interleaved(
                    f"UDP echo, 32 datagrams in flight{where}",
                    f"udp:{size}{pin}",
                    n_udp,
                    subjects,
                    rounds,
                    params={"size": f"{size} B"},
                    size=size,
                    pick=lambda v: v["value"],
                    also=[(f"UDP echo{where}: server CPU per datagram", "ns", lambda v: v["cpu_ns"])],
                )
            interleaved(
                f"sendfile of a {mib} MiB file over TCP{where}",
                f"sendfile:{big}{pin}",
                1,
                subjects,
                rounds,
                pick=lambda v: v["value"],
                also=[(f"sendfile of {mib} MiB{where}: server CPU", "ns", lambda v: v["cpu_ns"])],
                floor="no loop: blocking os.sendfile",
            )
    finally:
        os.unlink(big)


if __name__ == "__main__":
    if sys.argv[1:] == ["versions"]:
        print(json.dumps(versions()))
    elif len(sys.argv) > 1 and sys.argv[1] == "child":
        ap = argparse.ArgumentParser()
        ap.add_argument("mode")
        ap.add_argument("workload")
        ap.add_argument("loop")
        ap.add_argument("n", type=int)
        child(ap.parse_args())
    else:
        main()
