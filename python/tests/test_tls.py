"""pyloop's TLS protocol (Rust, over ssl.SSLObject): what applications see
of it, on real sockets with the test CA's certificates."""

import asyncio
import os
import socket
import ssl
import threading

import pytest

import pyloop

from conftest import CERTS, syscall_calls, tls_contexts


async def echo_server(loop, server_ctx):
    async def handle(reader, writer):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=server_ctx)
    return server, server.sockets[0].getsockname()[1]


def test_the_transport_tells_what_was_negotiated(loop):
    server_ctx, client_ctx = tls_contexts()
    server_ctx.set_alpn_protocols(["h2", "http/1.1"])
    client_ctx.set_alpn_protocols(["http/1.1"])
    seen = {}

    async def main():
        server, port = await echo_server(loop, server_ctx)
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", port, ssl=client_ctx, server_hostname="localhost"
        )
        obj = writer.get_extra_info("ssl_object")
        seen["alpn"] = obj.selected_alpn_protocol()
        seen["version"] = obj.version()
        seen["cipher"] = writer.get_extra_info("cipher")
        seen["cn"] = writer.get_extra_info("peercert")["subject"]
        seen["sslcontext"] = writer.get_extra_info("sslcontext") is client_ctx
        seen["peername"] = writer.get_extra_info("peername")[1] == port
        # asyncio's private name for it, which aiohttp's tests read.
        seen["_sslcontext"] = writer.transport._ssl_protocol._sslcontext is client_ctx
        assert isinstance(writer.transport, asyncio.Transport)
        writer.close()
        await writer.wait_closed()
        server.close()
        await server.wait_closed()

    loop.run_until_complete(main())
    assert seen["alpn"] == "http/1.1"
    assert seen["version"].startswith("TLS")
    assert seen["cipher"] and seen["sslcontext"] and seen["peername"] and seen["_sslcontext"]
    assert seen["cn"] == ((("commonName", "localhost"),),)


def test_a_wrong_host_name_fails_the_handshake(loop):
    server_ctx, client_ctx = tls_contexts()

    async def main():
        server, port = await echo_server(loop, server_ctx)
        with pytest.raises(ssl.SSLCertVerificationError):
            await asyncio.open_connection(
                "127.0.0.1", port, ssl=client_ctx, server_hostname="not-the-name.example"
            )
        server.close()
        await server.wait_closed()

    errors = []
    loop.set_exception_handler(lambda lp, ctx: errors.append(ctx))
    loop.run_until_complete(main())


def test_a_failed_server_handshake_closes_that_connection_and_the_server_goes_on(loop):
    """Clients that speak no TLS: each connection is closed, the protocol
    never sees one, and the next client is served. As with asyncio's own
    loop, the exception handler hears of a failed handshake only in debug
    mode (a port scanner is no error of the application's)."""
    server_ctx, client_ctx = tls_contexts()
    errors = []
    made = []

    class Echo(asyncio.Protocol):
        def connection_made(self, transport):
            made.append(transport)
            self.t = transport

        def data_received(self, data):
            self.t.write(data)

    async def not_tls(port):
        raw = socket.create_connection(("127.0.0.1", port))
        raw.sendall(b"GET / HTTP/1.0\r\n\r\n" * 4)
        raw.setblocking(False)
        # The server ends the connection: an alert, then end of file.
        while await loop.sock_recv(raw, 4096):
            pass
        raw.close()

    async def main():
        server = await loop.create_server(Echo, "127.0.0.1", 0, ssl=server_ctx)
        port = server.sockets[0].getsockname()[1]
        await not_tls(port)
        assert errors == []
        loop.set_debug(True)
        await not_tls(port)
        loop.set_debug(False)
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", port, ssl=client_ctx, server_hostname="localhost"
        )
        writer.write(b"ok")
        assert await reader.readexactly(2) == b"ok"
        sock = made[0].get_extra_info("socket")
        assert sock.gettimeout() == 0.0
        assert not os.get_inheritable(sock.fileno())
        writer.close()
        await writer.wait_closed()
        server.close()
        await server.wait_closed()

    loop.set_exception_handler(lambda lp, ctx: errors.append(ctx))
    loop.run_until_complete(main())
    assert [c["message"] for c in errors] == ["Error on transport creation for incoming connection"]
    assert isinstance(errors[0]["exception"], ssl.SSLError)
    assert isinstance(errors[0]["protocol"], Echo)
    assert len(made) == 1


