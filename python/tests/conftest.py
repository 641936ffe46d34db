"""What the test modules share: the loop fixture and the test certificates."""

import os
import ssl

import pytest

import pyloop

CERTS = os.path.join(os.path.dirname(__file__), "certs")


@pytest.fixture
def loop():
    lp = pyloop.new_event_loop()
    yield lp
    if not lp.is_closed():
        lp.run_until_complete(lp.shutdown_asyncgens())
        lp.close()


def tls_contexts():
    """A server context with the test certificate (CN localhost), and a
    client context that trusts the test CA."""
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(os.path.join(CERTS, "cert.pem"), os.path.join(CERTS, "key.pem"))
    client = ssl.create_default_context(cafile=os.path.join(CERTS, "ca.pem"))
    return server, client


def syscall_calls(code, *names, children=True):
    """How many calls of the system calls `names` a Python process running
    `code` makes, summed (`strace -c`, following child processes when
    `children`). Fails the test where strace is missing. Start-up and
    imports make some; tests compare against a per-operation count."""
    import shutil
    import subprocess
    import sys

    if shutil.which("strace") is None:
        pytest.fail("strace is not installed: apt-get install strace")
    cmd = ["strace", "-c", "-e", "trace=" + ",".join(names)]
    if children:
        cmd.insert(1, "-f")
    out = subprocess.run(
        [*cmd, sys.executable, "-P", "-c", code], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr[-3000:]
    total = 0
    for ln in out.stderr.splitlines():
        parts = ln.split()
        if parts and parts[-1] in names:
            total += int(parts[3])
    return total
