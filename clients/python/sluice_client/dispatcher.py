"""Runs the application's handler on a fixed pool of threads."""

from __future__ import annotations

import collections
import logging
import threading
import time
from concurrent.futures import Future
from typing import Callable, Deque, List, Optional, Tuple

from .completion import Completion
from .errors import RetryLater, Snooze
from .event import ReceivedEvent
from .extender import ANSWER_TIMEOUT, AutoExtend, Extender, deadline_of
from .outbox import Outbox
from .results import Handled
from .stats import StatsCounters

log = logging.getLogger("sluice_client")

REFUSED = "receiver is shutting down; event was not handled"

_Task = Tuple[object, Outbox, float]


class Dispatcher:
    """``concurrency`` daemon threads (``sluice-<receiver>-handler-<n>``) run the handler, one
    event each, and put each outcome in the outbox of the manager the event came from: returned
    → ack; :class:`RetryLater` → nack with its delay; anything else → nack with the queue's
    backoff (logged). Every manager's stream feeds this one pool, so the application sees one
    flow of events whatever shard or manager they come from. The queue in front of the threads is
    unbounded on purpose: each manager bounds what it pushes on a stream by ``max_in_flight``.

    :meth:`dispatch` runs on the connection threads and never blocks. The handler threads are
    daemons: a handler that never returns does not keep the process alive.
    """

    def __init__(
        self,
        receiver_id: str,
        concurrency: int,
        handler: Callable[[ReceivedEvent], None],
        stats: StatsCounters,
        silenced: threading.Event,
        on_handled: Optional[Callable[[ReceivedEvent, Handled], None]],
        extender: Optional[Extender] = None,
        auto_extend: bool = True,
        auto_extend_at: float = 0.5,
    ) -> None:
        self._extender = extender
        self._auto_extend = auto_extend
        self._auto_extend_at = auto_extend_at
        self._receiver_id = receiver_id
        self._handler = handler
        self._stats = stats
        self._silenced = silenced
        self._on_handled = on_handled
        self._cond = threading.Condition()
        self._queue: Deque[Optional[_Task]] = collections.deque()
        self._in_flight = 0
        self._refusing = False
        self._threads = [
            threading.Thread(
                target=self._work, name=f"sluice-{receiver_id}-handler-{i + 1}", daemon=True
            )
            for i in range(concurrency)
        ]

    def start(self) -> None:
        for t in self._threads:
            t.start()

    def dispatch(self, batch, outbox: Outbox) -> None:
        """Queues every event of an EventBatch; ``outbox`` is that of the manager that sent it."""
        for raw in batch.events:
            self._stats.count("received")
            outbox.handling_started()
            with self._cond:
                self._in_flight += 1
                refused = self._refusing
                if not refused:
                    self._queue.append((raw, outbox, time.time()))
                    self._cond.notify_all()
            if refused:
                # After stop() gave up on the handlers: let the manager redeliver it elsewhere
                # rather than leave it to time out.
                self._finish(_nack(raw, 0, REFUSED), outbox)

    @property
    def in_flight(self) -> int:
        with self._cond:
            return self._in_flight

    def await_idle(self, timeout: float) -> bool:
        """Waits until no handling is queued or running; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._in_flight > 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return True

    def refuse_rest(self) -> None:
        """Nacks every event not started yet (the manager may redeliver it) and every later one.
        Handlers already running go on; their answers are still sent if they end in time."""
        with self._cond:
            self._refusing = True
            queued: List[_Task] = [t for t in self._queue if t is not None]
            self._queue.clear()
        for raw, outbox, _ in queued:
            self._finish(_nack(raw, 0, REFUSED), outbox)

    def shutdown(self) -> None:
        """Ends the handler threads once their current handling (if any) returns."""
        with self._cond:
            self._refusing = True
            self._queue.extend([None] * len(self._threads))
            self._cond.notify_all()

    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._queue:
                    self._cond.wait()
                task = self._queue.popleft()
            if task is None:
                return
            self._handle(*task)

    def _handle(self, raw, outbox: Outbox, received_at: float) -> None:
        event = None
        error: Optional[BaseException] = None
        auto: Optional[AutoExtend] = None
        try:
            event = ReceivedEvent(raw)
            auto = self._extending(event, raw, outbox, received_at)
            self._handler(event)
            completion = Completion(
                raw.id,
                raw.epoch,
                raw.shard,
                bytes(raw.delivery_token),
                ack=True,
                committed=event.acked_in_transaction,
            )
        except RetryLater as r:
            error = r
            completion = _nack(raw, r.retry_after_ms, r.reason, isinstance(r, Snooze))
        except BaseException as e:  # noqa: B036 - any failure of the handler is a nack
            error = e
            reason = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
            log.warning("receiver %s: handler failed for event %d of queue %s (shard %s, "
                        "attempt %d): %s", self._receiver_id, raw.id, raw.queue, raw.shard,
                        raw.epoch, reason, exc_info=True)
            completion = _nack(raw, 0, reason)
        if auto is not None:
            auto.stop()
        self._finish(completion, outbox)
        if event is not None and self._on_handled is not None and not self._silenced.is_set():
            try:
                self._on_handled(event, Handled("ack" if completion.ack else "nack", error))
            except Exception:
                log.exception("receiver %s: on_handled raised; ignored", self._receiver_id)

    def _extending(self, event: ReceivedEvent, raw, outbox: Outbox,
                   received_at: float) -> Optional[AutoExtend]:
        """Lets ``event.extend`` reach the managers, and starts its automatic extension."""
        x = self._extender
        if x is None:
            return None

        def send(seconds: float) -> Future:
            out: Future = Future()

            def done(f: Future) -> None:
                try:
                    out.set_result(deadline_of(raw, f.result()))
                except BaseException as e:  # noqa: B036 - handed on
                    out.set_exception(e)

            x.send(raw, outbox, max(1, round(seconds * 1000))).add_done_callback(done)
            return out

        event._extend = lambda seconds: send(seconds).result(timeout=ANSWER_TIMEOUT + 1)
        hold = event.hold_seconds
        if not self._auto_extend or hold <= 0:
            return None
        return AutoExtend(hold, self._auto_extend_at, received_at, send,
                          f"event {raw.id} (attempt {raw.epoch}, queue {raw.queue}, "
                          f"shard {raw.shard})", time.time)

    def _finish(self, completion: Completion, outbox: Outbox) -> None:
        self._stats.count("acked" if completion.ack else "nacked")
        # Into the outbox before in-flight drops, so stop() never sees "idle" with an answer
        # not queued.
        if not self._silenced.is_set():
            outbox.add(completion)
        outbox.handling_ended()
        with self._cond:
            self._in_flight -= 1
            self._cond.notify_all()


def _nack(raw, retry_after_ms: int, reason: str, snooze: bool = False) -> Completion:
    return Completion(
        raw.id,
        raw.epoch,
        raw.shard,
        bytes(raw.delivery_token),
        ack=False,
        retry_after_ms=retry_after_ms,
        reason=reason,
        snooze=snooze,
    )
