"""Exponential reconnect backoff with jitter."""

from __future__ import annotations

import random
import threading
from typing import Callable, Optional


class Backoff:
    """The n-th consecutive failure waits a random time in [base/2, base], where base is
    ``minimum * 2**n`` capped at ``maximum``, and the result is clamped to [minimum, maximum]:
    100 ms, 200 ms, 400 ms ... up to 5 s by default. Jitter keeps a fleet of receivers that lost
    the same manager from reconnecting in lockstep. :meth:`reset` once a stream is subscribed
    again. Thread-safe.

    ``rand`` returns a float in [0, 1) (tests give their own).
    """

    def __init__(
        self,
        minimum: float = 0.1,
        maximum: float = 5.0,
        rand: Optional[Callable[[], float]] = None,
    ) -> None:
        if not minimum > 0:
            raise ValueError(f"reconnect backoff minimum must be > 0 seconds, was {minimum}")
        if maximum < minimum:
            raise ValueError(f"reconnect backoff maximum {maximum} is below its minimum {minimum}")
        self.minimum = minimum
        self.maximum = maximum
        self._rand = rand or random.random
        self._failures = 0
        self._lock = threading.Lock()

    def next_delay(self) -> float:
        """Seconds to wait before the next attempt; counts one more failure."""
        with self._lock:
            base = self.minimum
            for _ in range(self._failures):
                if base >= self.maximum:
                    break
                base *= 2
            base = min(base, self.maximum)
            self._failures = min(self._failures + 1, 62)
        half = base / 2
        jittered = half + (base - half) * self._rand()
        return max(self.minimum, min(self.maximum, jittered))

    def reset(self) -> None:
        """The next failure starts from the minimum again."""
        with self._lock:
            self._failures = 0
