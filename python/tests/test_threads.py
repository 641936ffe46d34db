"""pyloop and threads: many threads calling into one loop, and many loops
running at once, one per thread.

On a free-threaded CPython (3.14t, `Py_GIL_DISABLED`) these threads run in
parallel, and pyloop's state is guarded by locks instead of the GIL: these
tests are what shows that no callback is lost, run twice or run out of
order there. On a CPython with the GIL they check the same contract.
"""

import asyncio
import socket
import sys
import sysconfig
import threading

import pytest

import pyloop

FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


def test_the_free_threaded_build_keeps_the_gil_off():
    """pyloop declares that it needs no GIL: importing it into a
    free-threaded interpreter leaves the GIL off."""
    if not FREE_THREADED:
        pytest.skip("a CPython with the GIL")
    assert not sys._is_gil_enabled()


def test_call_soon_threadsafe_from_many_threads_runs_every_callback_once_in_order(loop):
    """Eight threads call `call_soon_threadsafe` at once while the loop
    runs. Four send bursts; the other four send one callback at a time and
    wait for it to run, so that the loop also blocks and must be woken
    while the bursts go on. Every callback runs once, on the loop's thread,
    and each thread's in the order it made them."""
    bursts, pingers, per = 4, 4, 20_000
    pings = 500
    seen = [[] for _ in range(bursts + pingers)]
    loop_thread = threading.get_ident()
    elsewhere = []
    total = bursts * per + pingers * pings
    count = [0]
    done = loop.create_future()

    def cb(t, i, ran=None):
        if threading.get_ident() != loop_thread:
            elsewhere.append(t)
        seen[t].append(i)
        count[0] += 1
        if ran is not None:
            ran.set()
        if count[0] == total:
            done.set_result(None)

    start = threading.Barrier(bursts + pingers)

    def burst(t):
        start.wait()
        for i in range(per):
            loop.call_soon_threadsafe(cb, t, i)

    def ping(t):
        start.wait()
        ran = threading.Event()
        for i in range(pings):
            ran.clear()
            loop.call_soon_threadsafe(cb, t, i, ran)
            assert ran.wait(30)

    threads = [threading.Thread(target=burst, args=(t,)) for t in range(bursts)]
    threads += [threading.Thread(target=ping, args=(bursts + t,)) for t in range(pingers)]
    for th in threads:
        th.start()
    loop.run_until_complete(asyncio.wait_for(done, 60))
    for th in threads:
        th.join()
    assert not elsewhere
    assert count[0] == total
    for t in range(bursts):
        assert seen[t] == list(range(per))
    for t in range(bursts, bursts + pingers):
        assert seen[t] == list(range(pings))


def test_run_coroutine_threadsafe_from_many_threads(loop):
    """`asyncio.run_coroutine_threadsafe` from eight threads at once, each
    waiting for its results: every coroutine runs on the loop and each
    thread gets its own results back."""
    per = 300
    results = {}

    async def double(x):
        await asyncio.sleep(0)
        return 2 * x

    def client(t):
        got = []
        for i in range(per):
            fut = asyncio.run_coroutine_threadsafe(double(t * per + i), loop)
            got.append(fut.result(30))
        results[t] = got

    async def main():
        threads = [threading.Thread(target=client, args=(t,)) for t in range(8)]
        for th in threads:
            th.start()
        await loop.run_in_executor(None, lambda: [th.join() for th in threads])

    loop.run_until_complete(main())
    for t in range(8):
        assert results[t] == [2 * (t * per + i) for i in range(per)]


def test_cancelling_handles_from_the_threads_that_made_them(loop):
    """Four threads schedule callbacks at once and cancel every other one
    of their own handles, before the loop runs them: exactly the ones not
    cancelled run, in each thread's order."""
    per = 5_000
    ran = []

    def produce(t):
        handles = [loop.call_soon_threadsafe(ran.append, (t, i)) for i in range(per)]
        for h in handles[1::2]:
            h.cancel()

    threads = [threading.Thread(target=produce, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    loop.run_until_complete(asyncio.sleep(0))
    for t in range(4):
        assert [i for u, i in ran if u == t] == list(range(0, per, 2))


def _one_loop(k, loops, inboxes, barrier, out):
    """The work of one thread in the test below: its own loop, serving TCP
    echo to itself, timers, tasks, and callbacks to its neighbour's loop."""
    lp = pyloop.new_event_loop()
    loops[k] = lp

    class Echo(asyncio.Protocol):
        def connection_made(self, transport):
            self.t = transport

        def data_received(self, data):
            self.t.write(data)

    async def main():
        server = await lp.create_server(Echo, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.transport.get_extra_info("socket").setsockopt(
            socket.IPPROTO_TCP, socket.TCP_NODELAY, 1
        )
        barrier.wait()
        neighbour = loops[(k + 1) % len(loops)]
        # Runs on the neighbour's loop, so only its thread touches its inbox.
        inbox = inboxes[(k + 1) % len(loops)]
        echoed = 0
        for i in range(300):
            msg = bytes([k]) * (100 + i)
            writer.write(msg)
            assert await reader.readexactly(len(msg)) == msg
            echoed += 1
            neighbour.call_soon_threadsafe(inbox.append, (k, i))
        slept = await asyncio.gather(*(asyncio.sleep(0.001 * (j % 5), j) for j in range(200)))
        writer.close()
        await writer.wait_closed()
        server.close()
        await server.wait_closed()
        # Every loop's callbacks to this one have been sent once all are
        # past their echoes: the second barrier, then one more turn here.
        await lp.run_in_executor(None, barrier.wait)
        await asyncio.sleep(0)
        return echoed, slept

    try:
        echoed, slept = lp.run_until_complete(main())
        out[k] = (echoed, slept, list(inboxes[k]))
    except BaseException as e:
        out[k] = e
        barrier.abort()
    finally:
        lp.close()


def test_loops_in_many_threads_run_at_once():
    """Four threads each run a loop of their own at the same time: a TCP
    echo server and client on it, 200 timers, and `call_soon_threadsafe`
    into the next thread's loop. Every loop does all of its work, and each
    gets exactly the callbacks its neighbour sent it, in order."""
    n = 4
    loops = [None] * n
    out = [None] * n
    inboxes = [[] for _ in range(n)]
    barrier = threading.Barrier(n, timeout=60)
    threads = [threading.Thread(target=_one_loop, args=(k, loops, inboxes, barrier, out)) for k in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
        assert not th.is_alive()
    for k in range(n):
        if isinstance(out[k], BaseException):
            raise out[k]
        echoed, slept, got = out[k]
        assert echoed == 300
        assert slept == list(range(200))
        sender = (k - 1) % n
        assert got == [(sender, i) for i in range(300)]
