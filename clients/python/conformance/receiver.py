"""The conformance receiver (conformance/CONTRACT.md), written with sluice_client's public API.

Environment: SLUICE_TARGETS, SLUICE_QUEUE, SLUICE_RECEIVER_ID, SLUICE_MAX_IN_FLIGHT, SLUICE_MODE
(ack | nack-first | snooze-first | slow:<ms> | slow-noextend:<ms> | hold), SLUICE_TLS_CA, SLUICE_TOKEN. Prints
one JSON object per line on stdout (ready, received, handled, ack_result, error, stopped); logs go
to stderr. A line ``stop`` on stdin, stdin closing, or SIGTERM stops it gracefully.
"""

import base64
import datetime as dt
import json
import logging
import math
import os
import signal
import sys
import threading
import time

from sluice_client import Receiver, RetryLater, Snooze

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
MICRO = dt.timedelta(microseconds=1)

_out = threading.Lock()


def emit(obj):
    line = json.dumps(obj, separators=(",", ":"))  # ASCII: \u escapes, whatever the locale
    with _out:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def canonical(kind, v):
    """The contract's canonical form of the value the application sees."""
    if v is None:
        return None
    if kind in ("int", "uint"):
        return str(v)
    if kind == "double":
        if math.isfinite(v):
            return v  # json writes repr(), which parses back to the same double
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    if kind == "decimal":
        return format(v, "f")  # plain notation, every digit of the column's scale
    if kind == "bytes":
        return base64.b64encode(v).decode("ascii")
    if kind == "timestamp":
        return str((v - EPOCH) // MICRO)
    if kind == "time":
        return str(v // MICRO)
    if kind == "date":
        return f"{v.year:04d}-{v.month:02d}-{v.day:02d}"
    if kind == "datetime":
        # As the manager writes it (ISO-8601 local date-time): seconds always, the fraction only
        # when not zero, without trailing zeros.
        text = (f"{v.year:04d}-{v.month:02d}-{v.day:02d}T{v.hour:02d}:{v.minute:02d}:"
                f"{v.second:02d}")
        return text + ("." + f"{v.microsecond:06d}".rstrip("0") if v.microsecond else "")
    return v  # string, json (str), bool


def describe(event):
    return {"id": str(event.id), "epoch": str(event.epoch), "shard": event.shard}


def main():
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s %(levelname)s [%(threadName)s] %(message)s")
    env = os.environ
    targets = [t.strip() for t in env["SLUICE_TARGETS"].split(",") if t.strip()]
    max_in_flight = int(env.get("SLUICE_MAX_IN_FLIGHT") or 8)
    mode = env.get("SLUICE_MODE", "ack")
    slow = mode.startswith("slow:") or mode.startswith("slow-noextend:")
    slow_ms = int(mode.split(":", 1)[1]) if slow else 0
    auto_extend = not mode.startswith("slow-noextend:")
    if mode not in ("ack", "nack-first", "snooze-first", "hold") and not slow:
        raise SystemExit(f"unknown SLUICE_MODE {mode!r}")
    seen = set()
    seen_lock = threading.Lock()
    receiver = None

    def handle(event):
        emit({"type": "received", **describe(event), "last_attempt": event.last_attempt,
              "columns": {name: {"kind": event.column_kind(name),
                                 "value": canonical(event.column_kind(name), value)}
                          for name, value in event.columns.items()}})
        if mode in ("nack-first", "snooze-first"):
            with seen_lock:
                first = (event.shard, event.id) not in seen
                seen.add((event.shard, event.id))
            if first and mode == "snooze-first":
                raise Snooze(dt.timedelta(milliseconds=100), "conformance")
            if first:
                raise RetryLater(dt.timedelta(milliseconds=100), "conformance")
        elif slow_ms:
            time.sleep(slow_ms / 1000)
        elif mode == "hold":
            receiver.stopping.wait()  # set by stop(), once every manager was told

    def handled(event, how):
        emit({"type": "handled", **describe(event), "outcome": how.outcome})

    def ack_result(r):
        emit({"type": "ack_result", "id": str(r.id), "epoch": str(r.epoch), "shard": r.shard,
              "status": r.status.name})

    ready = []
    ready_lock = threading.Lock()

    def subscribed(s):
        # On the connection thread, before any event of that stream reaches a handler: "ready"
        # comes before the first "received".
        with ready_lock:
            if not ready:
                ready.append(s.target)
                emit({"type": "ready"})

    def stream_error(e):
        emit({"type": "error", "code": e.code, "message": f"{e.target}: {e.message}"})

    options = {"auto_extend": auto_extend}
    if env.get("SLUICE_TLS_CA"):
        options.update(tls_ca=env["SLUICE_TLS_CA"], tls_server_name="localhost")
    if env.get("SLUICE_TOKEN"):
        options["token"] = env["SLUICE_TOKEN"]
    receiver = Receiver(
        targets, env["SLUICE_QUEUE"], handle,
        receiver_id=env["SLUICE_RECEIVER_ID"],
        max_in_flight=max_in_flight,
        concurrency=min(max_in_flight, 8),
        # The contract wants a graceful stop within 10 s, also with a manager that is down:
        # three waits on the managers and one on the handlers.
        protocol_timeout=2.0,
        shutdown_timeout=3.0,
        on_subscribed=subscribed, on_handled=handled, on_ack_result=ack_result,
        on_stream_error=stream_error,
        **options,
    )
    receiver.start()  # after the assignment: a held handler waits on receiver.stopping

    stop = threading.Event()

    def read_stdin():
        for line in sys.stdin:
            if line.strip() == "stop":
                break
        stop.set()

    threading.Thread(target=read_stdin, name="stdin", daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    while not stop.wait(0.5):
        pass
    receiver.stop()
    emit({"type": "stopped"})


if __name__ == "__main__":
    main()
