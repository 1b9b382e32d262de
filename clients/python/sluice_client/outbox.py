"""One manager's answers waiting to be sent, and what it is still owed."""

from __future__ import annotations

import collections
import threading
import time
from typing import Deque, Iterable, List, Optional

from .completion import Completion


class Outbox:
    """Completed handlings of the events one manager sent, waiting for that manager's sender;
    plus the count of answers it has not acknowledged with an AckResult yet and of its events
    still being handled.

    Threads: handler threads :meth:`add`; the endpoint's one sender thread :meth:`take_batch`;
    its connection thread calls :meth:`answered` and :meth:`requeue`; :meth:`stop` from any. One
    condition guards everything. Batching comes for free: the sender blocks until one completion
    is there (no delay when idle), then takes all that piled up while it was busy sending.
    """

    def __init__(self) -> None:
        self._queue: Deque[Completion] = collections.deque()
        self._cond = threading.Condition()
        self._unanswered = 0
        self._handling = 0
        self._stopped = False

    def handling_started(self) -> None:
        with self._cond:
            self._handling += 1

    def handling_ended(self) -> None:
        with self._cond:
            self._handling -= 1
            self._cond.notify_all()

    def owes_work(self) -> bool:
        """True while an event of this manager is being handled or an answer is unacknowledged."""
        with self._cond:
            return self._handling > 0 or self._unanswered > 0

    def add(self, completion: Completion) -> None:
        with self._cond:
            self._unanswered += 1
            self._queue.append(completion)
            self._cond.notify_all()

    def requeue(self, completions: Iterable[Completion]) -> None:
        """Puts back answers sent on a stream that ended before they were acknowledged, ahead of
        newer ones: the next stream sends them again (a manager answers STALE for any that took
        effect)."""
        with self._cond:
            self._queue.extendleft(reversed(list(completions)))
            self._cond.notify_all()

    def take_batch(self, limit: int, timeout: Optional[float] = None) -> List[Completion]:
        """Blocks until at least one completion is queued (or ``timeout`` seconds, or stop), then
        takes up to ``limit``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not self._queue and not self._stopped:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return []
                self._cond.wait(left)
            return self._pop(limit)

    def drain_into(self, batch: List[Completion], limit: int) -> None:
        """Tops ``batch`` up to ``limit`` with what was queued meanwhile, without blocking."""
        with self._cond:
            batch.extend(self._pop(limit - len(batch)))

    def _pop(self, n: int) -> List[Completion]:
        out = []
        while self._queue and len(out) < n:
            out.append(self._queue.popleft())
        return out

    def answered(self, count: int) -> None:
        """The manager answered ``count`` completions (or they moved to another outbox)."""
        with self._cond:
            self._unanswered -= count
            self._cond.notify_all()

    @property
    def unanswered(self) -> int:
        with self._cond:
            return self._unanswered

    def await_answered(self, timeout: float) -> bool:
        """Waits until every added completion was answered; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._unanswered > 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return True

    def stop(self) -> None:
        """Wakes a sender waiting in :meth:`take_batch` for good."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
