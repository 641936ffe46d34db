#!/usr/bin/env python3
"""The relay's reference row: `cat FILE` in a raw PTY, read by a blocking
loop of 64 KiB reads with nothing else (no socket, no client, no copy
kept). A PTY hands its reader at most 4 KiB a read, each refilled by the
kernel's tty worker, so this is what the terminal itself gives on this
machine at the moment. Prints {"ns", "bytes", "cpu_ns", "reads"} as JSON:
the time from the fork to the last byte, and this reader's CPU time.

With `--send PORT`, each read goes on, as it is, to a TCP connection to
127.0.0.1:PORT (the bench's client): the least a relay can do, with no
protocol and no batching, so that the client's share of two cores is in
the figure too.

Usage: ptyfloor.py FILE [--send PORT]
"""
import json
import os
import pty
import socket
import sys
import time
import tty


def main():
    path = sys.argv[1]
    size = os.path.getsize(path)
    out = None
    if sys.argv[2:3] == ["--send"]:
        out = socket.create_connection(("127.0.0.1", int(sys.argv[3])))
        out.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    t = time.perf_counter_ns()
    cpu = time.process_time_ns()
    pid, fd = pty.fork()
    if pid == 0:
        tty.setraw(0)
        os.execvp("cat", ["cat", path])
    n = 0
    reads = 0
    while n < size:
        try:
            b = os.read(fd, 65536)
        except OSError:
            break
        if not b:
            break
        n += len(b)
        reads += 1
        if out is not None:
            out.sendall(b)
    ns = time.perf_counter_ns() - t
    cpu = time.process_time_ns() - cpu
    os.waitpid(pid, 0)
    if out is not None:
        out.close()
    print(json.dumps({"ns": ns, "bytes": n, "cpu_ns": cpu, "reads": reads}))


if __name__ == "__main__":
    main()
