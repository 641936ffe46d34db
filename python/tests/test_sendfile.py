"""loop.sendfile and loop.sock_sendfile: sendfile(2) on plain sockets, the
read-and-write fallback for TLS and for files sendfile(2) refuses, offsets,
counts, and the file position afterwards; on real sockets and files."""

import asyncio
import hashlib
import os
import socket
import sys

import pytest

from conftest import tls_contexts

SIZE = 8 * 1024 * 1024 + 13  # larger than any socket buffer: many writable events


@pytest.fixture
def data_file(tmp_path):
    data = os.urandom(SIZE)
    path = tmp_path / "data.bin"
    path.write_bytes(data)
    with open(path, "rb") as f:
        yield f, data


class Sink(asyncio.Protocol):
    """A server protocol that keeps what it receives."""

    def __init__(self, loop, close_after=None):
        self.got = bytearray()
        self.done = loop.create_future()
        self.close_after = close_after
        self.transport = None

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        self.got += data
        if self.close_after is not None and len(self.got) >= self.close_after:
            self.transport.abort()

    def connection_lost(self, exc):
        if not self.done.done():
            self.done.set_result(None)


async def connect_pair(loop, family, tmp_path, ssl=False, close_after=None):
    sink = Sink(loop, close_after)
    server_ctx, client_ctx = tls_contexts() if ssl else (None, None)
    if family == "tcp":
        server = await loop.create_server(lambda: sink, "127.0.0.1", 0, ssl=server_ctx)
        port = server.sockets[0].getsockname()[1]
        tr, _ = await loop.create_connection(
            asyncio.Protocol, "127.0.0.1", port, ssl=client_ctx,
            server_hostname="localhost" if ssl else None,
        )
    else:
        path = str(tmp_path / "s.sock")
        server = await loop.create_unix_server(lambda: sink, path, ssl=server_ctx)
        tr, _ = await loop.create_unix_connection(
            asyncio.Protocol, path, ssl=client_ctx,
            server_hostname="localhost" if ssl else None,
        )
    return server, sink, tr


@pytest.mark.parametrize("ssl", [False, True], ids=["plain", "tls"])
@pytest.mark.parametrize("family", ["tcp", "unix"])
def test_sendfile_whole_file(loop, data_file, tmp_path, family, ssl):
    f, data = data_file

    async def main():
        server, sink, tr = await connect_pair(loop, family, tmp_path, ssl)
        n = await loop.sendfile(tr, f)
        assert n == len(data)
        assert f.tell() == len(data)
        tr.write(b"after")  # writing works again once it is done
        tr.close()
        await sink.done
        server.close()
        await server.wait_closed()
        assert hashlib.sha256(sink.got).digest() == hashlib.sha256(data + b"after").digest()

    loop.run_until_complete(main())


@pytest.mark.parametrize("ssl", [False, True], ids=["plain", "tls"])
def test_sendfile_offset_and_count_after_buffered_writes(loop, data_file, tmp_path, ssl):
    f, data = data_file

    async def main():
        server, sink, tr = await connect_pair(loop, "tcp", tmp_path, ssl)
        tr.write(b"x" * (4 << 20))  # more than the kernel takes at once: buffered
        n = await loop.sendfile(tr, f, 1000, 3 << 20)
        assert n == 3 << 20
        assert f.tell() == 1000 + (3 << 20)
        tr.close()
        await sink.done
        server.close()
        assert bytes(sink.got) == b"x" * (4 << 20) + data[1000 : 1000 + (3 << 20)]

    loop.run_until_complete(main())


def test_write_is_refused_while_sendfile_runs_and_close_waits_for_it(loop, data_file, tmp_path):
    f, data = data_file

    async def main():
        server, sink, tr = await connect_pair(loop, "tcp", tmp_path)
        task = loop.create_task(loop.sendfile(tr, f))
        await asyncio.sleep(0)
        with pytest.raises(RuntimeError, match="sendfile is in progress"):
            tr.write(b"no")
        # close() during the transfer lets it finish first, as it lets a
        # write buffer drain.
        tr.close()
        assert await task == len(data)
        await sink.done
        server.close()
        assert bytes(sink.got) == data

    loop.run_until_complete(main())


def test_sendfile_of_a_pipe_falls_back_and_no_fallback_raises(loop, tmp_path):
    async def main():
        server, sink, tr = await connect_pair(loop, "tcp", tmp_path)
        r, w = os.pipe()
        os.write(w, b"through a pipe")
        os.close(w)
        with open(r, "rb") as pipe:
            with pytest.raises(asyncio.SendfileNotAvailableError):
                await loop.sendfile(tr, pipe, fallback=False)
            assert await loop.sendfile(tr, pipe) == len(b"through a pipe")
        tr.close()
        await sink.done
        server.close()
        assert bytes(sink.got) == b"through a pipe"

    loop.run_until_complete(main())


def test_peer_closing_midway_raises_connection_error(loop, data_file, tmp_path):
    f, data = data_file

    async def main():
        server, sink, tr = await connect_pair(loop, "tcp", tmp_path, close_after=100_000)
        with pytest.raises(ConnectionError):
            await loop.sendfile(tr, f)
        # The file position is after what was sent, and no further.
        assert 100_000 <= f.tell() < len(data)
        tr.close()
        server.close()

    loop.run_until_complete(main())


