"""A manager with TLS and bearer tokens: events flow with the token (and their delivery tokens
come back with the acks), or with a client certificate; without credentials the stream is
refused with UNAUTHENTICATED and nothing is received."""

import os
import subprocess

import pytest

from sluice_client import Receiver, producer
from support.manager import Database, Manager, queue_table, states
from support.wait import wait_until

pytestmark = pytest.mark.integration

TOKEN = "py-token-0123456789"


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_certificates(d):
    """A CA, the manager's certificate for localhost, and a client certificate (CN=py-client)."""
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca-key.pem", "-out",
            "ca.pem", "-days", "2", "-subj", "/CN=sluice-py-test-ca", cwd=d)
    for name, subject, ext in (
        ("server", "/CN=localhost", "subjectAltName=DNS:localhost,IP:127.0.0.1"),
        ("client", "/CN=py-client", "extendedKeyUsage=clientAuth"),
    ):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}-key.pem", "-out",
                f"{name}.csr", "-subj", subject, cwd=d)
        with open(os.path.join(d, f"{name}.ext"), "w") as f:
            f.write(ext + "\n")
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem",
                "-CAcreateserial", "-out", f"{name}.pem", "-days", "2", "-extfile", f"{name}.ext",
                cwd=d)


@pytest.fixture(scope="module")
def secure(jar, tmp_path_factory):
    if subprocess.run(["which", "openssl"], capture_output=True).returncode != 0:
        pytest.skip("integration test skipped: openssl is not installed")
    d = str(tmp_path_factory.mktemp("tls"))
    make_certificates(d)
    with open(os.path.join(d, "token.txt"), "w") as f:
        f.write(TOKEN)
    db = Database("sluice_py_tls")
    config = f"""tls:
  cert: {d}/server.pem
  key: {d}/server-key.pem
  client_ca: {d}/ca.pem
  client_auth: optional
auth:
  principals:
    - name: py-app
      token_file: {d}/token.txt
      grants:
        - queues: ["*"]
          actions: [subscribe]
    - name: py-cert
      cert_subject: "CN=py-client"
      grants:
        - queues: ["*"]
          actions: [subscribe]
"""
    m = Manager(jar, db.name, d, "secure", extra_config=config).start()
    yield db, m, d
    m.stop()
    db.drop()


def insert(db, queue, n):
    db.execute(queue_table(queue, ["v INT"], "ack_wait=10s"))
    with db.connect() as c:
        for i in range(n):
            producer.insert(c, queue, {"v": i})


def test_events_flow_over_tls_with_the_token(secure):
    db, m, d = secure
    insert(db, "with_token", 5)
    got = []
    with Receiver([m.target], "with_token", got.append, receiver_id="tls-token",
                  tls_ca=f"{d}/ca.pem", tls_server_name="localhost", token=TOKEN):
        wait_until(lambda: states(db, "with_token") == {2: 5}, 30, "every row acked")
    assert len(got) == 5 and all(e.delivery_token for e in got)


def test_events_flow_with_a_client_certificate(secure):
    db, m, d = secure
    insert(db, "with_cert", 3)
    with Receiver([m.target], "with_cert", lambda e: None, receiver_id="tls-cert",
                  tls_ca=f"{d}/ca.pem", tls_cert=f"{d}/client.pem",
                  tls_key=f"{d}/client-key.pem"):
        wait_until(lambda: states(db, "with_cert") == {2: 3}, 30, "every row acked")


@pytest.mark.parametrize("token", [None, "wrong-token"])
def test_without_valid_credentials_the_stream_is_refused(secure, token):
    db, m, d = secure
    queue = f"refused_{'none' if token is None else 'wrong'}"
    insert(db, queue, 2)
    got, errors = [], []
    with Receiver([m.target], queue, got.append, receiver_id="tls-anonymous",
                  tls_ca=f"{d}/ca.pem", token=token, on_stream_error=errors.append) as r:
        wait_until(lambda: len(errors) >= 2, 20, "refusals, retried")
        assert not r.wait_subscribed(0.1)
    assert {e.code for e in errors} == {"UNAUTHENTICATED"}
    assert got == [] and states(db, queue) == {0: 2}


def test_plain_text_to_a_tls_manager_fails_and_is_retried(secure):
    db, m, d = secure
    errors = []
    with Receiver([m.target], "with_token", lambda e: None, receiver_id="tls-plain",
                  token=TOKEN, on_stream_error=errors.append):
        wait_until(lambda: len(errors) >= 2, 20, "failures, retried")
    assert {e.code for e in errors} == {"UNAVAILABLE"}
