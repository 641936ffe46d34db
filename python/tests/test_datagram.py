"""The Rust datagram transport: batched receives and sends, pausing in the
middle of a batch, and the address forms Python's socket module uses."""

import asyncio
import socket

import pytest


class Recorder(asyncio.DatagramProtocol):
    def __init__(self, pause_after=None):
        self.got = []
        self.errors = []
        self.pause_after = pause_after
        self.arrived = asyncio.Event()
        self.done = asyncio.get_running_loop().create_future()

    def connection_made(self, transport):
        self.transport = transport

    def datagram_received(self, data, addr):
        self.got.append((data, addr))
        self.arrived.set()
        if self.pause_after is not None and len(self.got) == self.pause_after:
            self.transport.pause_reading()

    def error_received(self, exc):
        self.errors.append(exc)

    def connection_lost(self, exc):
        self.done.set_result(exc)


async def wait_for_count(proto, n):
    while len(proto.got) < n:
        proto.arrived.clear()
        await asyncio.wait_for(proto.arrived.wait(), 5)


def test_a_burst_arrives_whole_and_in_order(loop):
    """Datagrams queued in the kernel arrive in one readable event (a
    recvmmsg batch) and in order; pausing in the middle of a batch holds the
    rest until resume_reading, losing none."""

    async def main():
        tr, proto = await loop.create_datagram_endpoint(
            lambda: Recorder(pause_after=5), local_addr=("127.0.0.1", 0)
        )
        addr = tr.get_extra_info("sockname")
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind(("127.0.0.1", 0))
            for i in range(40):
                s.sendto(b"%d" % i, addr)
            await wait_for_count(proto, 5)
            await asyncio.sleep(0.02)
            assert len(proto.got) == 5 and not tr.is_reading()
            proto.pause_after = None
            tr.resume_reading()
            await wait_for_count(proto, 40)
            assert [d for d, _ in proto.got] == [b"%d" % i for i in range(40)]
            assert {a for _, a in proto.got} == {s.getsockname()}
        tr.close()
        await proto.done

    loop.run_until_complete(main())


def test_ipv6_addresses_are_four_tuples(loop):
    if not socket.has_ipv6:
        pytest.skip("no IPv6")

    async def main():
        tr, proto = await loop.create_datagram_endpoint(Recorder, local_addr=("::1", 0))
        addr = tr.get_extra_info("sockname")
        with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as s:
            s.bind(("::1", 0))
            s.sendto(b"v6", addr)
            await wait_for_count(proto, 1)
            assert proto.got[0] == (b"v6", s.getsockname())
            assert len(proto.got[0][1]) == 4
            tr.sendto(b"back", proto.got[0][1])
            tr.sendto(b"and with 2", ("::1", s.getsockname()[1]))
            s.settimeout(5)
            assert s.recv(10) == b"back"
            assert s.recv(20) == b"and with 2"
        tr.close()
        await proto.done

    loop.run_until_complete(main())


def test_host_names_and_repeated_destinations(loop):
    """A host name goes through the socket's own sendto; a destination
    object used again is the same address."""

    async def main():
        tr, proto = await loop.create_datagram_endpoint(Recorder, local_addr=("127.0.0.1", 0))
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind(("127.0.0.1", 0))
            s.settimeout(5)
            port = s.getsockname()[1]
            tr.sendto(b"by name", ("localhost", port))
            dest = ("127.0.0.1", port)
            for i in range(3):
                tr.sendto(b"%d" % i, dest)
            assert [s.recv(20) for _ in range(4)] == [b"by name", b"0", b"1", b"2"]
            # What the socket module refuses goes to error_received, as
            # asyncio's send errors do.
            tr.sendto(b"x", ("no such host.invalid", port))
            assert len(proto.errors) == 1 and isinstance(proto.errors[0], socket.gaierror)
        tr.close()
        await proto.done

    loop.run_until_complete(main())


def test_unix_abstract_and_path_addresses(loop, tmp_path):
    async def main():
        path = str(tmp_path / "d.sock")
        tr, proto = await loop.create_datagram_endpoint(
            Recorder, local_addr=path, family=socket.AF_UNIX
        )
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as named, socket.socket(
            socket.AF_UNIX, socket.SOCK_DGRAM
        ) as unnamed:
            named.bind(b"\0pyloop-test-%d" % id(proto))
            named.sendto(b"abstract", path)
            unnamed.sendto(b"unnamed", path)
            await wait_for_count(proto, 2)
            assert proto.got == [
                (b"abstract", b"\0pyloop-test-%d" % id(proto)),
                (b"unnamed", None),
            ]
            tr.sendto(b"reply", proto.got[0][1])
            named.settimeout(5)
            assert named.recv(10) == b"reply"
        tr.close()
        await proto.done

    loop.run_until_complete(main())


def test_a_queued_burst_drains_in_order(loop):
    """What the kernel refuses waits in the transport and drains in order,
    in sendmmsg batches, when the peer reads."""
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    b.setblocking(False)

    async def main():
        tr, proto = await loop.create_datagram_endpoint(Recorder, sock=a)
        for i in range(500):
            tr.sendto(b"%03d" % i)
        assert tr.get_write_buffer_size() > 0
        got = []
        while len(got) < 500:
            try:
                got.append(b.recv(16))
            except BlockingIOError:
                await asyncio.sleep(0.001)
        assert got == [b"%03d" % i for i in range(500)]
        assert tr.get_write_buffer_size() == 0
        tr.close()
        await proto.done

    loop.run_until_complete(main())
    b.close()
