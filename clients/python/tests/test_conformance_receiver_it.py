"""The conformance receiver (clients/python/conformance/receiver) against a real manager: the JSON
lines, the modes and the graceful stop of conformance/CONTRACT.md."""

import base64
import json
import os
import queue as queues
import subprocess
import threading
import time

import pytest

from sluice_client import producer
from support.manager import REPO, states
from support.wait import wait_until

pytestmark = pytest.mark.integration

SCRIPT = os.path.join(REPO, "clients", "python", "conformance", "receiver")


class Process:
    """The receiver process, its stdout read line by line (each must be JSON)."""

    def __init__(self, target, queue, mode, max_in_flight=4, **env):
        self.lines = []
        self._queue = queues.Queue()
        self.proc = subprocess.Popen(
            [SCRIPT], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
            env=dict(os.environ, SLUICE_TARGETS=target, SLUICE_QUEUE=queue,
                     SLUICE_RECEIVER_ID=f"conf-{queue}", SLUICE_MAX_IN_FLIGHT=str(max_in_flight),
                     SLUICE_MODE=mode, **env),
        )
        threading.Thread(target=self._read, daemon=True).start()
        self.stderr = []
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(json.loads(line))  # anything but JSON fails the test

    def of(self, kind):
        return [x for x in self.lines if x["type"] == kind]

    def wait(self, condition, what, timeout=30):
        return wait_until(condition, timeout, what, lambda: "".join(self.stderr[-30:]))

    def stop(self):
        started = time.monotonic()
        self.proc.stdin.write("stop\n")
        self.proc.stdin.flush()
        code = self.proc.wait(15)
        return code, time.monotonic() - started

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@pytest.fixture
def process():
    made = []

    def start(*args, **kwargs):
        p = Process(*args, **kwargs)
        made.append(p)
        return p

    yield start
    for p in made:
        p.kill()


def insert(database, queue, rows):
    with database.connect() as c:
        return [producer.insert(c, queue, r) for r in rows]


def test_every_event_once_then_a_graceful_stop(manager, database, new_queue, process):
    queue = new_queue(["v INT NOT NULL"], "ack_wait=10s")
    ids = insert(database, queue, [{"v": i} for i in range(20)])
    p = process(manager.target, queue, "ack")
    p.wait(lambda: len(p.of("handled")) == 20, "20 handled")
    assert p.lines[0] == {"type": "ready"}
    assert sorted(int(x["id"]) for x in p.of("received")) == ids
    assert {x["outcome"] for x in p.of("handled")} == {"ack"}
    first = p.of("received")[0]
    assert first["epoch"] == "1" and first["shard"] == "main" and first["last_attempt"] is False
    assert first["columns"]["v"]["kind"] == "int"
    code, took = p.stop()
    assert code == 0 and took < 10
    assert p.lines[-1] == {"type": "stopped"}
    assert states(database, queue) == {2: 20}


def test_nack_first_brings_each_event_again_at_the_next_epoch(manager, database, new_queue,
                                                              process):
    queue = new_queue(["v INT NOT NULL"], "ack_wait=10s")
    insert(database, queue, [{"v": i} for i in range(3)])
    p = process(manager.target, queue, "nack-first")
    p.wait(lambda: states(database, queue) == {2: 3}, "3 rows acked")
    by_id = {}
    for x in p.of("handled"):
        by_id.setdefault(x["id"], []).append((x["epoch"], x["outcome"]))
    assert all(v == [("1", "nack"), ("2", "ack")] for v in by_id.values()) and len(by_id) == 3
    assert p.stop()[0] == 0


def test_held_events_are_acked_by_a_graceful_stop(manager, database, new_queue, process):
    queue = new_queue(["v INT NOT NULL"], "ack_wait=30s")
    insert(database, queue, [{"v": i} for i in range(3)])
    p = process(manager.target, queue, "hold")
    p.wait(lambda: len(p.of("received")) == 3, "3 events held")
    assert p.of("handled") == [] and states(database, queue) == {1: 3}
    code, took = p.stop()
    assert code == 0 and took < 10
    assert [x["outcome"] for x in p.of("handled")] == ["ack"] * 3
    assert p.lines[-1] == {"type": "stopped"}
    assert states(database, queue) == {2: 3}


def test_typed_columns_in_canonical_form(manager, database, new_queue, process):
    queue = new_queue([
        "u BIGINT UNSIGNED", "d DECIMAL(12,4)", "f DOUBLE", "b VARBINARY(8)", "bit BIT(1)",
        "dt DATETIME(6)", "dt0 DATETIME", "ts TIMESTAMP(6) NULL", "t TIME(6)", "day DATE",
        "s VARCHAR(20)", "n INT",
    ], "ack_wait=10s")
    database.execute(
        f"INSERT INTO `{queue}` (u, d, f, b, bit, dt, dt0, ts, t, day, s, n) VALUES "
        "(18446744073709551615, '-12.5000', 0.1, X'00FF', b'0', '2024-03-31 02:30:00.120000', "
        "'2024-01-02 03:04:05', FROM_UNIXTIME(1700000000.000001), '-01:00:00.5', '2024-02-29', "
        "'h\u00e9', NULL)"
    )
    p = process(manager.target, queue, "ack")
    p.wait(lambda: p.of("handled"), "the row handled")
    cols = p.of("received")[0]["columns"]
    assert cols == {
        "u": {"kind": "uint", "value": "18446744073709551615"},
        "d": {"kind": "decimal", "value": "-12.5000"},
        "f": {"kind": "double", "value": 0.1},
        "b": {"kind": "bytes", "value": base64.b64encode(b"\x00\xff").decode()},
        "bit": {"kind": "bool", "value": False},
        "dt": {"kind": "datetime", "value": "2024-03-31T02:30:00.12"},
        "dt0": {"kind": "datetime", "value": "2024-01-02T03:04:05"},
        "ts": {"kind": "timestamp", "value": "1700000000000001"},
        "t": {"kind": "time", "value": "-3600500000"},
        "day": {"kind": "date", "value": "2024-02-29"},
        "s": {"kind": "string", "value": "h\u00e9"},
        "n": {"kind": "null", "value": None},
    }
    assert p.stop()[0] == 0


def test_killed_mid_handler_then_a_new_process_acks_everything(manager, database, new_queue,
                                                              process):
    queue = new_queue(["v INT NOT NULL"], "ack_wait=30s")
    insert(database, queue, [{"v": i} for i in range(4)])
    held = process(manager.target, queue, "hold")
    held.wait(lambda: len(held.of("received")) == 4, "4 events held")
    held.kill()  # SIGKILL: the broken stream releases its events at once
    again = process(manager.target, queue, "ack")
    again.wait(lambda: states(database, queue) == {2: 4}, "every row acked", timeout=60)
    assert again.stop()[0] == 0
