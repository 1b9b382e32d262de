"""Makes the package importable from the checkout, generating its protobuf modules first when
they are missing or older than sluice.proto (clients/python/generate decides)."""

import hashlib
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_ROOT = os.path.dirname(HERE)

subprocess.run([os.path.join(PACKAGE_ROOT, "generate")], check=True)
if PACKAGE_ROOT not in sys.path:
    sys.path.insert(0, PACKAGE_ROOT)

import pytest  # noqa: E402

from support import manager as _m  # noqa: E402


def _unavailable(why):
    """Skips the test, saying why; in CI (SLUICE_PY_REQUIRE_INTEGRATION=1) fails it instead, so
    that a missing database or jar cannot pass for a green run."""
    if os.environ.get("SLUICE_PY_REQUIRE_INTEGRATION") == "1":
        pytest.fail(f"integration test cannot run: {why}", pytrace=False)
    pytest.skip(f"integration test skipped: {why}")


@pytest.fixture(scope="session")
def database():
    """This run's fresh database on the local server (dropped at the end); skips the test,
    saying why, when there is no server."""
    try:
        _m.check_database()
    except _m.Unavailable as e:
        _unavailable(e)
    db = _m.Database()
    yield db
    db.drop()


@pytest.fixture(scope="session")
def jar(database):
    """The operator's jar; skips the test (saying why) when Java or the jar is missing."""
    try:
        return _m.find_jar()
    except _m.Unavailable as e:
        _unavailable(e)


@pytest.fixture(scope="session")
def manager(jar, database, tmp_path_factory):
    """One manager on this run's database, shared by the tests (each uses queues of its own)."""
    m = _m.Manager(jar, database.name, str(tmp_path_factory.mktemp("managers")), "m1").start()
    yield m
    m.stop()


@pytest.fixture
def new_queue(database, request):
    """Creates a queue table named after the test and returns its name:
    ``new_queue(["v INT"], "ack_wait=5s")``. In a test that uses the shared manager, waits until
    the manager serves it, so that a receiver's first stream is not refused (NOT_FOUND) while the
    manager's discovery has not found it yet."""
    made = []

    def make(columns, comment="", extra=()):
        digest = hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:8]
        name = "q_" + re.sub(r"[^A-Za-z0-9_]", "_", request.node.originalname)
        name = f"{name[:30]}_{digest}_{len(made)}"
        database.execute(_m.queue_table(name, columns, comment, extra))
        made.append(name)
        if "manager" in request.fixturenames:
            request.getfixturevalue("manager").await_serving(name)
        return name

    return make
