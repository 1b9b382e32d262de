"""Acks an event inside the handler's own database transaction."""

from __future__ import annotations

import threading
from typing import Dict, Tuple

from . import queue_columns as qc
from .event import ReceivedEvent

_enum_state: Dict[Tuple[str, str], bool] = {}
_lock = threading.Lock()


def ack_sql(table: str, enum_state: bool) -> str:
    """The manager's own ack for ``table`` (``fired → acked``, guarded by the id, the state and
    the delivered epoch; ``time_acked`` and ``time_next`` set to the database's now), with the id
    and then the epoch as parameters. ``enum_state``: the ``state`` column is an ENUM of the
    state names rather than the default TINYINT codes."""
    qc.require_identifier("queue table name", table)
    acked = "'acked'" if enum_state else str(qc.STATE_CODES["acked"])
    fired = "'fired'" if enum_state else str(qc.STATE_CODES["fired"])
    return (
        f"update `{table}` set `{qc.STATE}` = {acked}, `{qc.TIME_ACKED}` = {qc.NOW_NS_SQL}, "
        f"`{qc.TIME_NEXT}` = {qc.NOW_NS_SQL} "
        f"where `{qc.ID}` in (%s) and `{qc.STATE}` = {fired} and `{qc.EPOCH}` = %s"
    )


def ack_in_transaction(conn, event: ReceivedEvent) -> bool:
    """Runs the ack's compare-and-set on ``conn``, inside the caller's transaction, so that the
    handler's writes and the ack commit together or not at all. Returns True when it applied (the
    row was fired at the delivered epoch): when the handler then commits and returns, the
    receiver tells the manager the ack is committed (``Acks.committed``) and the manager lets go
    of the event without an UPDATE of its own. Returns False when this attempt no longer applies
    (it timed out and was fired again, or was acked already): roll back your writes.

    The connection must reach the database holding the event's queue table (the event's shard)
    and be inside a transaction: ``ValueError`` in autocommit mode, where the ack would commit
    without the handler's writes.

    .. code-block:: python

        def handle(event):
            conn.begin()
            insert_shipment(conn, event["order_id"])
            if ack_in_transaction(conn, event):
                conn.commit()
            else:
                conn.rollback()
    """
    get = getattr(conn, "get_autocommit", None)
    if callable(get) and get():
        raise ValueError(
            f"{event.describe()}: a transactional ack needs a connection inside a transaction "
            "(autocommit off); in autocommit mode it would commit without the handler's writes"
        )
    enum_state = _is_enum_state(conn, event.queue)
    cur = conn.cursor()
    try:
        applied = cur.execute(ack_sql(event.queue, enum_state), (event.id, event.epoch)) == 1
    finally:
        cur.close()
    if applied:
        event._mark_acked_in_transaction()
    return applied


def _is_enum_state(conn, table: str) -> bool:
    cur = conn.cursor()
    try:
        cur.execute("SELECT DATABASE()")
        schema = cur.fetchone()[0]
        key = (schema, table)
        with _lock:
            known = _enum_state.get(key)
        if known is not None:
            return known
        cur.execute(
            "SELECT DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() "
            "AND TABLE_NAME = %s AND COLUMN_NAME = 'state'",
            (table,),
        )
        row = cur.fetchone()
    finally:
        cur.close()
    if row is None:
        raise ValueError(
            f"queue table {table} with a state column not found in database {schema}: is this "
            "connection to the event's shard?"
        )
    is_enum = str(row[0]).lower() == "enum"
    with _lock:
        _enum_state[key] = is_enum
    return is_enum
