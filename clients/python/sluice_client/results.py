"""The managers' answers to acks and nacks, as the application sees them."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Tuple


class AckStatus(enum.Enum):
    """How a manager took an ack or nack."""

    #: Applied.
    OK = 1
    #: The event exists but not in this attempt (timed out and fired again, or already acked):
    #: nothing changed.
    STALE = 2
    #: No such event in the queue (or, with authentication on, not delivered to this receiver):
    #: nothing changed.
    UNKNOWN = 3
    #: A status this client does not know (a newer manager's).
    UNSPECIFIED = 0

    @classmethod
    def of(cls, wire: int) -> "AckStatus":
        try:
            return cls(wire)
        except ValueError:
            return cls.UNSPECIFIED


@dataclass(frozen=True)
class AckResult:
    """One answer: the event and attempt it was for, its status, and what it did (``ACKED``,
    ``RETRY`` back to pending, ``DEAD``; empty when not applied). ``target`` is the manager that
    answered."""

    id: int
    epoch: int
    shard: str
    status: AckStatus
    outcome: str
    target: str


@dataclass(frozen=True)
class Subscription:
    """A manager answered ``Subscribed``: ``shards`` are those it dispatches the queue for now
    (possibly none: leadership may move to it later), ``max_in_flight`` the credits it granted
    (with per-principal limits, possibly fewer than asked)."""

    target: str
    shards: Tuple[str, ...]
    max_in_flight: int


@dataclass(frozen=True)
class StreamError:
    """A manager refused or broke a stream: ``code`` is the gRPC status name (``UNAUTHENTICATED``,
    ``UNAVAILABLE``, ...). The receiver retries after its backoff whatever the code."""

    target: str
    code: str
    message: str


@dataclass(frozen=True)
class Handled:
    """How one handling ended: ``outcome`` is ``"ack"`` or ``"nack"``; ``error`` what the handler
    raised (a :class:`~sluice_client.RetryLater` included), None when it returned."""

    outcome: str
    error: BaseException | None = None
