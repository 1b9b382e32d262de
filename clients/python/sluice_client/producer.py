"""Adds events to a queue through the caller's own database connection (PyMySQL, or any DB-API
driver of MySQL with ``%s`` parameters), so each event commits or rolls back with the caller's
transaction. A plain ``INSERT`` of your columns works just as well; these add scheduling, tenant,
priority, deduplication and event groups. None of them commits, rolls back or changes the
connection's autocommit: that stays the caller's.

.. code-block:: python

    conn.begin()
    insert_order(conn, order)
    producer.insert(conn, "order_events", {"order_id": order.id, "kind": "reminder"},
                    delay=timedelta(minutes=30), tenant=order.customer)
    conn.commit()
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any, List, Mapping, Optional, Union

from . import queue_columns as qc
from .values import datetime_to_micros

#: MySQL's and MariaDB's "Duplicate entry ... for key ...".
ER_DUP_ENTRY = 1062
#: MySQL's and MariaDB's "Unknown column ... in 'field list'".
ER_BAD_FIELD_ERROR = 1054

Delay = Union[_dt.timedelta, float, int, None]


@dataclass(frozen=True)
class InsertOutcome:
    """What :func:`insert_unique` did: inserted a new event (``duplicate`` False), or found the
    event that holds the key (``duplicate`` True, nothing inserted). Either way ``id`` is the
    event's id on the shard the statement ran on."""

    id: int
    duplicate: bool


def insert(
    conn,
    queue: str,
    columns: Mapping[str, Any],
    *,
    delay: Delay = None,
    fire_at: Optional[_dt.datetime] = None,
    tenant: Optional[str] = None,
    priority: Optional[int] = None,
    id: Optional[int] = None,  # noqa: A002 - the column's name
) -> int:
    """Inserts an event; returns its id.

    :param columns: your columns by name (system columns are refused: use the keywords)
    :param delay: fire this long after now, by the database's clock (``timedelta`` or seconds)
    :param fire_at: fire at this instant (an aware ``datetime``); wins over ``delay``
    :param tenant: the fairness root; None keeps the column's default
    :param priority: -128..127, lower fires first; None keeps the column's default
    :param id: an id of your choosing; None lets AUTO_INCREMENT choose
    :raises ValueError: a bad queue or column name or option (nothing is written)
    """
    sql, params = _statement(queue, columns, delay, fire_at, tenant, priority, id)
    return _execute(conn, sql, params, id)


def insert_unique(conn, queue: str, dedup_key: str, columns: Mapping[str, Any], **options):
    """Inserts an event whose ``dedup_key`` column holds ``dedup_key``, unless a row of the queue
    holds that key already: then nothing is inserted and that row's id is returned, marked
    ``duplicate``. The queue needs the ``dedup_key`` column and its UNIQUE index
    (docs/features/dedup.md); a key stays taken while its row exists.

    The statement is a plain INSERT; on the duplicate-key error (1062), which undoes that
    statement only, not the caller's transaction, the existing row's id is read by its key: a
    plain read, and when the transaction's snapshot is too old to see the row, a locking read
    (``LOCK IN SHARE MODE``). Every other error is raised as it is.

    :param dedup_key: 1 to 255 characters, compared exactly; route the event to the shard the
        key belongs to (a key is unique per shard)
    :param options: as for :func:`insert`
    :returns: :class:`InsertOutcome`
    """
    qc.require_identifier("queue name", queue)
    if not isinstance(dedup_key, str) or not 1 <= len(dedup_key) <= qc.DEDUP_KEY_MAX_CHARS:
        shown = "None" if dedup_key is None else f"{len(str(dedup_key))} characters"
        raise ValueError(
            f"queue {queue}: a dedup key must be 1 to {qc.DEDUP_KEY_MAX_CHARS} characters, "
            f"was {shown}"
        )
    with_key = _with_column(queue, columns, qc.DEDUP_KEY, dedup_key, "key")
    sql, params = _statement(queue, with_key, **_options(options))
    attempt = 0
    while True:
        attempt += 1
        try:
            return InsertOutcome(_execute(conn, sql, params, options.get("id")), False)
        except Exception as e:
            errno = _errno(e)
            if errno == ER_BAD_FIELD_ERROR and qc.DEDUP_KEY in str(e):
                raise _missing_column(e, queue, qc.DEDUP_KEY, "--dedup", "Deduplication")
            if errno != ER_DUP_ENTRY:
                raise
            existing = _existing_id(conn, queue, dedup_key)
            if existing is not None:
                return InsertOutcome(existing, True)
            # No row holds the key: the duplicate was of another key (the primary key, say),
            # which is the caller's error; or, in autocommit only, the holder was purged between.
            if not _autocommit(conn) or attempt >= 3:
                raise


