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


def munmap_calls(code):
    """How many `munmap` calls a Python process running `code` makes
    (strace -f -c), or None without strace. Start-up and imports make some;
    tests compare against a per-operation count."""
    import shutil
    import subprocess
    import sys

    if shutil.which("strace") is None:
        return None
    out = subprocess.run(
        ["strace", "-f", "-c", "-e", "trace=munmap", sys.executable, "-P", "-c", code],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    line = next((ln for ln in out.stderr.splitlines() if ln.rstrip().endswith("munmap")), "")
    return int(line.split()[3]) if line else 0