def test_client_certificates_are_required_and_checked(loop):
    server_ctx, client_ctx = tls_contexts()
    server_ctx.verify_mode = ssl.CERT_REQUIRED
    server_ctx.load_verify_locations(os.path.join(CERTS, "ca.pem"))
    peer = {}

    async def main():
        async def handle(reader, writer):
            peer["cert"] = writer.get_extra_info("peercert")
            writer.write(await reader.readexactly(2))
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=server_ctx)
        port = server.sockets[0].getsockname()[1]
        # Without a certificate: the server refuses the handshake.
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", port, ssl=client_ctx, server_hostname="localhost"
        )
        # TLS 1.3: the client learns of it at its first read.
        with pytest.raises((ssl.SSLError, ConnectionError, asyncio.IncompleteReadError)):
            writer.write(b"hi")
            await reader.readexactly(2)
        writer.close()
        # With one signed by the CA: accepted.
        client_ctx.load_cert_chain(os.path.join(CERTS, "cert.pem"), os.path.join(CERTS, "key.pem"))
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", port, ssl=client_ctx, server_hostname="localhost"
        )
        writer.write(b"ok")
        assert await reader.readexactly(2) == b"ok"
        writer.close()
        await writer.wait_closed()
        server.close()
        await server.wait_closed()

    loop.set_exception_handler(lambda lp, ctx: None)
    loop.run_until_complete(main())
    assert peer["cert"]["subject"] == ((("commonName", "localhost"),),)


def test_close_flushes_everything_written_first(loop):
    """close() right after a large write: the peer gets every byte, then
    close_notify (a clean TLS end of file)."""
    server_ctx, client_ctx = tls_contexts()
    payload = os.urandom(4 << 20)
    got = {}

    async def main():
        done = loop.create_future()

        async def handle(reader, writer):
            got["data"] = await reader.read()  # up to the TLS end of file
            writer.close()
            done.set_result(None)

        server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=server_ctx)
        port = server.sockets[0].getsockname()[1]
        _, writer = await asyncio.open_connection(
            "127.0.0.1", port, ssl=client_ctx, server_hostname="localhost"
        )
        writer.write(payload)
        writer.close()
        await writer.wait_closed()
        await done
        server.close()
        await server.wait_closed()

    loop.run_until_complete(main())
    assert got["data"] == payload


