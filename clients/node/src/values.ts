/**
 * Wire values to JavaScript values, without loss. Each SQL type arrives as one kind, and each kind
 * as one JavaScript type (README, "Column values"):
 *
 * | kind | SQL | JavaScript |
 * |---|---|---|
 * | `int` | TINYINT..BIGINT, unsigned but BIGINT UNSIGNED, YEAR, TINYINT(1) | `bigint` |
 * | `uint` | BIGINT UNSIGNED | `bigint` (0 .. 2^64-1) |
 * | `double` | DOUBLE, FLOAT (widened exactly) | `number` |
 * | `decimal` | DECIMAL, NUMERIC | `string`, exact, with the column's scale |
 * | `string` | CHAR, VARCHAR, TEXT, ENUM, SET, INET4/6, UUID | `string` |
 * | `json` | JSON | `string` (the document's text) |
 * | `bytes` | BINARY, VARBINARY, BLOB, BIT(n > 1) | `Buffer` |
 * | `bool` | BIT(1) | `boolean` |
 * | `date` | DATE | `string`, `YYYY-MM-DD` |
 * | `datetime` | DATETIME | `string`, `YYYY-MM-DDTHH:MM:SS[.ffffff]`, no time zone |
 * | `timestamp` | TIMESTAMP | {@link Timestamp} (seconds and nanos since the Unix epoch) |
 * | `time` | TIME | `bigint`: signed microseconds |
 * | `null` | SQL NULL | `null` |
 */
import type { WireTimestamp, WireValue } from './proto';

export type ColumnKind =
  | 'null'
  | 'int'
  | 'uint'
  | 'double'
  | 'decimal'
  | 'string'
  | 'json'
  | 'bytes'
  | 'bool'
  | 'date'
  | 'datetime'
  | 'timestamp'
  | 'time';

const NANOS_PER_SECOND = 1_000_000_000n;

/**
 * An instant, exact to the nanosecond (TIMESTAMP columns arrive exact to the microsecond): whole
 * seconds since the Unix epoch and the nanoseconds within that second (0..999,999,999), whatever
 * the time zone of the database, the manager or this process. A `Date` holds milliseconds only:
 * {@link toDate} says so.
 */
export class Timestamp {
  readonly seconds: bigint;
  readonly nanos: number;

  constructor(seconds: bigint, nanos: number) {
    if (!Number.isInteger(nanos) || nanos < 0 || nanos >= 1_000_000_000) {
      throw new RangeError(`nanos must be an integer in 0..999999999, was ${nanos}`);
    }
    this.seconds = seconds;
    this.nanos = nanos;
  }

  /** The instant `micros` microseconds after the Unix epoch (negative: before it). */
  static fromMicros(micros: bigint): Timestamp {
    const nanos = micros * 1000n;
    let seconds = nanos / NANOS_PER_SECOND;
    let rest = nanos % NANOS_PER_SECOND;
    if (rest < 0n) {
      seconds -= 1n;
      rest += NANOS_PER_SECOND;
    }
    return new Timestamp(seconds, Number(rest));
  }

  /** Nanoseconds since the Unix epoch: exact. */
  epochNanos(): bigint {
    return this.seconds * NANOS_PER_SECOND + BigInt(this.nanos);
  }

  /**
   * Microseconds since the Unix epoch: exact for every TIMESTAMP column (MySQL keeps at most six
   * fractional digits); a finer instant is rounded down.
   */
  epochMicros(): bigint {
    return this.seconds * 1_000_000n + BigInt(Math.floor(this.nanos / 1000));
  }

  /** As a `Date`: to the millisecond only (rounded down); keep the Timestamp for more. */
  toDate(): Date {
    return new Date(Number(this.seconds) * 1000 + Math.floor(this.nanos / 1_000_000));
  }

  /** ISO 8601 in UTC with six fractional digits (nine when the instant has finer ones). */
  toISOString(): string {
    const whole = new Date(Number(this.seconds) * 1000).toISOString().slice(0, 19);
    const fraction =
      this.nanos % 1000 === 0
        ? String(this.nanos / 1000).padStart(6, '0')
        : String(this.nanos).padStart(9, '0');
    return `${whole}.${fraction}Z`;
  }

  equals(other: Timestamp): boolean {
    return this.seconds === other.seconds && this.nanos === other.nanos;
  }

  toString(): string {
    return this.toISOString();
  }

  toJSON(): string {
    return this.toISOString();
  }
}

/** A column's JavaScript value, of the type its kind says. */
export type ColumnJsValue = null | bigint | number | string | boolean | Buffer | Timestamp;

/** A column's kind and its value. */
export interface ColumnValue {
  readonly kind: ColumnKind;
  readonly value: ColumnJsValue;
}

const NULL: ColumnValue = Object.freeze({ kind: 'null', value: null });

/**
 * The kind and JavaScript value of a wire value. A kind newer than this client (or none) arrives
 * as `null`, as in the Java SDK. Throws only for a TIME finer than a microsecond, which MySQL
 * cannot hold (the event is then nacked, naming the column).
 */
export function fromWire(v: WireValue): ColumnValue {
  switch (v.kind) {
    case 'intValue':
      return { kind: 'int', value: BigInt(v.intValue ?? '0') };
    case 'uintValue':
      return { kind: 'uint', value: BigInt(v.uintValue ?? '0') };
    case 'doubleValue':
      return { kind: 'double', value: v.doubleValue ?? 0 };
    case 'decimalValue':
      return { kind: 'decimal', value: v.decimalValue ?? '' };
    case 'stringValue':
      return { kind: 'string', value: v.stringValue ?? '' };
    case 'jsonValue':
      return { kind: 'json', value: v.jsonValue ?? '' };
    case 'bytesValue':
      return { kind: 'bytes', value: v.bytesValue ?? Buffer.alloc(0) };
    case 'boolValue':
      return { kind: 'bool', value: v.boolValue ?? false };
    case 'dateValue':
      return { kind: 'date', value: v.dateValue ?? '' };
    case 'datetimeValue':
      return { kind: 'datetime', value: v.datetimeValue ?? '' };
    case 'timestampValue':
      return { kind: 'timestamp', value: timestamp(v.timestampValue) };
    case 'timeValue':
      return { kind: 'time', value: timeMicros(v.timeValue) };
    case 'nullValue':
    default:
      return NULL;
  }
}

function timestamp(t: WireTimestamp | undefined): Timestamp {
  if (t === undefined) {
    return new Timestamp(0n, 0);
  }
  return new Timestamp(BigInt(t.seconds), t.nanos);
}

/**
 * A TIME's signed microseconds. protobuf's Duration keeps seconds and nanos of the same sign, so
 * the two add up as they are.
 */
function timeMicros(d: WireTimestamp | undefined): bigint {
  if (d === undefined) {
    return 0n;
  }
  if (d.nanos % 1000 !== 0) {
    throw new RangeError(
      `a TIME value of ${d.seconds} s and ${d.nanos} ns is finer than a microsecond`,
    );
  }
  return BigInt(d.seconds) * 1_000_000n + BigInt(d.nanos / 1000);
}
