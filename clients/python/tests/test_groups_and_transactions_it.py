"""A group's completion event reaches the receiver with its counts; a handler that acks in its own
transaction commits its writes and the ack together, and the manager only lets go."""


import pytest

from sluice_client import Receiver, RetryLater, ack_in_transaction, producer
from support.manager import states
from support.wait import wait_until

pytestmark = pytest.mark.integration

GROUPED = "`group_key` VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL"
GROUP_INDEX = "KEY `sluice_group` (`group_key`)"
COMPLETES = "`completes_group` VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL"


def test_the_completion_event_comes_after_its_children_with_their_counts(
    manager, database, new_queue
):
    children = new_queue(["v INT", GROUPED], "ack_wait=10s max_attempts=1", [GROUP_INDEX])
    reports = new_queue(["run VARCHAR(20)", COMPLETES], "ack_wait=10s")
    with database.connect(autocommit=False) as c:
        for i in range(4):
            producer.insert_in_group(c, children, "run-7", {"v": i})
        producer.insert_group_completion(c, reports, "run-7", {"run": "2026-11"})
        c.commit()
    handled = []

    def child(event):
        handled.append(event.id)
        if event["v"] == 3:
            raise RetryLater(0, "fails once, and max_attempts=1 makes it dead")

    completions = []
    with Receiver([manager.target], children, child, receiver_id="grp-children"), \
            Receiver([manager.target], reports, completions.append, receiver_id="grp-report"):
        wait_until(lambda: completions, 60, "the completion event")
    [done] = completions
    assert len(handled) == 4
    assert done["run"] == "2026-11" and done["completes_group"] == "run-7"
    assert (done.group.key, done.group.acked, done.group.dead, done.group.cancelled) == (
        "run-7", 3, 1, 0,
    )


def test_an_ack_in_the_handlers_transaction_commits_with_its_writes(manager, database, new_queue):
    queue = new_queue(["order_id BIGINT NOT NULL"], "ack_wait=10s")
    database.execute(f"CREATE TABLE `{queue}_shipments` (order_id BIGINT PRIMARY KEY)")
    with database.connect() as c:
        for order in (1, 2):
            producer.insert(c, queue, {"order_id": order})
    conn = database.connect(autocommit=False)
    results = []

    def handle(event):
        conn.begin()
        with conn.cursor() as cur:
            cur.execute(f"INSERT INTO `{queue}_shipments` VALUES (%s)", (event["order_id"],))
        assert ack_in_transaction(conn, event)
        if event["order_id"] == 2 and event.epoch == 1:
            conn.rollback()  # the ack rolls back with the write: the event comes again
            raise RuntimeError("payment service down")
        conn.commit()

    try:
        with Receiver([manager.target], queue, handle, receiver_id="tx", concurrency=1,
                      on_ack_result=results.append) as r:
            wait_until(lambda: states(database, queue).get(2) == 2, 30, "both rows acked")
    finally:
        conn.close()
    stats = r.stats()  # after stop(): every handling ended and every answer was acknowledged
    assert database.execute(f"SELECT order_id FROM `{queue}_shipments` ORDER BY 1") == ((1,), (2,))
    assert database.execute(f"SELECT id, epoch FROM `{queue}` ORDER BY id")[1][1] == 2
    # Committed acks get no answer: only the nack of the failed attempt was answered.
    assert stats.acked == 2 and stats.nacked == 1
    assert [(x.status.name, x.outcome) for x in results] == [("OK", "RETRY")]


def test_a_transactional_ack_refuses_autocommit(manager, database, new_queue):
    queue = new_queue(["v INT"], "ack_wait=10s min_backoff=0ms")
    with database.connect() as c:
        producer.insert(c, queue, {"v": 1})
    errors = []
    auto = database.connect(autocommit=True)

    def handle(event):
        try:
            ack_in_transaction(auto, event)
        except ValueError as e:
            errors.append(str(e))

    try:
        with Receiver([manager.target], queue, handle, receiver_id="tx-auto"):
            wait_until(lambda: states(database, queue).get(2) == 1, 30, "the row acked")
    finally:
        auto.close()
    assert "autocommit" in errors[0] and f"queue {queue}" in errors[0]
