"""What a handler raises to choose how its event is nacked, and what a refused extension raises."""

from __future__ import annotations

import datetime as _dt
import math
from typing import Union

Delay = Union[float, int, _dt.timedelta]


class RetryLater(Exception):
    """Raised by a handler to nack its event and have it retried no sooner than ``delay`` from
    now (seconds, or a ``timedelta``). A zero delay means the queue's own backoff. Any other
    exception nacks the event with the queue's backoff too, and is logged."""

    def __init__(self, delay: Delay = 0, reason: str = "") -> None:
        super().__init__(reason)
        seconds = delay.total_seconds() if isinstance(delay, _dt.timedelta) else float(delay)
        if not seconds >= 0 or math.isinf(seconds):
            raise ValueError(f"RetryLater delay must be >= 0 seconds, was {delay!r}")
        self.delay_seconds = seconds
        self.reason = reason

    @property
    def retry_after_ms(self) -> int:
        """The delay in whole milliseconds, a sub-millisecond one rounded up (0 on the wire means
        the queue's backoff)."""
        if self.delay_seconds == 0:
            return 0
        return max(1, math.ceil(self.delay_seconds * 1000))


class Snooze(RetryLater):
    """Raised by a handler to put its event back to pending for ``delay`` (seconds, or a
    ``timedelta``; more than 0) *without spending an attempt*: "not yet", not "failed". The queue
    table counts snoozes in its optional ``snoozes`` column (an event's attempts are then
    ``epoch - snoozes``); an event snoozed ``max_snoozes`` times, or one of a table without that
    column, has the snooze count as a failed attempt, as a :class:`RetryLater` would. The snoozed
    delivery is over: a late ack of it changes nothing, and the event comes again at the next
    epoch."""

    def __init__(self, delay: Delay, reason: str = "") -> None:
        super().__init__(delay, reason)
        if not self.delay_seconds > 0:
            raise ValueError(f"a snooze's delay must be > 0 seconds, was {delay!r}")


class ExtensionRefused(Exception):
    """A manager refused to extend an event's deadline: ``status`` is ``"STALE"`` (the attempt is
    over: acked, taken back, fired again), ``"UNKNOWN"`` (no such event) or ``"LIMIT"`` (at the
    queue's max_hold; ``deadline``, seconds since the epoch, is the deadline the row holds)."""

    def __init__(self, status: str, message: str, deadline: "float | None" = None) -> None:
        super().__init__(message)
        self.status = status
        self.deadline = deadline
