"""The producer helper on a real database: inserts in the caller's transaction, with the table
convention (delay, fire_at, tenant, priority, id), dedup keys and event groups."""

import calendar
import datetime as dt
from decimal import Decimal

import pytest

from sluice_client import producer

pytestmark = pytest.mark.integration

DEDUP = [
    "`dedup_key` VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL",
]
DEDUP_INDEX = ["UNIQUE KEY `sluice_dedup` (`dedup_key`)"]
GROUPED = ["`group_key` VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL"]
GROUP_INDEX = ["KEY `sluice_group` (`group_key`)"]
COMPLETES = ["`completes_group` VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL"]


def row(database, queue, event_id, columns):
    [r] = database.execute(f"SELECT {columns} FROM `{queue}` WHERE id = %s", (event_id,))
    return r


def test_insert_commits_with_the_callers_transaction(database, new_queue):
    queue = new_queue(["order_id BIGINT NOT NULL", "amount DECIMAL(10,2) NULL"])
    with database.connect(autocommit=False) as c:
        kept = producer.insert(c, queue, {"order_id": 1001, "amount": Decimal("12.50")})
        c.commit()
        c.begin()
        dropped = producer.insert(c, queue, {"order_id": 1002})
        c.rollback()
    assert database.execute(f"SELECT id, order_id, amount, state, epoch FROM `{queue}`") == (
        (kept, 1001, Decimal("12.50"), 0, 0),
    )
    assert dropped > kept


def test_delay_is_counted_on_the_database_clock(database, new_queue):
    queue = new_queue(["v INT"])
    with database.connect() as c:
        i = producer.insert(c, queue, {"v": 1}, delay=dt.timedelta(minutes=30))
        j = producer.insert(c, queue, {"v": 2}, delay=1.5)
    for event_id, ns in ((i, 30 * 60 * 10**9), (j, 1_500_000_000)):
        time_next, created = row(database, queue, event_id, "time_next, time_created")
        assert 0 <= time_next - created - ns < 1_000_000_000


def test_fire_at_tenant_priority_and_an_id_of_ones_own(database, new_queue):
    queue = new_queue(["v INT"])
    at = dt.datetime(2031, 5, 6, 7, 8, 9, 123456, tzinfo=dt.timezone.utc)
    with database.connect() as c:
        event_id = producer.insert(c, queue, {"v": 1}, fire_at=at, tenant="acme", priority=-7,
                                   id=424242)
    assert event_id == 424242
    assert row(database, queue, event_id, "time_next, tenant, priority") == (
        calendar.timegm(at.utctimetuple()) * 10**9 + 123_456_000, "acme", -7,
    )


@pytest.mark.parametrize(
    "columns, options, message",
    [
        ({"state": 1}, {}, "system column"),
        ({"bad name": 1}, {}, "column name"),
        ({"v": 1}, {"priority": 128}, "priority"),
        ({"v": 1}, {"delay": -1}, "negative"),
        ({"v": 1}, {"fire_at": "tomorrow"}, "fire_at"),
        ({"v": 1}, {"fire_at": dt.datetime(2030, 1, 1)}, "naive"),
    ],
)
def test_bad_input_is_refused_before_any_statement(database, new_queue, columns, options,
                                                   message):
    queue = new_queue(["v INT"])
    with database.connect() as c:
        with pytest.raises(ValueError, match=message):
            producer.insert(c, queue, columns, **options)
        with pytest.raises(ValueError, match="queue name"):
            producer.insert(c, "no such; table", {"v": 1})
    assert database.execute(f"SELECT COUNT(*) FROM `{queue}`") == ((0,),)


def test_insert_unique_returns_the_existing_event_and_leaves_the_transaction_usable(
    database, new_queue
):
    queue = new_queue(["v INT", *DEDUP], extra=DEDUP_INDEX)
    with database.connect(autocommit=False) as c:
        first = producer.insert_unique(c, queue, "order-1001-paid", {"v": 1}, tenant="acme")
        again = producer.insert_unique(c, queue, "order-1001-paid", {"v": 2})
        other = producer.insert_unique(c, queue, "Order-1001-paid", {"v": 3})  # exact compare
        c.commit()
    assert first == producer.InsertOutcome(first.id, False)
    assert again == producer.InsertOutcome(first.id, True)
    assert not other.duplicate and other.id != first.id
    assert database.execute(f"SELECT v, dedup_key FROM `{queue}` ORDER BY id") == (
        (1, "order-1001-paid"), (3, "Order-1001-paid"),
    )


def test_insert_unique_sees_a_key_committed_after_its_snapshot(database, new_queue):
    queue = new_queue(["v INT", *DEDUP], extra=DEDUP_INDEX)
    with database.connect(autocommit=False) as late, database.connect() as other:
        late.begin()
        cur = late.cursor()
        cur.execute(f"SELECT COUNT(*) FROM `{queue}`")  # the snapshot starts here, empty
        holder = producer.insert_unique(other, queue, "k", {"v": 1})
        outcome = producer.insert_unique(late, queue, "k", {"v": 2})
        late.commit()
    assert outcome == producer.InsertOutcome(holder.id, True)


def test_insert_unique_checks_its_key_and_names_a_missing_column(database, new_queue):
    queue = new_queue(["v INT"])
    with database.connect() as c:
        with pytest.raises(ValueError, match="1 to 255"):
            producer.insert_unique(c, queue, "", {"v": 1})
        with pytest.raises(ValueError, match="but the key given"):
            producer.insert_unique(c, queue, "a", {"v": 1, "dedup_key": "b"})
        with pytest.raises(Exception, match=f"queue {queue} has no dedup_key column"):
            producer.insert_unique(c, queue, "a", {"v": 1})


def test_a_group_and_its_completion_event(database, new_queue):
    children = new_queue(["v INT", *GROUPED], extra=GROUP_INDEX)
    reports = new_queue(["run VARCHAR(20)", *COMPLETES])
    with database.connect(autocommit=False) as c:
        ids = [producer.insert_in_group(c, children, "run-1", {"v": i}) for i in range(3)]
        done = producer.insert_group_completion(c, reports, "run-1", {"run": "2026-11"},
                                                priority=1)
        c.commit()
    assert database.execute(f"SELECT id, group_key FROM `{children}` ORDER BY id") == tuple(
        (i, "run-1") for i in ids
    )
    assert row(database, reports, done, "run, completes_group, priority") == ("2026-11", "run-1", 1)
    with database.connect() as c:
        with pytest.raises(Exception, match=f"queue {children} has no completes_group column"):
            producer.insert_group_completion(c, children, "run-1", {})
        with pytest.raises(ValueError, match="1 to 191"):
            producer.insert_in_group(c, children, "x" * 192, {})