def _plain_tls_server(server_ctx, then):
    """A blocking TLS server in a thread: says hello, then runs `then`."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def run():
        conn, _ = listener.accept()
        listener.close()
        with server_ctx.wrap_socket(conn, server_side=True) as tls:
            then(tls)

    t = threading.Thread(target=run)
    t.start()
    return port, t


def test_data_before_the_peers_eof_reaches_a_paused_reader(loop):
    """The peer sends data, then a TCP end of file (no close_notify), while
    the application's reading is paused: the data is delivered when it
    resumes, then eof_received and connection_lost(None) (a bug: when the
    end of file was read before the resumed read ran, the data was lost)."""
    server_ctx, client_ctx = tls_contexts()
    sent = threading.Event()

    def then(tls):
        tls.sendall(b"hello")
        assert tls.recv(5) == b"world"
        tls.sendall(b"extra bytes")
        tls.shutdown(socket.SHUT_WR)
        sent.set()
        tls.recv(1)

    port, thread = _plain_tls_server(server_ctx, then)
    events = []

    class P(asyncio.Protocol):
        def connection_made(self, tr):
            self.tr = tr
            self.lost = loop.create_future()

        def data_received(self, data):
            events.append(data)
            if data == b"hello":
                self.tr.write(b"world")
                self.tr.pause_reading()

        def eof_received(self):
            events.append("eof")

        def connection_lost(self, exc):
            events.append(("lost", exc))
            self.lost.set_result(None)

    async def main():
        tr, proto = await loop.create_connection(
            P, "127.0.0.1", port, ssl=client_ctx, server_hostname="localhost"
        )
        await loop.run_in_executor(None, sent.wait)
        await asyncio.sleep(0.05)  # the end of file is read meanwhile
        tr.resume_reading()
        await asyncio.wait_for(proto.lost, 5)

    loop.run_until_complete(main())
    thread.join()
    assert events == [b"hello", b"extra bytes", "eof", ("lost", None)]


def test_a_reader_that_never_resumes_is_closed_after_the_grace(loop):
    server_ctx, client_ctx = tls_contexts()

    def then(tls):
        tls.sendall(b"hello")
        tls.sendall(b"never read")
        tls.shutdown(socket.SHUT_WR)
        tls.recv(1)

    port, thread = _plain_tls_server(server_ctx, then)

    class P(asyncio.Protocol):
        def connection_made(self, tr):
            self.lost = loop.create_future()
            tr.pause_reading()

        def connection_lost(self, exc):
            self.lost.set_result(exc)

    async def main():
        _, proto = await loop.create_connection(
            P, "127.0.0.1", port, ssl=client_ctx, server_hostname="localhost"
        )
        t0 = loop.time()
        exc = await asyncio.wait_for(proto.lost, 5)
        return exc, loop.time() - t0

    exc, waited = loop.run_until_complete(main())
    thread.join()
    assert exc is None and waited < 3


def test_start_tls_on_a_transport_closed_before_the_upgrade_returns_none(loop):
    """As asyncio: the SSL protocol loses its connection before any
    handshake, and start_tls returns None (aiohttp's connector turns that
    into ClientConnectorError; its tests check it)."""
    _, client_ctx = tls_contexts()

    async def main():
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen()
            transport, _ = await loop.create_connection(
                asyncio.Protocol, *listener.getsockname()
            )
        transport.close()
        return await loop.start_tls(
            transport, asyncio.Protocol(), client_ctx, server_hostname="localhost"
        )

    assert loop.run_until_complete(main()) is None


def test_a_streams_start_tls_takes_the_hello_its_reader_holds(loop):
    """A server that reads plain data, then upgrades with
    `StreamWriter.start_tls`, may have read the client's TLS hello into its
    reader already. That is where the TLS stream starts: it goes to the TLS
    protocol (gh-142352, as Python 3.14's asyncio does). Before, the
    handshake waited for a hello that had already come, and both sides
    hung (CPython 3.14's test_streams, test_start_tls_buffered_data)."""
    server_ctx, client_ctx = tls_contexts()

    async def handler(reader, writer):
        assert await reader.readline() == b"STARTTLS\n"
        # Wait until the client's hello is in the reader.
        while not reader._buffer:
            await reader._wait_for_data("hello")
        await writer.start_tls(server_ctx)
        assert await reader.readline() == b"ping\n"
        writer.write(b"pong\n")
        await writer.drain()
        writer.close()
        await writer.wait_closed()

    async def main():
        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        reader, writer = await asyncio.open_connection(*server.sockets[0].getsockname())
        writer.write(b"STARTTLS\n")
        await writer.drain()
        await writer.start_tls(client_ctx, server_hostname="localhost")
        writer.write(b"ping\n")
        assert await reader.readline() == b"pong\n"
        writer.close()
        await writer.wait_closed()
        server.close()
        await server.wait_closed()

    loop.run_until_complete(asyncio.wait_for(main(), 10))


@pytest.mark.parametrize("how", ["create_connection", "start_tls"])
def test_a_failed_certificate_leaves_no_cycle(how):
    """After a client's handshake fails on the server's certificate, the TLS
    protocol and transport are freed at once, not by a later collection
    (gh-159049; CPython 3.14's test_sslproto, *_failed_certificate_no_cycles).
    pyloop's `await waiter` kept the error, whose traceback held the frame
    that held the waiter: a cycle through both objects."""
    import gc

    server_ctx, client_ctx = tls_contexts()
    names = ("SSLProtocol", "SSLTransport")

    def alive():
        return sum(type(o).__name__ in names for o in gc.get_objects())

    async def main():
        loop = asyncio.get_running_loop()
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen()

            def serve():
                conn, _ = listener.accept()
                with conn:
                    try:
                        server_ctx.wrap_socket(conn, server_side=True)
                    except OSError:
                        pass

            t = threading.Thread(target=serve)
            t.start()
            with pytest.raises(ssl.SSLCertVerificationError):
                if how == "create_connection":
                    await loop.create_connection(
                        asyncio.Protocol, *listener.getsockname(), ssl=client_ctx,
                        server_hostname="wrong.example",
                    )
                else:
                    tr, proto = await loop.create_connection(asyncio.Protocol, *listener.getsockname())
                    try:
                        await loop.start_tls(tr, proto, client_ctx, server_hostname="wrong.example")
                    finally:
                        tr.close()
            t.join()

    gc.collect()
    gc.disable()
    try:
        before = alive()
        pyloop.run(main())
        assert alive() == before
    finally:
        gc.enable()


@pytest.mark.parametrize("close_first", [True, False], ids=["close-then-eof", "eof-only"])
def test_the_shutdown_timeout_ends_a_close_that_a_peer_which_does_not_read_blocks(loop, close_first):
    """A peer sends its end of file and never reads; what the client wrote
    fills the socket. The close (the client's, or the one that follows the
    peer's end of file) waits for that to drain, and would wait forever:
    `ssl_shutdown_timeout` stays armed until the connection is lost, and
    ends it with TimeoutError, as Python 3.14's asyncio does (CPython's
    test_ssl, test_shutdown_timeout_after_eof_from_not_reading_peer). The
    TLS transport says it is closing once the one beneath is."""
    server_ctx, client_ctx = tls_contexts()
    filled, done = threading.Event(), threading.Event()

    class Client(asyncio.Protocol):
        def __init__(self):
            self.lost = loop.create_future()
            self.paused = False

        def pause_writing(self):
            self.paused = True

        def resume_writing(self):
            self.paused = False

        def connection_lost(self, exc):
            if not self.lost.done():
                self.lost.set_result(exc)

    async def main():
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen()

            def serve():
                conn, _ = listener.accept()
                with server_ctx.wrap_socket(conn, server_side=True) as tls:
                    filled.wait(10)
                    tls.shutdown(socket.SHUT_WR)  # end of file, and no reading
                    done.wait(10)

            t = threading.Thread(target=serve)
            t.start()
            tr, pr = await loop.create_connection(
                Client, *listener.getsockname(), ssl=client_ctx,
                server_hostname="localhost", ssl_shutdown_timeout=0.1,
            )
            try:
                for _ in range(64):
                    if pr.paused:
                        break
                    tr.write(bytes(1 << 20))
                    await asyncio.sleep(0)
                assert pr.paused
                if close_first:
                    tr.close()
                filled.set()
                exc = await asyncio.wait_for(pr.lost, 10)
                assert isinstance(exc, TimeoutError)
                assert tr.is_closing()
            finally:
                filled.set()
                done.set()
                tr.abort()
                t.join()

    loop.run_until_complete(main())


def test_tls_inside_tls(loop):
    """start_tls over a TLS transport: two layers of pyloop's protocol."""
    outer_server, outer_client = tls_contexts()
    inner_server, inner_client = tls_contexts()

    async def main():
        async def handle(reader, writer):
            await writer.start_tls(inner_server)
            writer.write(await reader.readexactly(5))
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=outer_server)
        port = server.sockets[0].getsockname()[1]
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", port, ssl=outer_client, server_hostname="localhost"
        )
        await writer.start_tls(inner_client, server_hostname="localhost")
        writer.write(b"inner")
        echoed = await reader.readexactly(5)
        writer.close()
        server.close()
        await server.wait_closed()
        return echoed

    assert loop.run_until_complete(main()) == b"inner"


