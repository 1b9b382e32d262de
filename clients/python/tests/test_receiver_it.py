"""The receiver against a real manager: delivery, acks, nacks, retry-later, results, flow, stop."""

import datetime as dt
import threading

import pytest

from sluice_client import AckStatus, Receiver, RetryLater, producer
from support.manager import states
from support.wait import wait_until

pytestmark = pytest.mark.integration

PENDING, FIRED, ACKED, DEAD = 0, 1, 2, 3


def insert_many(database, queue, n, **options):
    with database.connect(autocommit=False) as c:
        ids = [producer.insert(c, queue, {"v": i}, **options) for i in range(n)]
        c.commit()
    return ids


def test_every_event_is_handled_once_and_acked(manager, database, new_queue):
    queue = new_queue(["v INT NOT NULL"], "ack_wait=10s")
    ids = insert_many(database, queue, 50)
    seen = {}
    lock = threading.Lock()

    def handle(event):
        with lock:
            seen[(event.shard, event.id)] = seen.get((event.shard, event.id), 0) + 1
        assert event["v"] == event.id - ids[0]

    with Receiver([manager.target], queue, handle, receiver_id="it-every", concurrency=4) as r:
        assert r.wait_subscribed(20)
        wait_until(lambda: states(database, queue).get(ACKED) == 50, 30, "50 rows acked")
        assert r.stats().streams_connected == 1
    stats = r.stats()  # after stop(), which waited for every answer to be acknowledged
    assert sorted(i for (_, i) in seen) == ids
    assert set(seen.values()) == {1}
    assert stats.received == 50 and stats.acked == 50 and stats.results_ok == 50
    assert stats.in_flight == 0 and stats.streams_connected == 0


def test_retry_later_nacks_with_its_delay_and_the_event_comes_again(manager, database, new_queue):
    queue = new_queue(["v INT NOT NULL"], "ack_wait=10s")
    [event_id] = insert_many(database, queue, 1)
    attempts = []

    def handle(event):
        attempts.append((event.epoch, dt.datetime.now(dt.timezone.utc)))
        if len(attempts) == 1:
            raise RetryLater(dt.timedelta(milliseconds=1500), "not yet")

    with Receiver([manager.target], queue, handle, receiver_id="it-retry") as r:
        wait_until(lambda: states(database, queue).get(ACKED) == 1, 30, "the retried event acked")
        assert r.stats().nacked == 1
    (e1, t1), (e2, t2) = attempts
    assert e2 == e1 + 1
    assert (t2 - t1) >= dt.timedelta(milliseconds=1400)


def test_a_failing_handler_nacks_with_the_queue_backoff_and_the_last_attempt_dies(
    manager, database, new_queue
):
    queue = new_queue(["v INT NOT NULL"], "ack_wait=10s min_backoff=100ms max_attempts=2")
    insert_many(database, queue, 1)
    last = []

    def handle(event):
        last.append(event.last_attempt)
        raise RuntimeError("boom")

    with Receiver([manager.target], queue, handle, receiver_id="it-fail"):
        wait_until(lambda: states(database, queue).get(DEAD) == 1, 30, "the event dead")
    assert last == [False, True]


def test_a_late_ack_is_reported_stale(manager, database, new_queue):
    queue = new_queue(["v INT NOT NULL"], "ack_wait=1s min_backoff=0ms")
    insert_many(database, queue, 1)
    results = []
    first = threading.Event()

    def handle(event):
        if not first.is_set():
            first.set()
            # Held past ack_wait: the manager fires the event again meanwhile.
            wait_until(lambda: event.epoch < current_epoch(), 10, "a second attempt")

    def current_epoch():
        return database.execute(f"SELECT epoch FROM `{queue}`")[0][0]

    # Without automatic extension: an extended attempt would stay valid, and its ack too.
    with Receiver([manager.target], queue, handle, receiver_id="it-stale", concurrency=2,
                  on_ack_result=results.append, auto_extend=False) as r:
        wait_until(lambda: any(x.status is AckStatus.STALE for x in results), 20, "a STALE result")
        wait_until(lambda: states(database, queue).get(ACKED) == 1, 20, "the row acked")
        assert r.stats().results_stale >= 1
    stale = [x for x in results if x.status is AckStatus.STALE]
    ok = [x for x in results if x.status is AckStatus.OK]
    assert stale[0].epoch < ok[-1].epoch and stale[0].target == manager.target


def test_stop_notifies_the_manager_lets_held_handlers_finish_and_acks_them(
    manager, database, new_queue
):
    queue = new_queue(["v INT NOT NULL"], "ack_wait=30s")
    insert_many(database, queue, 3)
    r = None
    started = []

    def handle(event):
        started.append(event.id)
        r.stopping.wait(30)  # held until stop() told the manager

    r = Receiver([manager.target], queue, handle, receiver_id="it-stop", concurrency=3).start()
    wait_until(lambda: len(started) == 3, 20, "three handlers holding their events")
    assert states(database, queue) == {FIRED: 3}
    r.stop()
    assert states(database, queue) == {ACKED: 3}
    assert r.stats().in_flight == 0


def test_delay_tenant_and_priority_reach_the_receiver(manager, database, new_queue):
    queue = new_queue(["v INT NOT NULL"], "ack_wait=10s")
    got = []
    with database.connect(autocommit=False) as c:
        producer.insert(c, queue, {"v": 1}, delay=dt.timedelta(seconds=1), tenant="acme",
                        priority=-5)
        c.commit()
    inserted = dt.datetime.now(dt.timezone.utc)
    with Receiver([manager.target], queue, got.append, receiver_id="it-delay"):
        wait_until(lambda: got, 20, "the delayed event")
    [e] = got
    assert e.tenant == "acme" and e.priority == -5
    assert e.due_time_ns - e.created_time_ns >= 1_000_000_000
    assert e.fired_time_ns >= e.due_time_ns
    assert dt.datetime.now(dt.timezone.utc) - inserted >= dt.timedelta(milliseconds=900)


def test_flow_changes_the_credits_of_a_live_stream(manager, database, new_queue):
    queue = new_queue(["v INT NOT NULL"], "ack_wait=30s")
    insert_many(database, queue, 6)
    release = threading.Event()
    holding = []

    def handle(event):
        holding.append(event.id)
        release.wait(30)

    with Receiver([manager.target], queue, handle, receiver_id="it-flow", concurrency=8,
                  max_in_flight=2) as r:
        wait_until(lambda: len(holding) == 2, 20, "two events held (two credits)")
        assert states(database, queue).get(FIRED) == 2
        r.set_max_in_flight(5)
        wait_until(lambda: len(holding) == 5, 20, "five events held after Flow(5)")
        release.set()
        wait_until(lambda: states(database, queue).get(ACKED) == 6, 20, "every row acked")


def test_a_stopped_receiver_sends_nothing_and_cannot_start_again(manager, new_queue):
    queue = new_queue(["v INT NOT NULL"])
    r = Receiver([manager.target], queue, lambda e: None, receiver_id="it-restart").start()
    r.stop()
    r.stop()  # idempotent
    with pytest.raises(RuntimeError, match="already stopped"):
        r.start()
