"""One delivery of an event to this receiver, with its columns as exact Python values."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Mapping, Optional, Union

from . import values


@dataclass(frozen=True)
class GroupOutcome:
    """What became of an event group's children, on the group's completion event
    (docs/features/groups.md): counted once, when the group completed."""

    key: str
    acked: int
    dead: int
    cancelled: int


class ReceivedEvent:
    """A read-only view of one delivered ``sluice.v1.Event``.

    ``columns`` maps each user column to its Python value (the table in :mod:`sluice_client.values`);
    ``column_kind(name)`` tells the wire kind behind it (``"json"`` and ``"string"`` are both
    ``str``; ``"int"`` and ``"uint"`` both ``int``). Identify an event by ``(shard, id)``: ids are
    unique per queue within a shard. ``epoch`` is this attempt; it grows by one with each.

    Made on a connection thread before the handler runs; immutable, so safe to share.
    """

    __slots__ = ("_raw", "_columns", "_kinds", "_acked_in_transaction", "_extend", "_deadline_ns")

    def __init__(self, raw: Any) -> None:
        self._raw = raw
        cols = {}
        kinds = {}
        # Sorted, so that iteration does not depend on the wire order of the proto map.
        for name in sorted(raw.columns):
            try:
                kinds[name], cols[name] = values.convert(raw.columns[name])
            except ValueError as e:
                raise ValueError(f"column {name!r} of {self._describe()}: {e}") from e
        self._columns = MappingProxyType(cols)
        self._kinds = MappingProxyType(kinds)
        self._acked_in_transaction = False
        self._extend: Optional[Callable[[float], float]] = None
        self._deadline_ns = raw.time_deadline_ns

    @property
    def id(self) -> int:
        return self._raw.id

    @property
    def epoch(self) -> int:
        """The delivery attempt; the ack or nack carries it back."""
        return self._raw.epoch

    @property
    def queue(self) -> str:
        return self._raw.queue

    @property
    def shard(self) -> str:
        return self._raw.shard

    @property
    def tenant(self) -> str:
        return self._raw.tenant

    @property
    def priority(self) -> int:
        return self._raw.priority

    @property
    def last_attempt(self) -> bool:
        """True when a failure of this delivery (a nack, a timeout) makes the event dead."""
        return self._raw.last_attempt

    @property
    def due_time_ns(self) -> int:
        """When the event became due, ns since the Unix epoch (database clock)."""
        return self._raw.time_due_ns

    @property
    def created_time_ns(self) -> int:
        return self._raw.time_created_ns

    @property
    def fired_time_ns(self) -> int:
        """When the manager fired this attempt, ns since the Unix epoch (database clock)."""
        return self._raw.time_fired_ns

    @property
    def deadline(self) -> Optional[_dt.datetime]:
        """When the manager takes this attempt back unless it is acked or extended (an aware UTC
        datetime, database clock), moved by each successful :meth:`extend`; None from a manager
        older than extensions."""
        if self._deadline_ns <= 0:
            return None
        return values.EPOCH + _dt.timedelta(microseconds=self._deadline_ns // 1000)

    @property
    def hold_seconds(self) -> float:
        """This attempt's hold (deadline − fire: the queue's ack_wait) in seconds; 0 if unknown."""
        d, f = self._raw.time_deadline_ns, self._raw.time_fired_ns
        return (d - f) / 1e9 if d > 0 and d > f else 0.0

    def extend(self, seconds: Union[float, int, _dt.timedelta]) -> _dt.datetime:
        """Asks the manager to move this attempt's deadline to now + ``seconds`` (never earlier
        than it is, at most the fire time + the queue's max_hold) and returns the new deadline.
        Raises :class:`ExtensionRefused` (``status`` STALE, UNKNOWN or LIMIT) when refused, or
        another error when no manager answered (try again)."""
        s = seconds.total_seconds() if isinstance(seconds, _dt.timedelta) else float(seconds)
        if not s > 0 or s == float("inf"):
            raise ValueError(f"extend: seconds must be > 0, was {seconds!r}")
        if self._extend is None:
            raise RuntimeError(f"{self._describe()} was not delivered by a receiver: it cannot "
                               "be extended")
        deadline = self._extend(s)
        ns = int(deadline * 1e9)
        if ns > self._deadline_ns:
            self._deadline_ns = ns
        return values.EPOCH + _dt.timedelta(microseconds=ns // 1000)

    @property
    def due_time(self) -> _dt.datetime:
        """``due_time_ns`` as an aware UTC datetime (to the microsecond, rounded down)."""
        return values.EPOCH + _dt.timedelta(microseconds=self._raw.time_due_ns // 1000)

    @property
    def ordering_key(self) -> Optional[str]:
        """For an ordered queue, the event's ordering key as text; None otherwise."""
        return self._raw.ordering_key if self._raw.HasField("ordering_key") else None

    @property
    def group(self) -> Optional[GroupOutcome]:
        """For a group's completion event, what became of its children; None otherwise."""
        if not self._raw.HasField("group"):
            return None
        g = self._raw.group
        return GroupOutcome(g.key, g.acked, g.dead, g.cancelled)

    @property
    def delivery_token(self) -> bytes:
        """Opaque; the receiver sends it back with the answer by itself."""
        return bytes(self._raw.delivery_token)

    @property
    def columns(self) -> Mapping[str, Any]:
        """The user columns by name, as Python values (read-only)."""
        return self._columns

    def column_kind(self, name: str) -> str:
        """The wire kind of a column: ``null``, ``int``, ``uint``, ``double``, ``decimal``,
        ``string``, ``json``, ``bytes``, ``bool``, ``date``, ``datetime``, ``timestamp``,
        ``time``."""
        self._present(name)
        return self._kinds[name]

    def __getitem__(self, name: str) -> Any:
        """A column's value; ``KeyError`` naming the event when it has no such column."""
        self._present(name)
        return self._columns[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self._columns.get(name, default)

    @property
    def acked_in_transaction(self) -> bool:
        """True once :func:`~sluice_client.ack_in_transaction` applied this attempt's ack in the
        handler's transaction: when the handler then returns, the manager is told the ack is
        committed instead of being asked to apply it."""
        return self._acked_in_transaction

    def _mark_acked_in_transaction(self) -> None:
        self._acked_in_transaction = True

    @property
    def raw(self) -> Any:
        """The ``sluice.v1.Event`` message as received."""
        return self._raw

    def _present(self, name: str) -> None:
        if name not in self._columns:
            raise KeyError(
                f"{self._describe()} has no column {name!r} (columns: {list(self._columns)})"
            )

    def _describe(self) -> str:
        r = self._raw
        return f"event {r.id} of queue {r.queue} (shard {r.shard})"

    def describe(self) -> str:
        """``event <id> of queue <queue> (shard <shard>)``, for messages."""
        return self._describe()

    def __repr__(self) -> str:
        return (
            f"ReceivedEvent(id={self.id}, epoch={self.epoch}, queue={self.queue!r}, "
            f"shard={self.shard!r})"
        )
