"""One manager's sender: writes its acks and nacks in batches."""

from __future__ import annotations

import logging
import threading
from typing import Callable, List, Optional

from .completion import Completion
from .connector import Connector
from .outbox import Outbox
from .runtime import Runtime

log = logging.getLogger("sluice_client")

#: Caps one message well under gRPC's 4 MiB limit, even with long nack reasons.
MAX_BATCH = 500

#: How long a manager may be unreachable before its answers go through another one.
REROUTE_AFTER = 1.0


class AckSender:
    """The loop of one manager's sender thread (``sluice-<receiver>-sender-<n>``), the only thread
    that writes answers on that manager's streams: takes whatever completions piled up in its
    outbox, waits for a subscribed stream to the same manager and writes them as one Acks and one
    Nacks message. If the stream turned out to be gone, the same batch goes out on the next one:
    the manager decides whether an (id, epoch) still applies.

    A manager unreachable for :data:`REROUTE_AFTER` (killed, restarting) would leave its answers
    waiting while the shard's new leader redelivers those events after ``ack_wait``; so they move
    to the outbox of another manager whose stream is up. Every manager configured with a shard
    applies answers for it through the same compare-and-set on (id, epoch), leading it or not, so
    the ack takes effect and the event is not delivered again. (A manager without that shard
    answers UNKNOWN: the event comes again after ``ack_wait``, as it would have anyway.)
    """

    def __init__(
        self,
        runtime: Runtime,
        index: int,
        outbox: Outbox,
        connector: Connector,
        fallback: Callable[[Outbox], Optional[Outbox]],
        stopped: threading.Event,
    ) -> None:
        self._runtime = runtime
        self._outbox = outbox
        self._connector = connector
        self._fallback = fallback
        self._stopped = stopped
        self._rerouting = False
        self._thread = threading.Thread(
            target=self._run, name=f"sluice-{runtime.receiver_id}-sender-{index}", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def _done(self) -> bool:
        return self._runtime.silenced.is_set() or self._stopped.is_set()

    def _run(self) -> None:
        while not self._done():
            batch = self._outbox.take_batch(MAX_BATCH)
            if not batch:
                continue
            while not self._send(batch):
                if self._done():
                    log.debug("dropping %d unsent acks/nacks: receiver stopped", len(batch))
                    return
                other = self._fallback(self._outbox)
                if other is not None:
                    self._reroute(batch, other)
                    break

    def _send(self, batch: List[Completion]) -> bool:
        session = self._connector.await_subscribed(REROUTE_AFTER)
        if session is None:
            return False
        # Whatever piled up while this waited for the stream goes out in the same messages.
        self._outbox.drain_into(batch, MAX_BATCH)
        sent = session.send_completions(batch)
        if sent and self._rerouting:
            self._rerouting = False
            log.info("manager %s is reachable again: its acks/nacks go to it again",
                     self._connector.target)
        return sent

    def _reroute(self, batch: List[Completion], other: Outbox) -> None:
        """Moves the batch, and whatever else waits here, to another manager's outbox, which then
        owes the answers (added there before they leave here, so stop() never sees both empty)."""
        self._outbox.drain_into(batch, 1 << 30)
        for c in batch:
            other.add(c)
        self._outbox.answered(len(batch))
        if not self._rerouting:
            self._rerouting = True
            log.info("manager %s unreachable for %d ms: sending its acks/nacks through another "
                     "manager (%d now; every manager applies them for its shards through the same "
                     "compare-and-set)", self._connector.target, REROUTE_AFTER * 1000, len(batch))
        else:
            log.debug("manager %s still unreachable: %d acks/nacks rerouted",
                      self._connector.target, len(batch))
