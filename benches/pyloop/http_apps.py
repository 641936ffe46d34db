"""The HTTP servers `cargo xtask bench pyloop` loads with wrk, on each loop.

    python http_apps.py uvicorn LOOP FD     # uvicorn + httptools, ASGI app below
    python http_apps.py aiohttp LOOP FD     # aiohttp's web server
    python http_apps.py protocol LOOP FD    # an asyncio.Protocol, no framework
    python http_apps.py floor - FD          # no loop, no parser: the floor

FD is a listening socket the caller made and passed on: requests wait in
its backlog until the server takes them, so the caller needs no polling to
know when it is up.

Routes: `/` answers "Hello, world!"; `/json` answers a 64 KiB JSON document
(a list of records), serialised per request, as an API would.
"""

from __future__ import annotations

import asyncio
import json
import sys

RECORDS = [
    {"id": i, "name": f"user-{i:05d}", "email": f"user{i}@example.com", "active": i % 3 != 0}
    for i in range(800)
]


def json_body():
    body = json.dumps(RECORDS).encode()
    return body


assert 60_000 < len(json_body()) < 70_000, len(json_body())

HELLO = b"Hello, world!"


async def app(scope, receive, send):
    """A bare ASGI app (no framework): what uvicorn itself costs."""
    if scope["type"] == "lifespan":
        while True:
            msg = await receive()
            if msg["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif msg["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["path"] == "/json":
        body, ctype = json_body(), b"application/json"
    else:
        body, ctype = HELLO, b"text/plain"
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", ctype), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


# The listen backlog of every server here, uvicorn's default. asyncio's and
# aiohttp's defaults (100, 128) are shorter than the 256 connections wrk
# opens at once: the kernel then drops the handshake's last ACK of some, and
# their first request waits for a retransmission (a 30-70 ms p99 in a round,
# on any loop, at random).
BACKLOG = 2048

LOOPS = {
    "pyloop": "pyloop:new_event_loop",
    "uvloop": "uvloop",
    "rloop": "rloop:new_event_loop",
    "asyncio": "asyncio",
}


def new_loop(name):
    if name == "asyncio":
        return asyncio.SelectorEventLoop()
    module = __import__(name)
    return module.new_event_loop()


def run_uvicorn(loop_name, fd):
    import socket

    import uvicorn

    # The socket object is made here, not with uvicorn's `fd=`: uvicorn takes
    # an fd for a Unix socket, and then never sets TCP_NODELAY on the
    # connections, which costs every response a 40 ms delayed ACK.
    sock = socket.socket(fileno=fd)
    config = uvicorn.Config(
        app,
        loop=LOOPS[loop_name],
        http="httptools",
        access_log=False,
        log_level="warning",
        lifespan="off",
    )
    uvicorn.Server(config).run(sockets=[sock])


def run_aiohttp(loop_name, fd):
    import socket

    from aiohttp import web

    async def hello(request):
        return web.Response(body=HELLO, content_type="text/plain")

    async def data(request):
        return web.Response(body=json_body(), content_type="application/json")

    webapp = web.Application()
    webapp.router.add_get("/", hello)
    webapp.router.add_get("/json", data)
    loop = new_loop(loop_name)
    asyncio.set_event_loop(loop)
    sock = socket.socket(fileno=fd)
    web.run_app(webapp, sock=sock, loop=loop, access_log=None, print=None, backlog=BACKLOG)


def canned_hello():
    """The whole hello response, as the floor and the protocol server send it."""
    return (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n"
        + b"content-length: %d\r\n\r\n" % len(HELLO)
        + HELLO
    )


def run_protocol(loop_name, fd):
    """What the loop alone costs per request: a bare `asyncio.Protocol` on
    the loop that answers each request's blank line with the canned hello
    response, as the floor does, with no parser and no framework."""
    import socket

    response = canned_hello()

    class Hello(asyncio.Protocol):
        def connection_made(self, transport):
            self.transport = transport
            self.pending = b""

        def data_received(self, data):
            self.pending += data
            while b"\r\n\r\n" in self.pending:
                _, self.pending = self.pending.split(b"\r\n\r\n", 1)
                self.transport.write(response)

    loop = new_loop(loop_name)
    asyncio.set_event_loop(loop)
    sock = socket.socket(fileno=fd)

    async def serve():
        # Serving from create_server on, then waiting: rloop 0.5's
        # `serve_forever` on a server made from a socket accepts nothing.
        await loop.create_server(Hello, sock=sock, backlog=BACKLOG)
        await loop.create_future()

    try:
        loop.run_until_complete(serve())
    finally:
        loop.close()


def run_floor(_loop_name, fd):
    """The floor for one connection: blocking sockets, one connection at a
    time, and the hello response sent whole for each request's blank line,
    with no parsing and no loop. What is left is the round trip through wrk
    and the kernel, and Python's recv and sendall."""
    import socket

    response = canned_hello()
    lsock = socket.socket(fileno=fd)
    while True:
        conn, _ = lsock.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        pending = b""
        with conn:
            while True:
                try:
                    data = conn.recv(65536)
                except OSError:
                    break
                if not data:
                    break
                pending += data
                while b"\r\n\r\n" in pending:
                    _, pending = pending.split(b"\r\n\r\n", 1)
                    conn.sendall(response)


if __name__ == "__main__":
    server, loop_name, fd = sys.argv[1], sys.argv[2], int(sys.argv[3])
    servers = {
        "uvicorn": run_uvicorn,
        "aiohttp": run_aiohttp,
        "protocol": run_protocol,
        "floor": run_floor,
    }
    servers[server](loop_name, fd)
