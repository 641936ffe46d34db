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
