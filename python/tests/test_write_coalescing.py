"""A socket transport's writes made while the loop runs callbacks leave
together at the end of the iteration: one system call for a response's
headers and body. These tests hold that to what asyncio's contract, and
programs written against asyncio's loop, expect."""

import asyncio
import socket

from conftest import syscall_calls

HEAD = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n"
BODY = b"hello"


class Recorder(asyncio.Protocol):
    def __init__(self):
        self.paused = 0
        self.lost = asyncio.get_running_loop().create_future()

    def connection_made(self, transport):
        self.t = transport

    def pause_writing(self):
        self.paused += 1

    def resume_writing(self):
        pass

    def connection_lost(self, exc):
        self.lost.set_result(exc)


async def pair(loop, proto=Recorder):
    """A transport on one end of a socketpair, and the other end (blocking,
    with a timeout) for the test to read."""
    a, b = socket.socketpair()
    b.settimeout(5)
    tr, pr = await loop.connect_accepted_socket(proto, a)
    return tr, pr, b


def recv_exactly(sock, n):
    got = b""
    while len(got) < n:
        chunk = sock.recv(n - len(got))
        assert chunk, got
        got += chunk
    return got


def test_the_writes_of_one_callback_leave_in_one_send():
    code = f"""
import asyncio, os, socket, threading, pyloop
HEAD, BODY = {HEAD!r}, {BODY!r}
class Server(asyncio.Protocol):
    def connection_made(self, t):
        self.t = t
    def data_received(self, data):
        self.t.write(HEAD)
        self.t.write(BODY)
def client(fd):
    for _ in range(200):
        os.write(fd, b"GET / HTTP/1.1\\r\\n\\r\\n")
        got = b""
        while len(got) < len(HEAD + BODY):
            got += os.read(fd, 4096)
        assert got == HEAD + BODY, got
async def main():
    a, b = socket.socketpair()
    tr, _ = await asyncio.get_running_loop().connect_accepted_socket(Server, a)
    await asyncio.to_thread(client, b.fileno())
    tr.close()
pyloop.run(main())
"""
    # The client thread uses write(2); the server's transport, send(2).
    sends = syscall_calls(code, "sendto", "sendmsg")
    assert 200 <= sends < 260, sends


def test_a_write_outside_the_running_loop_leaves_at_once(loop):
    tr, pr, b = loop.run_until_complete(pair(loop))
    tr.write(b"now")
    assert tr.get_write_buffer_size() == 0
    assert recv_exactly(b, 3) == b"now"
    tr.close()
    loop.run_until_complete(pr.lost)
    b.close()


def test_waiting_writes_keep_their_order_and_never_pause_the_protocol(loop):
    big = bytes(range(256)) * 1024  # 256 KiB: over the high-water mark

    async def main():
        tr, pr, b = await pair(loop)
        tr.set_write_buffer_limits(high=0)
        tr.write(b"small")
        # With no room under the mark, nothing waits: asyncio's behaviour.
        assert tr.get_write_buffer_size() == 0
        assert pr.paused == 0
        tr.set_write_buffer_limits()
        tr.write(b"a")
        tr.write(b"b")
        tr.write(big)  # too much to wait: all three go now, in order
        got = await asyncio.to_thread(recv_exactly, b, 5 + 2 + len(big))
        assert got == b"small" + b"ab" + big
        tr.close()
        await pr.lost
        b.close()

    loop.run_until_complete(main())


def test_close_and_abort_right_after_a_write(loop):
    async def main():
        tr, pr, b = await pair(loop)
        tr.write(b"all of it")
        tr.close()
        assert await asyncio.to_thread(recv_exactly, b, 9) == b"all of it"
        assert b.recv(1) == b""
        await pr.lost
        b.close()

        # abort() discards the buffer, but a write the kernel would have
        # taken at once still reaches the peer, as with asyncio's loop.
        tr, pr, b = await pair(loop)
        tr.write(b"goodbye")
        tr.abort()
        assert await asyncio.to_thread(recv_exactly, b, 7) == b"goodbye"
        await pr.lost
        b.close()

    loop.run_until_complete(main())
