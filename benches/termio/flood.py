#!/usr/bin/env python3
"""The program in the PTY for termio's echo benchmark.

Raw mode, no echo by the terminal: every byte typed is written back by this
program (a `stty raw -echo; cat`), behind whatever output it has already
written, as a real program's would be. Meanwhile it floods the terminal
with ANSI-rich output (colours, cursor moves, hyperlinks, box drawing,
multibyte text) at RATE bytes a second (0: no flood).

It writes once a tick (every 2 ms) what the rate owes since the last, as
a program that draws at a frame rate does, and sleeps in between. Its
writes behave as a blocking writer's: it queues at most one 16 KiB
write and one tick's output (64 KiB at most) of its own; while the terminal's reader does not take that, the flood
waits (and owes nothing: no burst to catch up afterwards). It never sleeps
on a timer for input: it blocks in select() on the terminal and on the
next flood tick.

Usage: flood.py RATE
"""
import os
import select
import sys
import time
import tty

TICK = 0.002
WRITE = 16384
# The most one tick adds: a 10 MB/s flood owes 20 KB every 2 ms tick.
BURST = 65536


def corpus(size):
    """An agent's output, without '@' (the probes' mark)."""
    out = bytearray()
    i = 0
    while len(out) < size:
        i += 1
        k = i % 5
        if k == 0:
            line = f"\x1b[38;5;{i % 256}m\u25cf\x1b[0m Reading \x1b[1msrc/module_{i}.rs\x1b[0m ({i % 977} lines)\r\n"
        elif k == 1:
            line = f"  \u2502 fn handler_{i}(req: &Request) -> Result<Response> {{  // \u00e9t\u00e9 \u4e2d\u6587\r\n"
        elif k == 2:
            line = f"\x1b[2K\x1b[1G\x1b[36m\u280b\x1b[0m Thinking\u2026 ({i % 60}s \u00b7 esc to interrupt)\r\n"
        elif k == 3:
            line = f"\x1b]8;;file:///src/m{i}.rs\x07m{i}.rs\x1b]8;;\x07 +{i % 40} -{i % 7}\r\n"
        else:
            line = ("\u256d" + "\u2500" * 60 + "\u256e\r\n\u2502 \x1b[33mwarning\x1b[0m: unused variable `x_"
                    + str(i) + "`" + " " * 20 + "\u2502\r\n")
        out += line.encode()
    return bytes(out)


def main():
    rate = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0
    tty.setraw(0)
    os.set_blocking(1, False)
    text = corpus(1 << 20)
    at = 0
    pending = bytearray(b"\x1b[0mready\r\n")
    last = time.monotonic()
    tick = last
    credit = 0.0
    while True:
        now = time.monotonic()
        if rate > 0 and now >= tick:
            # A tick: what the flood owes since the last one, unless a
            # write is still queued (then it waits, and owes nothing).
            if len(pending) < WRITE:
                credit = min(credit + (now - last) * rate, BURST)
                due = int(credit)
                credit -= due
                if due > 0:
                    end = at + due
                    if end <= len(text):
                        pending += text[at:end]
                    else:
                        pending += text[at:] + text[: end - len(text)]
                    at = end % len(text)
            last = now
            tick = now + TICK
        timeout = max(0.0, tick - now) if rate > 0 else None
        r, w, _ = select.select([0], [1] if pending else [], [], timeout)
        if r:
            try:
                data = os.read(0, 4096)
            except OSError:
                return
            if not data:
                return
            pending += data
        if pending:
            try:
                n = os.write(1, pending)
            except BlockingIOError:
                n = 0
            except OSError:
                return
            del pending[:n]


if __name__ == "__main__":
    main()
