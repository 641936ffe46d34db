"""pyloop against asyncio's own loop on machine-made schedules (Hypothesis).

Each example is run twice, on asyncio's default loop and on pyloop, over
real loopback sockets: a TLS stream written in random pieces while the
reader pauses and resumes at random points, and datagrams of random sizes
(empty, large, too large). What the receiving protocol saw must be the same
on both loops: the bytes, in order, and the callbacks that frame them.

`PYLOOP_FUZZ_EXAMPLES=2000 pytest tests/test_fuzz_transports.py` runs a
longer search than the ordinary run's.
"""

import asyncio
import os
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyloop
from conftest import tls_contexts

EXAMPLES = int(os.environ.get("PYLOOP_FUZZ_EXAMPLES", "25"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize="PYLOOP_FUZZ_EXAMPLES" not in os.environ,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)
# Seconds an example may take before it counts as a hang.
TIMEOUT = 20


def both(run, *args):
    """`run(loop, *args)` on asyncio's loop, then on pyloop's."""
    seen = []
    for make in (asyncio.new_event_loop, pyloop.new_event_loop):
        lp = make()
        try:
            seen.append(lp.run_until_complete(asyncio.wait_for(run(lp, *args), TIMEOUT)))
        finally:
            lp.close()
    return seen


class Reader(asyncio.Protocol):
    """Records what arrives; pauses after the reads the schedule names and
    resumes after the number of loop turns it gives."""

    def __init__(self, loop, pauses):
        self.loop = loop
        self.pauses = list(pauses)
        self.reads = 0
        self.data = bytearray()
        self.events = []
        self.done = loop.create_future()

    def connection_made(self, transport):
        self.transport = transport
        self.events.append("made")

    def data_received(self, data):
        self.data += data
        self.reads += 1
        if self.pauses and self.reads % (self.pauses[0] + 1) == 0:
            turns = self.pauses.pop(0)
            self.transport.pause_reading()
            self.later(turns, self.transport.resume_reading)

    def later(self, turns, fn):
        if turns == 0:
            self.loop.call_soon(fn)
        else:
            self.loop.call_soon(self.later, turns - 1, fn)

    def eof_received(self):
        self.events.append("eof")

    def connection_lost(self, exc):
        self.events.append("lost" if exc is None else type(exc).__name__)
        if not self.done.done():
            self.done.set_result(None)


class Writer(asyncio.Protocol):
    """Counts the flow-control callbacks a small buffer limit provokes."""

    def __init__(self):
        self.paused = 0
        self.resumed = 0

    def pause_writing(self):
        self.paused += 1

    def resume_writing(self):
        self.resumed += 1


async def tls_stream(loop, pieces, pauses, limit):
    server_ctx, client_ctx = tls_contexts()
    readers = []

    def factory():
        readers.append(Reader(loop, pauses))
        return readers[-1]

    server = await loop.create_server(factory, "127.0.0.1", 0, ssl=server_ctx)
    port = server.sockets[0].getsockname()[1]
    transport, writer = await loop.create_connection(
        Writer, "127.0.0.1", port, ssl=client_ctx, server_hostname="localhost"
    )
    transport.set_write_buffer_limits(high=limit)
    for piece, turns in pieces:
        transport.write(piece)
        for _ in range(turns):
            await asyncio.sleep(0)
    transport.close()
    while not readers:
        await asyncio.sleep(0)
    await readers[0].done
    server.close()
    await server.wait_closed()
    reader = readers[0]
    # Whether the writer was told to pause depends on how fast the peer
    # read; that it was told to resume as often as to pause does not.
    return bytes(reader.data), reader.events, writer.paused - writer.resumed


@FUZZ
@given(
    pieces=st.lists(
        st.tuples(
            st.one_of(
                st.binary(max_size=64),
                st.binary(min_size=1000, max_size=20000),
                st.just(b"\0" * 70000),
            ),
            st.integers(0, 3),
        ),
        max_size=10,
    ),
    pauses=st.lists(st.integers(0, 4), max_size=8),
    limit=st.sampled_from([1, 1024, 65536]),
)
def test_a_tls_stream_in_pieces_with_pauses_arrives_as_on_asyncio(pieces, pauses, limit):
    theirs, ours = both(tls_stream, pieces, pauses, limit)
    sent = b"".join(p for p, _ in pieces)
    assert theirs[0] == sent
    assert ours == theirs


class Collector(asyncio.DatagramProtocol):
    def __init__(self):
        self.got = asyncio.Queue()
        self.errors = []

    def datagram_received(self, data, addr):
        self.got.put_nowait(data)

    def error_received(self, exc):
        self.errors.append(type(exc).__name__)


class Echo(asyncio.DatagramProtocol):
    def connection_made(self, transport):
        self.transport = transport

    def datagram_received(self, data, addr):
        self.transport.sendto(data, addr)


async def datagrams(loop, sizes, connected):
    """Sends each datagram and waits for its echo (so no socket buffer
    overflows); one too large for IP is refused at sendto, on both loops
    alike, and not waited for."""
    echo_t, _ = await loop.create_datagram_endpoint(Echo, local_addr=("127.0.0.1", 0))
    addr = echo_t.get_extra_info("sockname")
    if connected:
        t, c = await loop.create_datagram_endpoint(Collector, remote_addr=addr)
    else:
        t, c = await loop.create_datagram_endpoint(Collector, local_addr=("127.0.0.1", 0))
    got = []
    raised = []
    for i, n in enumerate(sizes):
        data = bytes([i % 256]) * n
        try:
            if connected:
                t.sendto(data)
            else:
                t.sendto(data, addr)
        except OSError as e:
            raised.append(type(e).__name__)
            continue
        if n <= 65507:
            got.append(await c.got.get())
        else:
            # Refused by the kernel: reported to error_received, or
            # raised above; either way nothing comes back.
            await asyncio.sleep(0)
    t.close()
    echo_t.close()
    return got, raised, c.errors


# asyncio before 3.13 drops an empty datagram without a word; pyloop sends
# it, as asyncio does from 3.13 on. Compared where the two agree.
SMALLEST = 0 if sys.version_info >= (3, 13) else 1


@FUZZ
@given(
    sizes=st.lists(
        st.one_of(
            st.integers(SMALLEST, 1500),
            st.sampled_from([SMALLEST, 65507, 65508, 100000]),
        ),
        max_size=24,
    ),
    connected=st.booleans(),
)
def test_datagrams_of_any_size_come_back_as_on_asyncio(sizes, connected):
    theirs, ours = both(datagrams, sizes, connected)
    assert theirs[0] == [bytes([i % 256]) * n for i, n in enumerate(sizes) if n <= 65507]
    assert ours == theirs
