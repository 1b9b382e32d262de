"""What every manager's connection and sender share within one receiver."""

from __future__ import annotations

import logging
import threading
from typing import Callable, Optional, Sequence, Tuple

from ._proto import pb
from .extender import Extender
from .results import AckResult, AckStatus, StreamError, Subscription
from .stats import StatsCounters

log = logging.getLogger("sluice_client")


class Runtime:
    """The receiver's shared state, handed to each manager's connector and sender: its identity,
    the call metadata, the current credits, the stop flags, the counters, and the way to the
    dispatcher and to the application's callbacks. Callbacks run on the thread that calls them
    (a connection thread); one that raises is logged and ignored.

    ``silenced`` is set by ``abort()``: nothing may be sent after it. ``closing`` tells whether
    ``stop()`` began.
    """

    def __init__(
        self,
        receiver_id: str,
        queue: str,
        key_range: str,
        max_in_flight: int,
        metadata: Sequence[Tuple[str, str]],
        stats: StatsCounters,
        closing: Callable[[], bool],
        dispatch: Callable[[object, object], None],
        streams_changed: Callable[[], None],
        on_ack_result: Optional[Callable[[AckResult], None]],
        on_stream_error: Optional[Callable[[StreamError], None]],
        on_subscribed: Optional[Callable[[Subscription], None]] = None,
    ) -> None:
        self.receiver_id = receiver_id
        self.queue = queue
        self.key_range = key_range
        self.max_in_flight = max_in_flight
        self.metadata = tuple(metadata)
        self.stats = stats
        self.silenced = threading.Event()
        self.closing = closing
        self.dispatch = dispatch
        self.streams_changed = streams_changed
        self._on_ack_result = on_ack_result
        self._on_stream_error = on_stream_error
        self._on_subscribed = on_subscribed
        #: Sends deadline extensions and matches their answers (set up by the receiver).
        self.extender = Extender()

    def subscribe_message(self):
        """The Subscribe of a new stream, with the credits as they are now."""
        return pb.Subscribe(
            queue=self.queue,
            receiver_id=self.receiver_id,
            max_in_flight=self.max_in_flight,
            key_range=self.key_range,
        )

    def ack_result(self, result: AckResult) -> None:
        name = {
            AckStatus.OK: "results_ok",
            AckStatus.STALE: "results_stale",
            AckStatus.UNKNOWN: "results_unknown",
        }.get(result.status)
        if name:
            self.stats.count(name)
        if result.status is not AckStatus.OK:
            log.debug("receiver %s: manager %s answered %s for event %d (epoch %d, shard %s)",
                      self.receiver_id, result.target, result.status.name, result.id,
                      result.epoch, result.shard)
        if self._on_ack_result is not None:
            try:
                self._on_ack_result(result)
            except Exception:
                log.exception("receiver %s: on_ack_result raised; ignored", self.receiver_id)

    def subscribed(self, subscription: Subscription) -> None:
        if self._on_subscribed is not None:
            try:
                self._on_subscribed(subscription)
            except Exception:
                log.exception("receiver %s: on_subscribed raised; ignored", self.receiver_id)

    def stream_error(self, error: StreamError) -> None:
        if self._on_stream_error is not None:
            try:
                self._on_stream_error(error)
            except Exception:
                log.exception("receiver %s: on_stream_error raised; ignored", self.receiver_id)
