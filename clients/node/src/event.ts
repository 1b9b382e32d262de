import type { WireEvent } from './proto';
import { fromWire, type ColumnJsValue, type ColumnKind, type ColumnValue, Timestamp } from './values';

/** What became of an event group's children, on the group's completion event. */
export interface GroupOutcome {
  readonly key: string;
  readonly acked: bigint;
  readonly dead: bigint;
  readonly cancelled: bigint;
}

const MARK_ACKED_IN_TRANSACTION = Symbol('markAckedInTransaction');
const SET_EXTEND = Symbol('setExtend');

/** Used by the dispatcher: not part of the public API. */
export function setExtend(event: ReceivedEvent, extend: (byMs: number) => Promise<Date>): void {
  event[SET_EXTEND](extend);
}

/** Used by transactionalAck(): not part of the public API. */
export function markAckedInTransaction(event: ReceivedEvent): void {
  event[MARK_ACKED_IN_TRANSACTION]();
}

/**
 * One delivery of an event to this receiver: the event's fields, with 64-bit numbers as `bigint`,
 * and its user columns as exact JavaScript values (see `values.ts` and the README's "Column
 * values"). Identify an event by `(shard, id)`: ids are unique per queue within a shard.
 *
 * The typed getters (`getBigInt`, `getString`, ...) convert only when the conversion is exact and
 * throw an Error naming the column and the event otherwise.
 */
export class ReceivedEvent {
  readonly id: bigint;
  /** The delivery attempt this is (1 for the first); acks and nacks carry it back. */
  readonly epoch: bigint;
  readonly queue: string;
  readonly shard: string;
  readonly tenant: string;
  readonly priority: number;
  /** When the event became due, in ns since the Unix epoch (database clock). */
  readonly dueTimeNs: bigint;
  readonly createdTimeNs: bigint;
  /** When the manager fired this attempt, in ns since the Unix epoch (database clock). */
  readonly firedTimeNs: bigint;
  /** True when a failure of this delivery (a nack, a timeout) makes the event dead. */
  readonly lastAttempt: boolean;
  /**
   * For an ordered queue, the event's ordering key as text ("" when the whole queue is one key);
   * undefined when the queue is not ordered or the row's key is NULL.
   */
  readonly orderingKey: string | undefined;
  /** For an event group's completion event: what became of the children. */
  readonly group: GroupOutcome | undefined;
  /** The user columns by name (sorted), as the JavaScript values of their kinds. */
  readonly columns: Readonly<Record<string, ColumnJsValue>>;
  /** The message as received. */
  readonly raw: WireEvent;

  private readonly typed: ReadonlyMap<string, ColumnValue>;
  private ackedInTx = false;
  private extendFn: ((byMs: number) => Promise<Date>) | undefined;
  private deadlineValue: Date | undefined;

  constructor(raw: WireEvent) {
    this.raw = raw;
    this.id = BigInt(raw.id);
    this.epoch = BigInt(raw.epoch);
    this.queue = raw.queue;
    this.shard = raw.shard;
    this.tenant = raw.tenant;
    this.priority = raw.priority;
    this.dueTimeNs = BigInt(raw.timeDueNs);
    this.createdTimeNs = BigInt(raw.timeCreatedNs);
    this.firedTimeNs = BigInt(raw.timeFiredNs);
    this.lastAttempt = raw.lastAttempt;
    this.orderingKey = raw.orderingKey;
    this.group =
      raw.group === undefined || raw.group === null
        ? undefined
        : Object.freeze({
            key: raw.group.key,
            acked: BigInt(raw.group.acked),
            dead: BigInt(raw.group.dead),
            cancelled: BigInt(raw.group.cancelled),
          });
    const typed = new Map<string, ColumnValue>();
    const columns: Record<string, ColumnJsValue> = Object.create(null);
    for (const name of Object.keys(raw.columns ?? {}).sort()) {
      let v: ColumnValue;
      try {
        v = fromWire(raw.columns[name]);
      } catch (e) {
        throw new Error(`column '${name}' of ${this.describe()}: ${(e as Error).message}`);
      }
      typed.set(name, v);
      columns[name] = v.value;
    }
    this.typed = typed;
    this.columns = Object.freeze(columns);
  }

  /**
   * When the manager takes this attempt back unless it is acked or extended (database clock); moved
   * by each successful {@link extend}. Undefined from a manager older than extensions.
   */
  get deadline(): Date | undefined {
    if (this.deadlineValue !== undefined) {
      return this.deadlineValue;
    }
    const ns = BigInt(this.raw.timeDeadlineNs ?? '0');
    return ns > 0n ? new Date(Number(ns / 1_000_000n)) : undefined;
  }

  /** This attempt's hold (deadline − fire: the queue's ack_wait) in ms; 0 when unknown. */
  get holdMs(): number {
    const ns = BigInt(this.raw.timeDeadlineNs ?? '0');
    return ns > 0n && ns > this.firedTimeNs ? Number((ns - this.firedTimeNs) / 1_000_000n) : 0;
  }

  /**
   * Asks the manager to move this attempt's deadline to now + `ms` (never earlier than it is, at
   * most the fire time + the queue's max_hold). Resolves to the new deadline; rejects with an
   * `ExtensionRefused` (its `status`: STALE, UNKNOWN or LIMIT) when refused, or an Error when no
   * manager answered (try again).
   */
  async extend(ms: number): Promise<Date> {
    if (!Number.isFinite(ms) || ms <= 0) {
      throw new RangeError(`extend: ms must be > 0, was ${ms}`);
    }
    if (this.extendFn === undefined) {
      throw new Error(`${this.describe()} was not delivered by a receiver: it cannot be extended`);
    }
    const d = await this.extendFn(ms);
    if (this.deadlineValue === undefined || d > this.deadlineValue) {
      this.deadlineValue = d;
    }
    return d;
  }

