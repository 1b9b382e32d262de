"""Wire values (``sluice.v1.Value``) to Python values, without loss.

Each wire kind maps to one Python type, chosen so that nothing the database holds is rounded or
shifted:

=============  ==================================  ============================================
kind           SQL types                           Python value
=============  ==================================  ============================================
``null``       NULL                                ``None``
``int``        TINYINT..BIGINT, YEAR, BOOLEAN      ``int``
``uint``       BIGINT UNSIGNED                     ``int`` (0 .. 2**64-1)
``double``     DOUBLE, FLOAT (widened exactly)     ``float``
``decimal``    DECIMAL, NUMERIC                    ``decimal.Decimal`` with the column's scale
``string``     CHAR, VARCHAR, TEXT, ENUM, SET...   ``str``
``json``       JSON                                ``str`` (the document's text)
``bytes``      BINARY, VARBINARY, BLOB, BIT(n>1)   ``bytes``
``bool``       BIT(1)                              ``bool``
``date``       DATE                                ``datetime.date``
``datetime``   DATETIME                            naive ``datetime.datetime`` (no zone: MySQL
                                                   keeps none)
``timestamp``  TIMESTAMP                           aware ``datetime.datetime`` in UTC
``time``       TIME                                ``datetime.timedelta`` (signed)
=============  ==================================  ============================================

Python's ``datetime`` and ``timedelta`` hold microseconds, as MySQL does; a value with a finer
part (which a manager never sends) is refused with ``ValueError`` rather than rounded. A DECIMAL
is built from its text, so it keeps every digit and its scale (``Decimal("12.50")``).
"""

from __future__ import annotations

import datetime as _dt
import re
from decimal import Decimal
from typing import Any, Tuple

UTC = _dt.timezone.utc
EPOCH = _dt.datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = _dt.timedelta(microseconds=1)

# The wire's oneof field name -> the kind's name (as in the conformance contract).
_KINDS = {
    "null_value": "null",
    "int_value": "int",
    "uint_value": "uint",
    "double_value": "double",
    "string_value": "string",
    "bytes_value": "bytes",
    "decimal_value": "decimal",
    "timestamp_value": "timestamp",
    "date_value": "date",
    "datetime_value": "datetime",
    "time_value": "time",
    "bool_value": "bool",
    "json_value": "json",
}

KINDS = frozenset(_KINDS.values())

_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_DATETIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?")


def convert(value: Any) -> Tuple[str, Any]:
    """``(kind, python_value)`` of a ``sluice.v1.Value``. A kind this client does not know (a
    newer manager's) reads as ``("null", None)``, as the proto says an older reader sees it."""
    field = value.WhichOneof("kind")
    if field is None or field not in _KINDS:
        return "null", None
    kind = _KINDS[field]
    raw = getattr(value, field)
    if kind == "null":
        return kind, None
    if kind in ("int", "uint", "double", "string", "json", "bool"):
        return kind, raw
    if kind == "bytes":
        return kind, bytes(raw)
    if kind == "decimal":
        return kind, Decimal(raw)
    if kind == "date":
        return kind, parse_date(raw)
    if kind == "datetime":
        return kind, parse_datetime(raw)
    if kind == "timestamp":
        return kind, timestamp_to_datetime(raw.seconds, raw.nanos)
    return kind, duration_to_timedelta(raw.seconds, raw.nanos)


def parse_date(text: str) -> _dt.date:
    """``YYYY-MM-DD`` as a date."""
    m = _DATE.fullmatch(text)
    if not m:
        raise ValueError(f"not a DATE (YYYY-MM-DD): {text!r}")
    return _dt.date(int(m[1]), int(m[2]), int(m[3]))


def parse_datetime(text: str) -> _dt.datetime:
    """``YYYY-MM-DDTHH:MM[:SS[.f...]]`` as a naive datetime (any number of fraction digits, as long
    as nothing finer than a microsecond is set)."""
    m = _DATETIME.fullmatch(text)
    if not m:
        raise ValueError(f"not a DATETIME (YYYY-MM-DDTHH:MM:SS[.ffffff]): {text!r}")
    fraction = m[7] or ""
    micros = _fraction_micros(fraction, text)
    return _dt.datetime(
        int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5]), int(m[6] or 0), micros
    )


def _fraction_micros(fraction: str, text: str) -> int:
    if len(fraction) > 6:
        if fraction[6:].strip("0"):
            raise ValueError(f"{text!r} is finer than a microsecond: it would be rounded")
        fraction = fraction[:6]
    return int(fraction.ljust(6, "0")) if fraction else 0


def timestamp_to_datetime(seconds: int, nanos: int) -> _dt.datetime:
    """A protobuf Timestamp as an aware UTC datetime, exact to the microsecond."""
    if nanos % 1000:
        raise ValueError(f"timestamp {seconds}s {nanos}ns is finer than a microsecond")
    return EPOCH + _dt.timedelta(seconds=seconds, microseconds=nanos // 1000)


def duration_to_timedelta(seconds: int, nanos: int) -> _dt.timedelta:
    """A protobuf Duration (seconds and nanos of the same sign) as a timedelta."""
    if nanos % 1000:
        raise ValueError(f"duration {seconds}s {nanos}ns is finer than a microsecond")
    # Integer arithmetic: nanos may be negative, and // of a multiple of 1000 is exact.
    return _dt.timedelta(seconds=seconds, microseconds=nanos // 1000)


def datetime_to_micros(value: _dt.datetime) -> int:
    """An aware datetime as microseconds since the Unix epoch (exact)."""
    if value.tzinfo is None:
        raise ValueError("a naive datetime has no instant: give it a time zone")
    return (value - EPOCH) // _MICRO


def timedelta_to_micros(value: _dt.timedelta) -> int:
    """A timedelta as signed microseconds (exact)."""
    return value // _MICRO