def test_reading_small_records_maps_no_memory_per_record(tmp_path):
    """strace: decrypting a 1 KiB message asks `SSLObject.read` for no more
    than can be there. Asking for 256 KiB each time made CPython allocate
    (mmap) and free (munmap) a 256 KiB object per record, which cost more
    than the decryption."""
    code = f"""
import asyncio, os, ssl, pyloop
server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
server_ctx.load_cert_chain({os.path.join(CERTS, "cert.pem")!r}, {os.path.join(CERTS, "key.pem")!r})
client_ctx = ssl.create_default_context(cafile={os.path.join(CERTS, "ca.pem")!r})
class Echo(asyncio.Protocol):
    def connection_made(self, t): self.t = t
    def data_received(self, d): self.t.write(d)
async def main():
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Echo, "127.0.0.1", 0, ssl=server_ctx)
    port = server.sockets[0].getsockname()[1]
    r, w = await asyncio.open_connection("127.0.0.1", port, ssl=client_ctx, server_hostname="localhost")
    for _ in range(300):
        w.write(b"x" * 1024)
        await r.readexactly(1024)
    w.close()
    server.close()
pyloop.run(main())
"""
    calls = syscall_calls(code, "munmap")
    # Start-up and imports unmap some; 300 round trips must not add 300.
    assert calls < 150, calls