def test_sendfile_cancelled_stops_and_the_transport_writes_again(loop, data_file, tmp_path):
    f, data = data_file

    async def main():
        sink = Sink(loop)
        server = await loop.create_server(lambda: sink, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        tr, _ = await loop.create_connection(asyncio.Protocol, "127.0.0.1", port)
        while sink.transport is None:
            await asyncio.sleep(0)
        sink.transport.pause_reading()  # the transfer stalls on a full socket
        task = loop.create_task(loop.sendfile(tr, f))
        await asyncio.sleep(0.05)
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        sent = f.tell()
        assert 0 < sent < len(data)
        tr.write(b"end")
        tr.close()
        sink.transport.resume_reading()
        await sink.done
        server.close()
        assert bytes(sink.got) == data[:sent] + b"end"

    loop.run_until_complete(main())


def test_sendfile_refuses_datagram_and_closing_transports(loop, data_file, tmp_path):
    f, _ = data_file

    async def main():
        tr, _ = await loop.create_datagram_endpoint(asyncio.DatagramProtocol, local_addr=("127.0.0.1", 0))
        with pytest.raises(RuntimeError, match="not supported"):
            await loop.sendfile(tr, f)
        tr.close()
        server, sink, tr = await connect_pair(loop, "tcp", tmp_path)
        tr.close()
        with pytest.raises(RuntimeError, match="closing"):
            await loop.sendfile(tr, f)
        assert f.tell() == 0
        await sink.done
        server.close()

    loop.run_until_complete(main())


@pytest.mark.parametrize("count", [None, 5000])
def test_sock_sendfile(loop, data_file, count):
    f, data = data_file

    async def main():
        sink = Sink(loop)
        server = await loop.create_server(lambda: sink, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        sock = socket.socket()
        sock.setblocking(False)
        await loop.sock_connect(sock, ("127.0.0.1", port))
        n = await loop.sock_sendfile(sock, f, 7, count)
        want = data[7 : 7 + count] if count else data[7:]
        assert n == len(want)
        assert f.tell() == 7 + n
        sock.close()
        await sink.done
        server.close()
        assert bytes(sink.got) == want

    loop.run_until_complete(main())


def test_sock_sendfile_checks_its_arguments(loop, data_file):
    f, _ = data_file

    async def main():
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.setblocking(False)
        with pytest.raises(ValueError, match="SOCK_STREAM"):
            await loop.sock_sendfile(udp, f)
        udp.close()
        sock = socket.socket()
        sock.setblocking(False)
        with pytest.raises(ValueError, match="positive"):
            await loop.sock_sendfile(sock, f, 0, 0)
        with pytest.raises(ValueError, match="non-negative"):
            await loop.sock_sendfile(sock, f, -1)
        sock.close()

    loop.run_until_complete(main())


def test_sock_sendfile_cancelled_leaves_the_file_after_what_was_sent(loop, tmp_path):
    path = tmp_path / "big.bin"
    path.write_bytes(os.urandom(4 << 20))
    a, b = socket.socketpair()
    a.setblocking(False)

    async def main():
        with open(path, "rb") as f:
            task = asyncio.ensure_future(loop.sock_sendfile(a, f, 100))
            # The peer reads nothing: the kernel's buffer fills and the call
            # waits for the socket to drain.
            await asyncio.sleep(0.05)
            assert not task.done()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert loop._fd_count() == 0
            sent = f.tell() - 100
            assert 0 < sent < (4 << 20) - 100
            # Exactly the bytes past the offset that went out, in order.
            got = bytearray()
            b.setblocking(False)
            while True:
                try:
                    chunk = b.recv(1 << 20)
                except BlockingIOError:
                    break
                got += chunk
            assert bytes(got) == path.read_bytes()[100 : 100 + sent]

    loop.run_until_complete(main())
    a.close()
    b.close()


@pytest.mark.parametrize("native", [True, False], ids=["native", "fallback"])
@pytest.mark.parametrize("api", ["sendfile", "sock_sendfile"])
def test_sendfile_starts_and_leaves_the_file_position_as_the_running_python(
    loop, tmp_path, api, native
):
    """Python 3.14 changed where asyncio's sendfile reads from and leaves
    the file's position. Its native sendfile, from an offset at the file's
    end (nothing to send), leaves the position at that offset, where 3.13
    left it where the caller had it. Its fallbacks seek to the offset even
    when it is 0, where 3.13 read on from the file's current position.
    CPython 3.14's test_sendfile (test_sendfile_offset,
    test_sock_sendfile_offset) found pyloop keeping 3.13's behaviour."""
    path = tmp_path / "small.bin"
    path.write_bytes(b"abcdef")
    new = sys.version_info >= (3, 14)
    # (where the caller left the file, offset, what is sent, where it is after)
    if native:
        start, offset, want, after = 2, 6, b"", 6 if new else 2
    else:
        start, offset, want, after = 6, 0, b"abcdef" if new else b"", 6

    async def main():
        sink = Sink(loop)
        server = await loop.create_server(lambda: sink, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        with open(path, "rb") as f:
            f.seek(start)
            if api == "sendfile":
                tr, _ = await loop.create_connection(asyncio.Protocol, "127.0.0.1", port)
                if native:
                    n = await loop.sendfile(tr, f, offset)
                else:
                    n = await loop._sendfile_fallback(tr, f, offset, None)
                tr.close()
            else:
                sock = socket.socket()
                sock.setblocking(False)
                await loop.sock_connect(sock, ("127.0.0.1", port))
                if native:
                    n = await loop.sock_sendfile(sock, f, offset)
                else:
                    n = await loop._sock_sendfile_fallback(sock, f, offset, None)
                sock.close()
            assert (n, f.tell()) == (len(want), after)
        await sink.done
        server.close()
        assert bytes(sink.got) == want

    loop.run_until_complete(main())
