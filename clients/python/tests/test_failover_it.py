"""Several managers: a stream to every target, a dead target that does not hold up the others,
and a leader killed without notice while the receiver holds its events: the answers go through
the standby, which now leads, and nothing is delivered twice or lost."""

import logging
import threading

import pytest

from sluice_client import Receiver, producer
from support.manager import Database, Manager, free_port, queue_table, states
from support.wait import wait_until

pytestmark = pytest.mark.integration


def test_a_target_that_is_down_does_not_hold_up_the_others(manager, database, new_queue):
    queue = new_queue(["v INT"], "ack_wait=10s")
    with database.connect() as c:
        for i in range(10):
            producer.insert(c, queue, {"v": i})
    dead = f"127.0.0.1:{free_port()}"
    errors = []
    with Receiver([dead, manager.target], queue, lambda e: None, receiver_id="two-targets",
                  on_stream_error=errors.append) as r:
        wait_until(lambda: states(database, queue).get(2) == 10, 30, "every row acked")
        wait_until(lambda: len(errors) >= 2, 10, "the dead target retried")
        assert r.stats().streams_connected == 1
    assert {(e.target, e.code) for e in errors} == {(dead, "UNAVAILABLE")}


@pytest.fixture
def pair(jar, tmp_path):
    """A database of its own with two managers: m1 leads its shard, m2 stands by."""
    db = Database("sluice_py_failover")
    db.execute(queue_table("jobs", ["v INT NOT NULL"], "ack_wait=60s"))
    m1 = Manager(jar, db.name, str(tmp_path), "m1").start()
    wait_until(lambda: "lease taken" in m1.log_text(), 30, "m1 leading")
    m2 = Manager(jar, db.name, str(tmp_path), "m2").start()
    yield db, m1, m2
    m1.kill()
    m2.stop()
    db.drop()


def test_the_standby_takes_over_and_answers_go_through_it(pair, caplog):
    caplog.set_level(logging.INFO, logger="sluice_client")
    db, m1, m2 = pair
    with db.connect() as c:
        first = [producer.insert(c, "jobs", {"v": i}) for i in range(5)]
    release = threading.Event()
    handled = []
    lock = threading.Lock()

    def handle(event):
        with lock:
            handled.append((event.id, event.epoch))
        if event.id in first:
            release.wait(60)

    with Receiver([m1.target, m2.target], "jobs", handle, receiver_id="failover",
                  concurrency=8) as r:
        wait_until(lambda: len(handled) == 5, 30, "m1's five events held")
        assert states(db, "jobs") == {1: 5}
        m1.kill()
        wait_until(lambda: "lease taken" in m2.log_text(), 30, "m2 leading", m2.tail)
        release.set()  # their answers cannot go to m1: they go through m2
        wait_until(lambda: states(db, "jobs") == {2: 5}, 30, "the held events acked through m2")
        with db.connect() as c:
            later = [producer.insert(c, "jobs", {"v": i}) for i in range(5)]
        wait_until(lambda: states(db, "jobs") == {2: 10}, 30, "later events acked, from m2")
        assert r.stats().streams_connected == 1
    ids = [i for i, _ in handled]
    assert sorted(ids) == sorted(first + later)  # each once: no redelivery, nothing lost
    assert {epoch for _, epoch in handled} == {1}
    assert any(f"manager {m1.target} unreachable" in m and "through another manager" in m
               for m in caplog.messages)