def test_a_server_sends_its_session_tickets_with_the_first_answer():
    """strace: the handshake's last flight (a TLS 1.3 server's session
    tickets) goes out with what the application writes first, in one send:
    two sends per connection (the server's first flight, then tickets with
    the echo), not three."""
    code = f"""
import asyncio, os, ssl, subprocess, sys, pyloop
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain({os.path.join(CERTS, "cert.pem")!r}, {os.path.join(CERTS, "key.pem")!r})
CLIENT = '''
import socket, ssl, sys
ctx = ssl.create_default_context(cafile=sys.argv[2])
for _ in range(50):
    # A memory-BIO client, so that its Finished and its first data leave
    # in one send, as a client that writes at once after the handshake
    # often manages.
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname="localhost")
    while True:
        try:
            obj.do_handshake()
            break
        except ssl.SSLWantReadError:
            s.sendall(out.read())
            inc.write(s.recv(65536))
    obj.write(b"x")
    s.sendall(out.read())
    while True:
        try:
            assert obj.read(1) == b"x"
            break
        except ssl.SSLWantReadError:
            inc.write(s.recv(65536))
    s.close()
'''
class Echo(asyncio.Protocol):
    def connection_made(self, t): self.t = t
    def data_received(self, d): self.t.write(d)
async def main():
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Echo, "127.0.0.1", 0, ssl=ctx)
    port = server.sockets[0].getsockname()[1]
    client = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CLIENT, str(port), {os.path.join(CERTS, "ca.pem")!r})
    assert await client.wait() == 0
    server.close()
pyloop.run(main())
"""
    sends = syscall_calls(code, "sendto", "write", children=False)
    assert sends <= 50 * 2 + 20, sends


def test_the_handshake_leaves_nothing_in_the_applications_write_buffer(loop):
    # pyloop sends the handshake's last flight with the first read; until
    # then it is not the application's to count. With a high-water mark of
    # 1, asyncio's loop calls no pause_writing for a connection that wrote
    # nothing (found by tests/test_fuzz_transports.py: pyloop counted the
    # client's 80-byte Finished).
    server_ctx, client_ctx = tls_contexts()
    events = []

    class W(asyncio.Protocol):
        def pause_writing(self):
            events.append("pause")

        def resume_writing(self):
            events.append("resume")

    async def main():
        srv = await loop.create_server(asyncio.Protocol, "127.0.0.1", 0, ssl=server_ctx)
        port = srv.sockets[0].getsockname()[1]
        tr, _ = await loop.create_connection(
            W, "127.0.0.1", port, ssl=client_ctx, server_hostname="localhost"
        )
        size = tr.get_write_buffer_size()
        tr.set_write_buffer_limits(high=1)
        tr.close()
        srv.close()
        await srv.wait_closed()
        return size

    assert loop.run_until_complete(main()) == 0
    assert events == []
