import { QueueColumns, requireIdentifier, SYSTEM_COLUMNS } from './queue-columns';
import { Timestamp } from './values';

/**
 * The part of a mysql2 promise connection (`mysql2/promise`'s Connection or PoolConnection, or
 * `conn.promise()` of a callback one) the producer uses.
 */
export interface SqlConnection {
  query(sql: string, values?: unknown[]): Promise<[unknown, unknown]>;
}

/** When and how an event fires. */
export interface EventOptions {
  /** Fire this long after now, by the database's clock (0 or absent: now). */
  delayMs?: number;
  /** Fire at this instant (the application's clock); wins over delayMs. */
  fireAt?: Date | Timestamp;
  /** Fairness root; absent keeps the column's default (''). */
  tenant?: string;
  /** -128..127, lower fires first; absent keeps the column's default. */
  priority?: number;
  /** An id of the application's choosing; absent lets AUTO_INCREMENT choose. */
  id?: bigint | number;
}

/** What insertUnique did: inserted a new event, or found the one holding the key. */
export interface InsertOutcome {
  /** The new event's id, or the existing event's. */
  readonly id: bigint;
  /** True when a row held the key and nothing was inserted. */
  readonly duplicate: boolean;
}

/** Column values by name: a plain object or a Map; values as mysql2 takes them. */
export type Columns = Record<string, unknown> | Map<string, unknown>;

const ER_DUP_ENTRY = 1062;
const ER_BAD_FIELD_ERROR = 1054;

/**
 * Adds events to a queue on the caller's own mysql2 connection, so that an event commits or rolls
 * back with the caller's transaction (this helper never begins, commits nor rolls back). A plain
 * INSERT of the user columns works just as well; this adds scheduling, tenant, priority,
 * deduplication and event groups, as the Java client's EventProducer. Ids come back as `bigint`.
 */
export class EventProducer {
  private constructor() {}

  /** Inserts an event; resolves to its id. */
  static async insert(
    conn: SqlConnection,
    queue: string,
    columns: Columns,
    options: EventOptions = {},
  ): Promise<bigint> {
    return execute(conn, queue, statement(queue, entries(columns), options), options);
  }

  /**
   * Inserts an event whose `dedup_key` holds `dedupKey`, unless a row of the queue holds that key
   * already: then nothing is inserted and that row's id comes back, marked duplicate
   * (docs/features/dedup.md). The duplicate-key error undoes that statement only, not the caller's
   * transaction; the existing id is then read by its key, plainly, and when the transaction's
   * snapshot is too old to see the row, with a locking read. Every other error is thrown as it is.
   */
  static async insertUnique(
    conn: SqlConnection,
    queue: string,
    dedupKey: string,
    columns: Columns,
    options: EventOptions = {},
  ): Promise<InsertOutcome> {
    requireIdentifier('queue name', queue);
    if (typeof dedupKey !== 'string' || dedupKey.length === 0 || [...dedupKey].length > 255) {
      throw new TypeError(
        `queue ${queue}: a dedup key must be 1 to ${QueueColumns.DEDUP_KEY_MAX_CHARS} characters`,
      );
    }
    const cols = withKey(queue, entries(columns), QueueColumns.DEDUP_KEY, dedupKey, 'key');
    const insert = statement(queue, cols, options);
    try {
      return { id: await execute(conn, queue, insert, options), duplicate: false };
    } catch (e) {
      const err = e as { errno?: number; message?: string };
      if (err.errno === ER_BAD_FIELD_ERROR && String(err.message).includes(QueueColumns.DEDUP_KEY)) {
        throw wrap(e, `queue ${queue} has no dedup_key column (add it and its UNIQUE index sluice_dedup: docs/features/dedup.md)`);
      }
      if (err.errno !== ER_DUP_ENTRY) {
        throw e;
      }
      const existing = await existingId(conn, queue, dedupKey);
      if (existing === undefined) {
        // No row holds the key: the duplicate was of another key (the primary key, say).
        throw e;
      }
      return { id: existing, duplicate: true };
    }
  }

