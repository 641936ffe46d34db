"""A client of the greppy daemon, to show that its protocol (PROTOCOL.md)
is a few dozen lines in another language. Needs the `msgpack` package.

    from greppy_client import Client
    with Client() as c:
        for path, line, text in c.search("retry_policy", "."):
            print(path, line, text)
"""

import os
import socket
import struct

import msgpack

VERSION = 2


def socket_path():
    """The socket of this user's daemon, as greppy computes it."""
    run = os.environ.get("XDG_RUNTIME_DIR")
    if run:
        return os.path.join(run, "greppy", "socket")
    return "/tmp/greppy-%d/socket" % os.getuid()


class Scan(Exception):
    """The index cannot answer this search: scan instead (`reason` says why
    when it is worth telling)."""


class Client:
    def __init__(self, path=None):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path or socket_path())
        self.buf = b""
        self.next_id = 0
        self.send({"type": "hello", "version": VERSION, "client": "greppy_client.py"})
        reply = self.recv()
        if reply["type"] != "hello":
            raise ConnectionError(reply)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.sock.close()

    def send(self, message):
        body = msgpack.packb(message, use_bin_type=True)
        self.sock.sendall(struct.pack(">I", len(body)) + body)

    def recv(self):
        while True:
            if len(self.buf) >= 4:
                (n,) = struct.unpack(">I", self.buf[:4])
                if len(self.buf) >= 4 + n:
                    message = msgpack.unpackb(self.buf[4 : 4 + n], raw=False)
                    self.buf = self.buf[4 + n :]
                    return message
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("the daemon closed the connection")
            self.buf += chunk

    def search(self, pattern, path=".", **flags):
        """The matching lines under `path`: (path, line number, text), with
        paths and text as bytes; with files=True, the matching files' paths.
        Other `flags`: fixed, ignore_case, smart_case, word, globs, types,
        limit, wait_ms (PROTOCOL.md)."""
        self.next_id += 1
        query = dict(flags, pattern=pattern, path=os.fsencode(os.path.realpath(path)))
        self.send({"type": "search", "id": self.next_id, "query": query})
        lines = []
        while True:
            m = self.recv()
            if m["type"] == "match":
                lines.append((m["path"], m["line"], m["text"]))
            elif m["type"] == "file":
                lines.append(m["path"])
            elif m["type"] == "done":
                self.fresh = m["fresh"]
                return lines
            elif m["type"] == "scan":
                raise Scan(m.get("reason"))
            else:
                raise RuntimeError(m)

    def find(self, query, path=".", limit=10):
        """Ranked search: (path, start line, end line, score, kind, name)
        for each hit, best first, definitions before other spans."""
        self.next_id += 1
        q = {"query": query, "path": os.fsencode(os.path.realpath(path)), "limit": limit}
        self.send({"type": "find", "id": self.next_id, "query": q})
        hits = []
        while True:
            m = self.recv()
            if m["type"] == "hit":
                hits.append((m["path"], m["start"], m["end"], m["score"], m["kind"], m["name"]))
            elif m["type"] == "done":
                return hits
            else:
                raise RuntimeError(m)
