import { markAckedInTransaction, type ReceivedEvent } from './event';
import type { SqlConnection } from './producer';
import { QueueColumns, requireIdentifier } from './queue-columns';

/** Per database and table: whether `state` is an ENUM (else TINYINT codes). */
const ENUM_STATE = new Map<string, boolean>();

/**
 * The ack statement for `table` (the manager's own compare-and-set): `fired → acked` guarded by the
 * id, the state and the delivered epoch, with the id and then the epoch as parameters.
 */
export function transactionalAckSql(table: string, enumState: boolean): string {
  requireIdentifier('queue table name', table);
  const acked = enumState ? "'acked'" : '2';
  const fired = enumState ? "'fired'" : '1';
  const now = QueueColumns.NOW_NS_SQL;
  return (
    `update \`${table}\` set \`state\` = ${acked}, \`time_acked\` = ${now}, \`time_next\` = ${now}` +
    ` where \`id\` in (?) and \`state\` = ${fired} and \`epoch\` = ?`
  );
}

/**
 * Acks `event` inside the handler's own database transaction, so that the handler's writes and the
 * ack commit together or not at all (as the Java SDK's TransactionalAck):
 *
 * ```ts
 * handler: async (event) => {
 *   const conn = await pool.getConnection();
 *   try {
 *     await conn.beginTransaction();
 *     await conn.query('INSERT INTO shipments (order_id) VALUES (?)', [event.getBigInt('order_id')]);
 *     if (!(await transactionalAck(conn, event))) { await conn.rollback(); return; }
 *     await conn.commit();
 *   } catch (e) { await conn.rollback(); throw e; } finally { conn.release(); }
 * }
 * ```
 *
 * The connection must reach the database holding the event's queue table (its shard) and be
 * inside a transaction (`beginTransaction()`): in auto-commit mode the ack would commit alone.
 * Resolves true when the ack applied (the row was fired at the delivered epoch): when the handler
 * then returns normally, the receiver tells the manager the ack is committed, and the manager lets
 * go of the event without an UPDATE of its own. False when this attempt no longer applies (it
 * timed out and was fired again, or was acked already): roll back your writes.
 */
export async function transactionalAck(conn: SqlConnection, event: ReceivedEvent): Promise<boolean> {
  const table = event.queue;
  const enumState = await isEnumState(conn, table);
  const [result] = await conn.query(transactionalAckSql(table, enumState), [event.id, event.epoch]);
  const applied = (result as { affectedRows?: number }).affectedRows === 1;
  if (applied) {
    markAckedInTransaction(event);
  }
  return applied;
}

async function isEnumState(conn: SqlConnection, table: string): Promise<boolean> {
  const [dbRows] = await conn.query('SELECT DATABASE() AS db');
  const schema = (dbRows as Array<{ db: string | null }>)[0]?.db ?? '';
  const key = `${schema}.${table}`;
  const known = ENUM_STATE.get(key);
  if (known !== undefined) {
    return known;
  }
  const [rows] = await conn.query(
    'SELECT DATA_TYPE AS t FROM information_schema.COLUMNS' +
      " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = 'state'",
    [table],
  );
  const type = (rows as Array<{ t: string | Buffer }>)[0]?.t;
  if (type === undefined) {
    throw new Error(
      `queue table ${table} with a state column not found in database ${schema}: is this ` +
        `connection to the event's shard?`,
    );
  }
  const isEnum = String(type).toLowerCase() === 'enum';
  ENUM_STATE.set(key, isEnum);
  return isEnum;
}