  /**
   * Inserts a child of the event group `groupKey` (its `group_key` column holds the key); resolves
   * to its id. The queue needs the column and its group_key index (`sluice queue create
   * --grouped`); children and their completion event must be on the same shard.
   */
  static async insertInGroup(
    conn: SqlConnection,
    queue: string,
    groupKey: string,
    columns: Columns,
    options: EventOptions = {},
  ): Promise<bigint> {
    return insertWithGroupColumn(conn, queue, QueueColumns.GROUP_KEY, groupKey, columns, options, '--grouped');
  }

  /**
   * Inserts the completion event of the group `groupKey` (its `completes_group` column holds the
   * key); resolves to its id. The manager delivers it once every child is acked, dead or
   * cancelled, with their counts (`event.group`). Commit it with the children or after them.
   */
  static async insertGroupCompletion(
    conn: SqlConnection,
    queue: string,
    groupKey: string,
    columns: Columns,
    options: EventOptions = {},
  ): Promise<bigint> {
    return insertWithGroupColumn(
      conn,
      queue,
      QueueColumns.COMPLETES_GROUP,
      groupKey,
      columns,
      options,
      '--completes-groups',
    );
  }
}

interface Insert {
  sql: string;
  values: unknown[];
}

async function insertWithGroupColumn(
  conn: SqlConnection,
  queue: string,
  column: string,
  groupKey: string,
  columns: Columns,
  options: EventOptions,
  createFlag: string,
): Promise<bigint> {
  requireIdentifier('queue name', queue);
  const chars = typeof groupKey === 'string' ? [...groupKey].length : 0;
  if (chars === 0 || chars > QueueColumns.GROUP_KEY_MAX_CHARS) {
    throw new TypeError(
      `queue ${queue}: a group key must be 1 to ${QueueColumns.GROUP_KEY_MAX_CHARS} characters, ` +
        `was ${typeof groupKey === 'string' ? `${chars} characters` : String(groupKey)}`,
    );
  }
  const insert = statement(queue, withKey(queue, entries(columns), column, groupKey, 'group key'), options);
  try {
    return await execute(conn, queue, insert, options);
  } catch (e) {
    const err = e as { errno?: number; message?: string };
    if (err.errno === ER_BAD_FIELD_ERROR && String(err.message).includes(column)) {
      throw wrap(e, `queue ${queue} has no ${column} column (sluice queue create ${createFlag} adds it: docs/features/groups.md)`);
    }
    throw e;
  }
}

function entries(columns: Columns): Array<[string, unknown]> {
  if (columns instanceof Map) {
    return [...columns.entries()];
  }
  if (columns === null || typeof columns !== 'object') {
    throw new TypeError('columns must be an object or a Map of column names to values');
  }
  return Object.entries(columns);
}

/** The columns with `column` set to `key`; refuses a different value given for it. */
function withKey(
  queue: string,
  cols: Array<[string, unknown]>,
  column: string,
  key: string,
  what: string,
): Array<[string, unknown]> {
  const given = cols.find(([name]) => name === column);
  if (given !== undefined && given[1] !== undefined && given[1] !== null && given[1] !== key) {
    throw new TypeError(
      `queue ${queue}: column ${column} is '${String(given[1])}' but the ${what} given is '${key}'`,
    );
  }
  return [...cols.filter(([name]) => name !== column), [column, key]];
}

