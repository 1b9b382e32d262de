"""Keeps one Subscribe stream open to one manager."""

from __future__ import annotations

import logging
import threading
import time
from typing import Optional

from ._proto import pb_grpc
from .backoff import Backoff
from .outbox import Outbox
from .results import AckResult, StreamError, Subscription
from .runtime import Runtime
from .stream_session import StreamListener, StreamSession

log = logging.getLogger("sluice_client")

_REFUSALS = ("NOT_FOUND", "FAILED_PRECONDITION")


class Connector(StreamListener):
    """One manager's stream, kept open by its own thread (``sluice-<receiver>-conn-<n>``): the
    thread opens the stream, reads it until it ends, and opens a new one after this manager's own
    backoff, whatever the other managers do. Every kind of end (the manager unreachable, stopping,
    refusing with NOT_FOUND or FAILED_PRECONDITION because it leads no shard of the queue yet,
    UNAUTHENTICATED) is retried the same way; the backoff is reset once a stream is subscribed.
    An outage is logged once: WARN at its first failure, DEBUG for the next ones, INFO when a
    stream is subscribed again. Reading runs on this thread too: it hands events to the
    dispatcher (which never blocks) and matches the manager's answers.

    The sender thread of the same manager waits here for a subscribed stream
    (:meth:`await_subscribed`); ``stop()`` asks the loop to end and returns the open stream.
    """

    def __init__(
        self, runtime: Runtime, index: int, target: str, channel, backoff: Backoff, outbox: Outbox
    ) -> None:
        self.target = target
        self._runtime = runtime
        self._stub = pb_grpc.SluiceStub(channel)
        self._backoff = backoff
        self._outbox = outbox
        self._cond = threading.Condition()
        self._wake = threading.Event()
        self._current: Optional[StreamSession] = None
        self._generation = 0
        self._stopped = False
        self._down = False
        self._failures = 0
        self._thread = threading.Thread(
            target=self._loop, name=f"sluice-{runtime.receiver_id}-conn-{index}", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def _loop(self) -> None:
        rt = self._runtime
        while True:
            with self._cond:
                if self._stopped or (rt.closing() and not self._outbox.owes_work()):
                    return
                self._generation += 1
                session = StreamSession(
                    self._generation, self.target, self._outbox, self, rt.silenced
                )
                self._current = session
            if self._generation > 1:
                rt.stats.count("reconnects")
            log.debug("opening stream #%d to %s for queue %s", session.generation, self.target,
                      rt.queue)
            code, details = session.run(self._stub, rt.subscribe_message(), rt.metadata)
            rt.extender.stream_ended(session)
            with self._cond:
                self._current = None
                self._cond.notify_all()
                stopped = self._stopped
            rt.streams_changed()
            if stopped:
                return
            closing = rt.closing()
            if closing:
                log.info("receiver %s: stream to manager %s ended while stopping: %s",
                         rt.receiver_id, self.target, _describe(code, details))
                if not self._outbox.owes_work():
                    return
            delay = self._backoff.next_delay()
            if not closing:
                self._log_end(code, details, delay)
                if code != "OK":
                    rt.stream_error(StreamError(self.target, code, details))
            self._wake.wait(delay)

    def _log_end(self, code: str, details: str, delay: float) -> None:
        rt = self._runtime
        with self._cond:
            first = not self._down
            self._down = True
            self._failures += 1
            failures = self._failures
        what = _describe(code, details)
        if not first:
            log.debug("receiver %s: stream to manager %s for queue %s ended again: %s; attempt %d "
                      "failed, next in %d ms", rt.receiver_id, self.target, rt.queue, what,
                      failures, delay * 1000)
        elif code in _REFUSALS:
            log.warning("receiver %s: manager %s does not serve queue %s: %s; it may lead no shard "
                        "of it yet, so retrying with backoff (next in %d ms; logged again when "
                        "subscribed)", rt.receiver_id, self.target, rt.queue, what, delay * 1000)
        else:
            log.warning("receiver %s: stream to manager %s for queue %s ended: %s; reconnecting "
                        "with backoff (next in %d ms; logged again when subscribed)",
                        rt.receiver_id, self.target, rt.queue, what, delay * 1000)

    # ---- StreamListener, on this connector's thread

    def subscribed(self, session: StreamSession, message) -> None:
        self._backoff.reset()
        with self._cond:
            was_down, failures = self._down, self._failures
            self._down = False
            self._failures = 0
            self._cond.notify_all()
        again = f" again after {failures} failed attempt(s)" if was_down else ""
        log.info("receiver %s subscribed to queue %s at %s%s (shards %s, max_in_flight %d)",
                 message.receiver_id, message.queue, self.target, again, message.shard or "none",
                 message.max_in_flight)
        shards = tuple(s for s in message.shard.split(",") if s)
        self._runtime.subscribed(Subscription(self.target, shards, message.max_in_flight))
        self._runtime.streams_changed()

    def events(self, batch) -> None:
        self._runtime.dispatch(batch, self._outbox)

    def shard_change(self, change) -> None:
        self._runtime.stats.count("shard_changes")
        log.info("receiver %s: manager %s %s shard %s of queue %s", self._runtime.receiver_id,
                 self.target, "now serves" if change.serving else "no longer serves",
                 change.shard, change.queue)

    def ack_result(self, result: AckResult) -> None:
        self._runtime.ack_result(result)

    def extend_result(self, result) -> None:
        self._runtime.extender.answered(result)

    # ---- for the sender and the receiver

    def await_subscribed(self, timeout: float) -> Optional[StreamSession]:
        """The current stream once the manager answered Subscribed on it; None if none within
        ``timeout`` seconds, or once stopped."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self._stopped:
                s = self._current
                if s is not None and s.subscribed:
                    return s
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cond.wait(left)
            return None

    @property
    def connected(self) -> bool:
        with self._cond:
            return self._current is not None and self._current.subscribed

    @property
    def current(self) -> Optional[StreamSession]:
        with self._cond:
            return self._current

    def stop(self) -> Optional[StreamSession]:
        """No more streams are opened; waiters are released. Returns the stream still open."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
            current = self._current
        self._wake.set()
        return current

    def await_no_stream(self, timeout: float) -> bool:
        """Waits until the current stream (if any) has ended; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._current is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return True

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)


def _describe(code: str, details: str) -> str:
    return f"{code} ({details})" if details else code
