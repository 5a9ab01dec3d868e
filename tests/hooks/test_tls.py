"""An https attempt goes to the checked address yet verifies the certificate of the host name."""

from __future__ import annotations

import datetime
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from hooks import sender
from tests.hooks.conftest import fake_dns


def _certificate(tmp: Path, name: str) -> tuple[Path, Path]:
    """A self-signed certificate for `name`: its PEM and its key's PEM."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp / "cert.pem", tmp / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path


@pytest.fixture
def tls_receiver(tmp_path: Path) -> Iterator[tuple[int, Path, list[str]]]:
    """An https receiver on 127.0.0.1 whose certificate names `localhost`; it records the SNI asked for."""
    cert, key = _certificate(tmp_path, "localhost")
    names: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    context.sni_callback = lambda sock, name, ctx: names.append(name or "")  # type: ignore[assignment]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server.server_address[1], cert, names
    server.shutdown()
    server.server_close()


def _send(port: int, monkeypatch: pytest.MonkeyPatch) -> sender.Outcome:
    # localhost as 127.0.0.1 (not ::1 first, where nothing listens); the connect asks for 127.0.0.1 too
    fake_dns(monkeypatch, {"localhost": "127.0.0.1", "127.0.0.1": "127.0.0.1"})
    return sender.send(
        url=f"https://localhost:{port}/hook", secret="whsec_" + "A" * 32, message_id="msg_1", body="{}",
        timestamp=1, debug=True,
    )  # fmt: skip


def test_a_certificate_no_trusted_authority_signed_is_refused(tls_receiver, monkeypatch):
    port, _, _ = tls_receiver
    outcome = _send(port, monkeypatch)
    assert outcome.status is None and "CERTIFICATE_VERIFY_FAILED" in outcome.error


def test_it_verifies_the_host_names_certificate_over_the_pinned_address(tls_receiver, monkeypatch):
    port, cert, names = tls_receiver
    trusting = ssl.create_default_context(cafile=str(cert))
    monkeypatch.setattr(sender.httpx, "create_ssl_context", lambda: trusting)
    assert _send(port, monkeypatch).status == 200
    assert names == ["localhost"], "the TLS server name is the host's, not the address connected to"