  [SET_EXTEND](extend: (byMs: number) => Promise<Date>): void {
    this.extendFn = extend;
  }

  /** Same as {@link epoch}: the manager bumps it on every delivery attempt. */
  get attempt(): bigint {
    return this.epoch;
  }

  /** The names of the user columns, sorted. */
  columnNames(): string[] {
    return [...this.typed.keys()];
  }

  has(name: string): boolean {
    return this.typed.has(name);
  }

  /** The column's kind and value; throws if the event has no such column. */
  column(name: string): ColumnValue {
    const v = this.typed.get(name);
    if (v === undefined) {
      throw new Error(
        `${this.describe()} has no column '${name}' (columns: ${this.columnNames().join(', ')})`,
      );
    }
    return v;
  }

  kind(name: string): ColumnKind {
    return this.column(name).kind;
  }

  isNull(name: string): boolean {
    return this.column(name).kind === 'null';
  }

  /** An integer column (`int`, `uint`). */
  getBigInt(name: string): bigint {
    return this.get(name, 'an integer', (v) =>
      v.kind === 'int' || v.kind === 'uint' ? (v.value as bigint) : undefined,
    );
  }

  /** A DOUBLE or FLOAT, or an integer that a `number` holds exactly. */
  getNumber(name: string): number {
    return this.get(name, 'a number', (v) => {
      if (v.kind === 'double') {
        return v.value as number;
      }
      if (v.kind === 'int' || v.kind === 'uint') {
        const n = Number(v.value);
        return Number.isSafeInteger(n) ? n : undefined;
      }
      return undefined;
    });
  }

  /** A character column (CHAR, VARCHAR, TEXT, ENUM, SET, ...) or a JSON column's text. */
  getString(name: string): string {
    return this.get(name, 'a string', (v) =>
      v.kind === 'string' || v.kind === 'json' ? (v.value as string) : undefined,
    );
  }

  /** A JSON column's document as text (or a text column holding JSON: MariaDB's JSON alias). */
  getJson(name: string): string {
    return this.getString(name);
  }

  /** A DECIMAL column's exact text with the column's scale (an integer column's decimal text). */
  getDecimal(name: string): string {
    return this.get(name, 'a decimal', (v) => {
      if (v.kind === 'decimal') {
        return v.value as string;
      }
      return v.kind === 'int' || v.kind === 'uint' ? (v.value as bigint).toString() : undefined;
    });
  }

  /** A BIT(1) column, or an integer holding 0 or 1 (TINYINT(1), BOOLEAN). */
  getBoolean(name: string): boolean {
    return this.get(name, 'a boolean', (v) => {
      if (v.kind === 'bool') {
        return v.value as boolean;
      }
      if ((v.kind === 'int' || v.kind === 'uint') && (v.value === 0n || v.value === 1n)) {
        return v.value === 1n;
      }
      return undefined;
    });
  }

  /** A binary column (BINARY, VARBINARY, BLOB, BIT(n)); the Buffer is shared: do not change it. */
  getBuffer(name: string): Buffer {
    return this.get(name, 'bytes', (v) => (v.kind === 'bytes' ? (v.value as Buffer) : undefined));
  }

  /** A TIMESTAMP column. A DATETIME has no time zone: read it with {@link getDateTime}. */
  getTimestamp(name: string): Timestamp {
    return this.get(name, 'a TIMESTAMP', (v) =>
      v.kind === 'timestamp' ? (v.value as Timestamp) : undefined,
    );
  }

  /** A DATE column: `YYYY-MM-DD`. */
  getDate(name: string): string {
    return this.get(name, 'a DATE', (v) => (v.kind === 'date' ? (v.value as string) : undefined));
  }

  /** A DATETIME column as stored: `YYYY-MM-DDTHH:MM:SS[.ffffff]`, without a time zone. */
  getDateTime(name: string): string {
    return this.get(name, 'a DATETIME', (v) =>
      v.kind === 'datetime' ? (v.value as string) : undefined,
    );
  }

  /** A TIME column: signed microseconds. */
  getTimeMicros(name: string): bigint {
    return this.get(name, 'a TIME', (v) => (v.kind === 'time' ? (v.value as bigint) : undefined));
  }

  /** True once transactionalAck() applied this attempt's ack in the handler's transaction. */
  get ackedInTransaction(): boolean {
    return this.ackedInTx;
  }

  [MARK_ACKED_IN_TRANSACTION](): void {
    this.ackedInTx = true;
  }

  /** `event <id> of queue <queue> (shard <shard>)`, for messages. */
  describe(): string {
    return `event ${this.id} of queue ${this.queue} (shard ${this.shard})`;
  }

  toString(): string {
    return `ReceivedEvent{id=${this.id}, epoch=${this.epoch}, queue=${this.queue}, shard=${this.shard}}`;
  }

  private get<T>(name: string, what: string, convert: (v: ColumnValue) => T | undefined): T {
    const v = this.column(name);
    const converted = v.kind === 'null' ? undefined : convert(v);
    if (converted === undefined) {
      throw new Error(`column '${name}' of ${this.describe()} is ${v.kind}, not ${what}`);
    }
    return converted;
  }
}
