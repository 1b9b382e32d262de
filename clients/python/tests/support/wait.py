"""Waiting for a condition with a deadline (the tests' Awaitility): never a bare sleep."""

from __future__ import annotations

import time
from typing import Callable, Optional, TypeVar

T = TypeVar("T")


def wait_until(
    condition: Callable[[], T],
    timeout: float,
    what: str,
    on_timeout: Optional[Callable[[], str]] = None,
    interval: float = 0.05,
) -> T:
    """Polls ``condition`` until it returns something truthy, and returns that; fails the test
    naming ``what`` (and ``on_timeout()``'s text, e.g. a log tail) after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            detail = f"\n{on_timeout()}" if on_timeout else ""
            raise AssertionError(f"timed out after {timeout} s waiting for {what}{detail}")
        time.sleep(interval)
