/**
 * One row of every MySQL/MariaDB column type (as the manager's TypedPayloadTest), for the typed
 * column checks of the client and of its conformance process.
 */
import { Timestamp } from '../../src/index';
import { queueTableSql, type TestDatabase } from './cluster';

/** Column name, SQL type, the literal inserted, and what the handler sees: [kind, value]. */
export const TYPED_COLUMNS: Array<[string, string, string, string, unknown]> = [
  ['c_tinyint', 'TINYINT', '-128', 'int', -128n],
  ['c_bool', 'BOOLEAN', '1', 'int', 1n],
  ['c_smallint', 'SMALLINT UNSIGNED', '65535', 'int', 65535n],
  ['c_int', 'INT UNSIGNED', '4294967295', 'int', 4294967295n],
  ['c_bigint', 'BIGINT', '-9223372036854775808', 'int', -9223372036854775808n],
  ['c_ubigint', 'BIGINT UNSIGNED', '18446744073709551615', 'uint', 18446744073709551615n],
  ['c_decimal', 'DECIMAL(30,10)', "'12345678901234567890.0123456789'", 'decimal', '12345678901234567890.0123456789'],
  ['c_numeric', 'NUMERIC(5,2)', "'-0.50'", 'decimal', '-0.50'],
  ['c_float', 'FLOAT', '1.1', 'double', Math.fround(1.1)],
  ['c_double', 'DOUBLE', '0.1', 'double', 0.1],
  ['c_varchar', 'VARCHAR(64)', "'h\u00e9llo \u2603 \ud83d\ude00'", 'string', 'h\u00e9llo \u2603 \ud83d\ude00'],
  ['c_text', 'TEXT', "'line1\\nline2'", 'string', 'line1\nline2'],
  ['c_enum', "ENUM('red','green')", "'green'", 'string', 'green'],
  ['c_set', "SET('a','b','c')", "'a,c'", 'string', 'a,c'],
  ['c_binary', 'BINARY(3)', "X'00FF10'", 'bytes', Buffer.from([0x00, 0xff, 0x10])],
  ['c_blob', 'BLOB', "X'0001FEFF'", 'bytes', Buffer.from([0x00, 0x01, 0xfe, 0xff])],
  ['c_bit1', 'BIT(1)', "b'1'", 'bool', true],
  ['c_bits', 'BIT(10)', "b'1000000001'", 'bytes', Buffer.from([0b10, 0b1])],
  ['c_date', 'DATE', "'2024-02-29'", 'date', '2024-02-29'],
  ['c_datetime', 'DATETIME(6)', "'2024-03-31 02:30:00.123456'", 'datetime', '2024-03-31T02:30:00.123456'],
  ['c_timestamp', 'TIMESTAMP(6) NULL', 'FROM_UNIXTIME(1700000000.654321)', 'timestamp', new Timestamp(1700000000n, 654_321_000)],
  ['c_time', 'TIME(6)', "'-838:59:59.000000'", 'time', -3020399000000n],
  ['c_time_long', 'TIME(1)', "'25:00:00.5'", 'time', 90000500000n],
  ['c_year', 'YEAR', '2155', 'int', 2155n],
];

export function typedTableSql(table: string): string {
  return queueTableSql(
    table,
    TYPED_COLUMNS.map(([name, type]) => `\`${name}\` ${type}${type.endsWith('NULL') ? '' : ' NULL'}`),
  );
}

/** Inserts one row of the literals (id 1) and one of NULLs (id 2), in a +05:30 session. */
export async function insertTypedRows(db: TestDatabase, table: string): Promise<void> {
  const names = TYPED_COLUMNS.map(([name]) => `\`${name}\``).join(', ');
  const values = TYPED_COLUMNS.map(([, , literal]) => literal).join(', ');
  const nulls = TYPED_COLUMNS.map(() => 'NULL').join(', ');
  await db.exec(
    "SET time_zone = '+05:30'",
    `INSERT INTO \`${table}\` (id, ${names}) VALUES (1, ${values}), (2, ${nulls})`,
  );
}

