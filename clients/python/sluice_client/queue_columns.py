"""What a producer needs of the queue-table convention (README, "The queue table"): the system
columns' names, the identifier rule, and the database's "now" in nanoseconds."""

from __future__ import annotations

import re

ID = "id"
TIME_NEXT = "time_next"
STATE = "state"
EPOCH = "epoch"
PRIORITY = "priority"
TENANT = "tenant"
ACTOR = "actor"
CLASS = "class"
TIME_CREATED = "time_created"
TIME_ACKED = "time_acked"

#: Columns the manager owns (``actor`` is optional and may be written). Everything else is yours.
SYSTEM_COLUMNS = frozenset(
    {ID, TIME_NEXT, STATE, EPOCH, PRIORITY, TENANT, ACTOR, CLASS, TIME_CREATED, TIME_ACKED}
)

#: The optional deduplication column (docs/features/dedup.md), with its UNIQUE index.
DEDUP_KEY = "dedup_key"
DEDUP_KEY_MAX_CHARS = 255

#: The optional column of a group's children, and that of a completion event
#: (docs/features/groups.md).
GROUP_KEY = "group_key"
COMPLETES_GROUP = "completes_group"
GROUP_KEY_MAX_CHARS = 191

#: The server's now in ns since the epoch, zone-free (the same instant whatever the session's
#: time_zone), as the manager's clock and the tables' defaults compute it.
NOW_NS_SQL = "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000)"

#: The state codes of a queue whose ``state`` column is the default TINYINT.
STATE_CODES = {"pending": 0, "fired": 1, "acked": 2, "dead": 3, "cancelled": 4}

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def require_identifier(what: str, name: object) -> str:
    """``name`` if it is a plain SQL identifier, else ``ValueError`` saying so."""
    if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
        raise ValueError(
            f"{what} must be 1-64 letters, digits or underscores, not starting with a digit: "
            f"{name!r}"
        )
    return name