def insert_in_group(conn, queue: str, group_key: str, columns: Mapping[str, Any], **options):
    """Inserts a child of the event group ``group_key`` (docs/features/groups.md): an event like
    any other whose ``group_key`` column holds the key; returns its id. The group's completion
    event (:func:`insert_group_completion`) is delivered once no child of the group is pending or
    fired. The queue needs the ``group_key`` column and its index
    (``sluice queue create --grouped``).

    :param group_key: 1 to 191 characters, compared exactly; a group's children and completion
        event must be on the same shard
    :param options: as for :func:`insert`
    """
    return _insert_with_group_column(conn, queue, qc.GROUP_KEY, group_key, columns, options,
                                     "--grouped")


def insert_group_completion(
    conn, queue: str, group_key: str, columns: Mapping[str, Any], **options
) -> int:
    """Inserts the completion event of the event group ``group_key``: its ``completes_group``
    column holds the key; returns its id. The manager delivers it once every child of the group
    is acked, dead or cancelled, with their counts (``event.group``). Commit it with the group's
    children or after them: a group sealed while none of its children is committed completes at
    once. The queue needs the ``completes_group`` column (``sluice queue create
    --completes-groups``).

    :param options: as for :func:`insert`
    """
    return _insert_with_group_column(conn, queue, qc.COMPLETES_GROUP, group_key, columns,
                                     options, "--completes-groups")


def _insert_with_group_column(conn, queue, column, group_key, columns, options, create_flag):
    qc.require_identifier("queue name", queue)
    if not isinstance(group_key, str) or not 1 <= len(group_key) <= qc.GROUP_KEY_MAX_CHARS:
        shown = repr(group_key) if group_key is None else f"{len(str(group_key))} characters"
        raise ValueError(
            f"queue {queue}: a group key must be 1 to {qc.GROUP_KEY_MAX_CHARS} characters, was "
            f"{shown}"
        )
    with_key = _with_column(queue, columns, column, group_key, "group key")
    sql, params = _statement(queue, with_key, **_options(options))
    try:
        return _execute(conn, sql, params, options.get("id"))
    except Exception as e:
        if _errno(e) == ER_BAD_FIELD_ERROR and column in str(e):
            raise _missing_column(e, queue, column, create_flag, "Event groups")
        raise


def _options(options: Mapping[str, Any]) -> dict:
    allowed = {"delay", "fire_at", "tenant", "priority", "id"}
    unknown = set(options) - allowed
    if unknown:
        raise TypeError(f"unknown option(s) {sorted(unknown)}; known: {sorted(allowed)}")
    return dict(options)


def _with_column(queue, columns, column, key, what) -> dict:
    given = columns.get(column)
    if given is not None and given != key:
        raise ValueError(
            f"queue {queue}: column {column} is {given!r} but the {what} given is {key!r}"
        )
    out = dict(columns)
    out[column] = key
    return out


