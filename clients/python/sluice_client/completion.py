"""One handled event's answer, waiting to be sent to a manager."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

from ._proto import pb

Ref = Tuple[int, int, str]


@dataclass(frozen=True)
class Completion:
    """An ack, a nack, or a notice that the handler acked in its own transaction (``committed``:
    the manager answers nothing for those)."""

    id: int
    epoch: int
    shard: str
    token: bytes
    ack: bool
    committed: bool = False
    retry_after_ms: int = 0
    reason: str = ""
    #: A nack that spends no attempt (:class:`~sluice_client.errors.Snooze`).
    snooze: bool = False

    @property
    def ref(self) -> Ref:
        """How an AckResult names the attempt it answers."""
        return (self.id, self.epoch, self.shard)

    def event_ref(self):
        return pb.EventRef(id=self.id, epoch=self.epoch, shard=self.shard, delivery_token=self.token)


#: A nack's reason is cut to this many bytes by the manager; sent shorter, it stays valid UTF-8.
MAX_REASON_BYTES = 1024


def cut_reason(reason: str) -> str:
    data = reason.encode("utf-8")
    if len(data) <= MAX_REASON_BYTES:
        return reason
    return data[:MAX_REASON_BYTES].decode("utf-8", errors="ignore")