function statement(queue: string, cols: Array<[string, unknown]>, options: EventOptions): Insert {
  requireIdentifier('queue name', queue);
  const names: string[] = [];
  const values: unknown[] = [];
  const placeholders: string[] = [];
  const add = (name: string, value: unknown, placeholder = '?'): void => {
    names.push(`\`${name}\``);
    values.push(value);
    placeholders.push(placeholder);
  };
  for (const [name, value] of cols) {
    requireIdentifier('column name', name);
    if (SYSTEM_COLUMNS.has(name) && name !== QueueColumns.ACTOR) {
      throw new TypeError(
        `queue ${queue}: column '${name}' is a system column; set it through the options instead`,
      );
    }
    add(name, value);
  }
  if (options.id !== undefined) {
    add(QueueColumns.ID, BigInt(options.id));
  }
  if (options.fireAt !== undefined) {
    add(QueueColumns.TIME_NEXT, fireAtNs(options.fireAt));
  } else if (options.delayMs !== undefined && options.delayMs !== 0) {
    if (!Number.isFinite(options.delayMs) || options.delayMs < 0) {
      throw new RangeError(`delayMs must not be negative, was ${options.delayMs}`);
    }
    add(QueueColumns.TIME_NEXT, BigInt(Math.round(options.delayMs * 1e6)), `${QueueColumns.NOW_NS_SQL} + ?`);
  }
  if (options.tenant !== undefined) {
    add(QueueColumns.TENANT, options.tenant);
  }
  if (options.priority !== undefined) {
    const p = options.priority;
    if (!Number.isInteger(p) || p < -128 || p > 127) {
      throw new RangeError(`priority must be an integer in -128..127, was ${p}`);
    }
    add(QueueColumns.PRIORITY, p);
  }
  const sql =
    names.length === 0
      ? `INSERT INTO \`${queue}\` () VALUES ()`
      : `INSERT INTO \`${queue}\` (${names.join(', ')}) VALUES (${placeholders.join(', ')})`;
  return { sql, values };
}

function fireAtNs(at: Date | Timestamp): bigint {
  if (at instanceof Timestamp) {
    return at.epochNanos();
  }
  if (!(at instanceof Date) || Number.isNaN(at.getTime())) {
    throw new TypeError(`fireAt must be a valid Date or a Timestamp, was ${String(at)}`);
  }
  return BigInt(at.getTime()) * 1_000_000n;
}

async function execute(
  conn: SqlConnection,
  queue: string,
  insert: Insert,
  options: EventOptions,
): Promise<bigint> {
  const [result] = await conn.query(insert.sql, insert.values);
  if (options.id !== undefined) {
    return BigInt(options.id);
  }
  const insertId = (result as { insertId?: number | string | bigint }).insertId;
  if (typeof insertId === 'string' || typeof insertId === 'bigint') {
    return BigInt(insertId);
  }
  if (typeof insertId === 'number' && Number.isSafeInteger(insertId) && insertId > 0) {
    return BigInt(insertId);
  }
  // Beyond a number's exact range (mysql2 then gives a string, but say it did not): ask exactly.
  const [rows] = await conn.query('SELECT CAST(LAST_INSERT_ID() AS CHAR) AS id');
  const id = (rows as Array<{ id: string }>)[0]?.id;
  if (id === undefined || id === '0') {
    throw new Error(`queue ${queue}: the insert returned no id`);
  }
  return BigInt(id);
}

/**
 * The id of the row holding `key`, undefined when none does: first a plain read (it touches only
 * the key's index entry, which the failed INSERT share-locked), then, when the transaction's
 * snapshot predates the row's commit, a locking read, which sees the latest committed row.
 */
async function existingId(conn: SqlConnection, queue: string, key: string): Promise<bigint | undefined> {
  const sql = `SELECT CAST(\`id\` AS CHAR) AS id FROM \`${queue}\` WHERE \`${QueueColumns.DEDUP_KEY}\` = ?`;
  for (const suffix of ['', ' LOCK IN SHARE MODE']) {
    const [rows] = await conn.query(sql + suffix, [key]);
    const id = (rows as Array<{ id: string }>)[0]?.id;
    if (id !== undefined) {
      return BigInt(id);
    }
  }
  return undefined;
}

function wrap(e: unknown, message: string): Error {
  const err = new Error(`${message}: ${(e as Error).message}`, { cause: e });
  Object.assign(err, { errno: (e as { errno?: number }).errno, code: (e as { code?: string }).code });
  return err;
}
