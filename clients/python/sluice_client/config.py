"""A receiver's settings, checked once when it is made."""

from __future__ import annotations

import dataclasses
import os
import random
import re
import socket
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence

from .event import ReceivedEvent
from .results import AckResult, Handled, StreamError, Subscription

Handler = Callable[[ReceivedEvent], None]

_HEX = re.compile(r"(?:[0-9a-f]{2})*")
_KEY_RANGE_SYNTAX = '"" (every shard) or Vitess style "-80", "80-", "40-c0"'


@dataclass(frozen=True)
class ReceiverConfig:
    """Everything a :class:`~sluice_client.Receiver` is made with; see its docstring and the
    package README ("Options") for each setting."""

    targets: Sequence[str]
    queue: str
    handler: Handler
    receiver_id: Optional[str] = None
    concurrency: int = 8
    max_in_flight: Optional[int] = None
    key_range: str = ""
    #: Extend the deadline of an event whose handler runs long, while it runs: at
    #: ``auto_extend_at`` of the hold (the queue's ack_wait) ask for one more hold, and again until
    #: the handler ends. Off, a handler may still call ``event.extend(seconds)``.
    auto_extend: bool = True
    auto_extend_at: float = 0.5
    tls_ca: Optional[str] = None
    tls_cert: Optional[str] = None
    tls_key: Optional[str] = None
    tls_server_name: Optional[str] = None
    token: Optional[str] = field(default=None, repr=False)
    reconnect_min: float = 0.1
    reconnect_max: float = 5.0
    shutdown_timeout: float = 30.0
    protocol_timeout: float = 5.0
    on_ack_result: Optional[Callable[[AckResult], None]] = None
    on_stream_error: Optional[Callable[[StreamError], None]] = None
    on_subscribed: Optional[Callable[[Subscription], None]] = None
    on_handled: Optional[Callable[[ReceivedEvent, Handled], None]] = None

    def checked(self) -> "ReceiverConfig":
        """This config with defaults filled in; ``ValueError`` naming the first bad setting."""
        targets = _check_targets(self.targets)
        if not isinstance(self.queue, str) or not self.queue.strip():
            raise ValueError("queue is required")
        if not callable(self.handler):
            raise ValueError("handler must be callable (event) -> None")
        if self.receiver_id is not None and not self.receiver_id.strip():
            raise ValueError("receiver_id must not be blank")
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, was {self.concurrency}")
        window = self.concurrency if self.max_in_flight is None else self.max_in_flight
        if window < 1:
            raise ValueError(f"max_in_flight must be >= 1, was {window}")
        if not isinstance(self.auto_extend, bool):
            raise ValueError(f"auto_extend must be a bool, was {self.auto_extend!r}")
        if not 0 < self.auto_extend_at < 1:
            raise ValueError(f"auto_extend_at must be in (0, 1), was {self.auto_extend_at}")
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("tls_cert and tls_key go together (mutual TLS)")
        if self.tls_cert is not None and self.tls_ca is None:
            raise ValueError("tls_cert needs tls_ca too")
        if self.token is not None and not self.token.strip():
            raise ValueError("token must not be blank")
        if not self.reconnect_min > 0:
            raise ValueError(f"reconnect_min must be > 0 seconds, was {self.reconnect_min}")
        if self.reconnect_max < self.reconnect_min:
            raise ValueError(
                f"reconnect_max must be >= reconnect_min, was {self.reconnect_max} < "
                f"{self.reconnect_min}"
            )
        if self.shutdown_timeout < 0:
            raise ValueError(f"shutdown_timeout must be >= 0, was {self.shutdown_timeout}")
        if not self.protocol_timeout > 0:
            raise ValueError(f"protocol_timeout must be > 0, was {self.protocol_timeout}")
        return dataclasses.replace(
            self,
            targets=targets,
            receiver_id=self.receiver_id or default_receiver_id(),
            max_in_flight=window,
            key_range=check_key_range(self.key_range),
        )


def _check_targets(targets: Sequence[str]) -> List[str]:
    if isinstance(targets, str):
        targets = [targets]
    targets = list(targets or [])
    if not targets:
        raise ValueError("targets must name at least one manager (host:port)")
    seen = set()
    for i, t in enumerate(targets):
        if not isinstance(t, str) or not t.strip():
            raise ValueError(f"targets[{i}] is blank")
        if t in seen:
            # Two streams of one receiver to one manager: a typo, not a way to get more credits.
            raise ValueError(f"targets lists {t} twice")
        seen.add(t)
    return targets


def check_key_range(key_range: Optional[str]) -> str:
    """The key range to send: ``""`` for every shard (also for None and ``"-"``), else the range
    unchanged; ``ValueError`` saying what is wrong."""
    if not key_range or key_range == "-":
        return ""
    if key_range.count("-") != 1:
        raise _bad_range(key_range, "it must be start-end with one '-'")
    start, end = key_range.split("-")
    for bound in (start, end):
        if not _HEX.fullmatch(bound):
            raise _bad_range(
                key_range, f'bound "{bound}" must be lowercase hex (0-9, a-f), whole bytes'
            )
    if end:
        n = max(len(start), len(end))
        if start.ljust(n, "0") >= end.ljust(n, "0"):
            raise _bad_range(key_range, f'start "{start}" must be below end "{end}"')
    return key_range


def _bad_range(key_range: str, why: str) -> ValueError:
    return ValueError(f'key_range must be {_KEY_RANGE_SYNTAX}, was "{key_range}": {why}')


def default_receiver_id() -> str:
    """``hostname-pid-random``: give a stable id of your own in production."""
    return f"{socket.gethostname()}-{os.getpid()}-{random.randrange(0x100000, 0x1000000):x}"
