"""Counters of one receiver, and the snapshot the application reads."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Dict


@dataclass(frozen=True)
class ReceiverStats:
    """What a receiver did since it started. ``in_flight`` counts events queued or being handled
    now; ``streams_connected`` the managers whose stream is subscribed now."""

    received: int
    acked: int
    nacked: int
    results_ok: int
    results_stale: int
    results_unknown: int
    reconnects: int
    shard_changes: int
    in_flight: int
    streams_connected: int


class StatsCounters:
    """Thread-safe counters, bumped from every thread of the receiver."""

    _NAMES = (
        "received",
        "acked",
        "nacked",
        "results_ok",
        "results_stale",
        "results_unknown",
        "reconnects",
        "shard_changes",
    )

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Dict[str, int] = {n: 0 for n in self._NAMES}

    def count(self, name: str, n: int = 1) -> None:
        with self._lock:
            self._counts[name] += n

    def snapshot(self, in_flight: int, streams_connected: int) -> ReceiverStats:
        with self._lock:
            return ReceiverStats(
                in_flight=in_flight, streams_connected=streams_connected, **self._counts
            )
