/**
 * What a producer needs of the queue-table convention (docs/concepts.md, "The queue table"), as
 * the Java client's QueueColumns: the system columns' names, the identifier rule, and the
 * database's "now" in nanoseconds.
 */
export const QueueColumns = Object.freeze({
  ID: 'id',
  TIME_NEXT: 'time_next',
  STATE: 'state',
  EPOCH: 'epoch',
  PRIORITY: 'priority',
  TENANT: 'tenant',
  ACTOR: 'actor',
  CLASS: 'class',
  TIME_CREATED: 'time_created',
  TIME_ACKED: 'time_acked',
  /** The optional deduplication column (a user column, with the UNIQUE index sluice_dedup). */
  DEDUP_KEY: 'dedup_key',
  DEDUP_KEY_MAX_CHARS: 255,
  /** A group's children carry its key here (docs/features/groups.md). */
  GROUP_KEY: 'group_key',
  /** A completion event carries the key of the group it completes here. */
  COMPLETES_GROUP: 'completes_group',
  GROUP_KEY_MAX_CHARS: 191,
  /**
   * The server's now in ns since the epoch, whatever the session's time zone: the clock Sluice
   * measures time_next on.
   */
  NOW_NS_SQL: "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000)",
});

/** Columns the manager owns; `actor` is optional. Every other column is user data. */
export const SYSTEM_COLUMNS: ReadonlySet<string> = new Set([
  'id',
  'time_next',
  'state',
  'epoch',
  'priority',
  'tenant',
  'actor',
  'class',
  'time_created',
  'time_acked',
]);

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** Throws a clear error unless `name` is a plain SQL identifier. */
export function requireIdentifier(what: string, name: string): string {
  if (typeof name !== 'string' || !IDENTIFIER.test(name)) {
    throw new TypeError(
      `${what} must be 1-64 letters, digits or underscores, not starting with a digit: '${name}'`,
    );
  }
  return name;
}