def _statement(queue, columns, delay=None, fire_at=None, tenant=None, priority=None, id=None):
    qc.require_identifier("queue name", queue)
    names: List[str] = []
    placeholders: List[str] = []
    params: List[Any] = []
    for name, value in columns.items():
        qc.require_identifier("column name", name)
        if name in qc.SYSTEM_COLUMNS and name != qc.ACTOR:
            raise ValueError(
                f"queue {queue}: column {name!r} is a system column; set it with the keyword "
                "options instead"
            )
        names.append(f"`{name}`")
        placeholders.append("%s")
        params.append(value)
    if id is not None:
        names.append(f"`{qc.ID}`")
        placeholders.append("%s")
        params.append(int(id))
    if fire_at is not None:
        if not isinstance(fire_at, _dt.datetime):
            raise ValueError(f"fire_at must be an aware datetime, was {fire_at!r}")
        names.append(f"`{qc.TIME_NEXT}`")
        placeholders.append("%s")
        params.append(datetime_to_micros(fire_at) * 1000)
    elif delay is not None:
        ns = _delay_ns(delay)
        if ns > 0:
            names.append(f"`{qc.TIME_NEXT}`")
            placeholders.append(f"{qc.NOW_NS_SQL} + %s")
            params.append(ns)
    if tenant is not None:
        names.append(f"`{qc.TENANT}`")
        placeholders.append("%s")
        params.append(tenant)
    if priority is not None:
        if isinstance(priority, bool) or not -128 <= int(priority) <= 127:
            raise ValueError(f"priority must be in -128..127, was {priority!r}")
        names.append(f"`{qc.PRIORITY}`")
        placeholders.append("%s")
        params.append(int(priority))
    sql = f"INSERT INTO `{queue}` ({', '.join(names)}) VALUES ({', '.join(placeholders)})"
    return sql, params


def _delay_ns(delay) -> int:
    if isinstance(delay, _dt.timedelta):
        ns = (delay // _dt.timedelta(microseconds=1)) * 1000
    else:
        ns = round(float(delay) * 1_000_000_000)
    if ns < 0:
        raise ValueError(f"delay must not be negative, was {delay!r}")
    return ns


def _execute(conn, sql: str, params: List[Any], given_id: Optional[int]) -> int:
    cur = conn.cursor()
    try:
        cur.execute(sql, params)
        if given_id is not None:
            return int(given_id)
        if not cur.lastrowid:
            raise RuntimeError(f"the insert returned no id: {sql}")
        return int(cur.lastrowid)
    finally:
        cur.close()


def _existing_id(conn, queue: str, key: str) -> Optional[int]:
    """The id of the row holding ``key``: first a plain read (it touches only the key's index
    entry, which the failed INSERT share-locked), then, when the transaction's snapshot predates
    the row's commit, a locking read, which sees the latest committed row."""
    sql = f"SELECT `{qc.ID}` FROM `{queue}` WHERE `{qc.DEDUP_KEY}` = %s"
    for statement in (sql, sql + " LOCK IN SHARE MODE"):
        cur = conn.cursor()
        try:
            cur.execute(statement, (key,))
            row = cur.fetchone()
        finally:
            cur.close()
        if row is not None:
            return int(row[0] if not isinstance(row, dict) else row[qc.ID])
    return None


def _errno(e: BaseException) -> Optional[int]:
    args = getattr(e, "args", ())
    return args[0] if args and isinstance(args[0], int) else None


def _autocommit(conn) -> bool:
    get = getattr(conn, "get_autocommit", None)
    return bool(get()) if callable(get) else False


def _missing_column(e: BaseException, queue, column, create_flag, readme) -> BaseException:
    message = (
        f"queue {queue} has no {column} column (sluice queue create {create_flag} adds it: "
        f"README, {readme}): {e.args[1] if len(e.args) > 1 else e}"
    )
    try:
        new = type(e)(e.args[0], message)
    except Exception:
        new = RuntimeError(message)
    new.__cause__ = e
    return new
