"""Deadline extension: sends a receiver's extensions, matches the managers' answers, and extends
a long handler's deadline by itself while it runs (as the Java SDK's Extender and AutoExtend)."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future
from typing import Callable, Dict, List, Optional, Tuple

from ._proto import pb
from .errors import ExtensionRefused

log = logging.getLogger("sluice_client")

#: Seconds an extension waits for its answer before it fails (the next try sends it again).
ANSWER_TIMEOUT = 10.0

_Key = Tuple[str, int, int]
#: One endpoint as the extender sees it: its outbox, and its current stream (or None).
Route = Tuple[object, Callable[[], Optional[object]]]


class _Waiting:
    def __init__(self) -> None:
        self.answer: Future = Future()
        self.on: Optional[object] = None
        self.timer: Optional[threading.Timer] = None


class Extender:
    """Sends an extension on the stream of the manager that delivered the event when it is
    subscribed, else on any subscribed stream; it fails at once when that stream ends, and after
    :data:`ANSWER_TIMEOUT` without an answer. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: Dict[_Key, _Waiting] = {}
        self.routes: Callable[[], List[Route]] = lambda: []

    def send(self, raw, origin, by_ms: int) -> Future:
        """Asks to move ``raw``'s deadline to now + ``by_ms``; a Future of the ExtendResult."""
        key = (raw.shard, raw.id, raw.epoch)
        w = _Waiting()
        with self._lock:
            before = self._waiting.get(key)
            self._waiting[key] = w
        if before is not None:
            # An earlier extension of this attempt not answered yet: this one's answer is its.
            if before.timer is not None:
                before.timer.cancel()
            w.answer.add_done_callback(lambda f: _copy(f, before.answer))
        x = pb.Extend(
            event=pb.EventRef(id=raw.id, epoch=raw.epoch, shard=raw.shard,
                              delivery_token=bytes(raw.delivery_token)),
            extend_by_ms=max(1, int(by_ms)),
            time_fired_ns=raw.time_fired_ns,
        )
        on = self._send_on(x, origin)
        if on is None:
            with self._lock:
                if self._waiting.get(key) is w:
                    del self._waiting[key]
            _fail(w.answer, RuntimeError(
                f"no manager stream is subscribed: the extension of event {raw.id} "
                f"(shard {raw.shard}) was not sent"))
            return w.answer
        w.on = on

        def timeout() -> None:
            with self._lock:
                if self._waiting.get(key) is not w:
                    return
                del self._waiting[key]
            _fail(w.answer, TimeoutError(
                f"no answer to the extension of event {raw.id} within {ANSWER_TIMEOUT:g} s"))

        w.timer = threading.Timer(ANSWER_TIMEOUT, timeout)
        w.timer.daemon = True
        w.timer.start()
        return w.answer

    def _send_on(self, x, origin) -> Optional[object]:
        routes = self.routes()
        for outbox, current in sorted(routes, key=lambda r: r[0] is not origin):
            session = current()
            if session is not None and session.send_extend(x):
                return session
        return None

    def stream_ended(self, session: object) -> None:
        """``session`` ended: the extensions waiting for its answer fail now."""
        with self._lock:
            gone = [(k, w) for k, w in self._waiting.items() if w.on is session]
            for k, _ in gone:
                del self._waiting[k]
        for k, w in gone:
            if w.timer is not None:
                w.timer.cancel()
            _fail(w.answer, RuntimeError(f"the stream the extension of event {k[1]} went on ended"))

    def answered(self, result) -> None:
        """A manager's ExtendResult (a connection thread)."""
        e = result.event
        with self._lock:
            w = self._waiting.pop((e.shard, e.id, e.epoch), None)
        if w is not None:
            if w.timer is not None:
                w.timer.cancel()
            if not w.answer.done():
                w.answer.set_result(result)


def _copy(src: Future, dst: Future) -> None:
    if dst.done():
        return
    e = src.exception()
    if e is not None:
        _fail(dst, e)
    else:
        try:
            dst.set_result(src.result())
        except Exception:  # noqa: BLE001 - already done
            pass


def _fail(f: Future, e: BaseException) -> None:
    try:
        f.set_exception(e)
    except Exception:  # noqa: BLE001 - already done
        pass


def deadline_of(raw, result) -> float:
    """The new deadline (seconds since the epoch) of an OK answer; raises ExtensionRefused."""
    status = pb.ExtendStatus.Name(result.status).replace("EXTEND_STATUS_", "")
    deadline = result.time_deadline_ns / 1e9 if result.time_deadline_ns > 0 else None
    if status == "OK" and deadline is not None:
        return deadline
    why = {
        "STALE": "the attempt is over (acked, taken back or fired again)",
        "UNKNOWN": "no such event",
        "LIMIT": "at the queue's max_hold",
    }.get(status, f"status {status}")
    raise ExtensionRefused(
        status, f"extension of event {raw.id} (attempt {raw.epoch}, shard {raw.shard}) "
        f"refused: {why}", deadline)


class AutoExtend:
    """Extends one handling's deadline while it runs: once ``share`` of the hold (deadline −
    fire: the queue's ack_wait) has passed since the event arrived, asks for one more hold from
    now, and again each time that share of the new hold has passed, until :meth:`stop` or a
    refusal. A failure is logged and tried again sooner; an answer slower than the share of the
    hold is not waited for (the next try supersedes it). The handler is never interrupted."""

    def __init__(self, hold: float, share: float, received_at: float,
                 extend: Callable[[float], Future], what: str, clock: Callable[[], float]) -> None:
        self._hold = hold
        self._share = share
        self._extend = extend
        self._what = what
        self._lock = threading.Lock()
        self._stopped = False
        self._timer: Optional[threading.Timer] = None
        self._schedule(received_at + share * hold - clock())

    def _schedule(self, delay: float) -> None:
        with self._lock:
            if self._stopped:
                return
            self._timer = threading.Timer(max(0.0, delay), self._run)
            self._timer.daemon = True
            self._timer.start()

    def _run(self) -> None:
        with self._lock:
            if self._stopped:
                return
        patience = max(0.2, self._share * self._hold)
        settled = threading.Lock()
        f = self._extend(self._hold)

        def slow() -> None:
            if settled.acquire(blocking=False):
                log.debug("%s: extension not answered within %.3f s, trying again", self._what,
                          patience)
                self._schedule(0)

        t = threading.Timer(patience, slow)
        t.daemon = True
        t.start()

        def done(fut: Future) -> None:
            t.cancel()
            if not settled.acquire(blocking=False):
                return
            e = fut.exception()
            if e is None:
                self._schedule(self._share * self._hold)
            elif isinstance(e, ExtensionRefused):
                log.warning("%s: automatic extension stopped: %s", self._what, e)
                self.stop()
            else:
                log.warning("%s: extension failed, trying again: %s", self._what, e)
                self._schedule(min(1.0, self._share * self._hold / 2))

        f.add_done_callback(done)

    def stop(self) -> None:
        """The handler ended: no more extensions."""
        with self._lock:
            self._stopped = True
            if self._timer is not None:
                self._timer.cancel()
