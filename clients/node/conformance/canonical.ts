import type { ColumnValue, Timestamp } from '../src/index';

/**
 * A column in the contract's canonical form (conformance/CONTRACT.md, "What the process prints"),
 * written from the value the application sees, never from the protobuf message.
 */
export function canonical(c: ColumnValue): { kind: string; value: unknown } {
  const v = c.value;
  switch (c.kind) {
    case 'null':
      return { kind: 'null', value: null };
    case 'int':
    case 'uint':
    case 'time':
      return { kind: c.kind, value: (v as bigint).toString() };
    case 'double': {
      const d = v as number;
      // JSON has no NaN nor infinities, and writes -0 as 0: those go as strings that parse back.
      if (Object.is(d, -0)) {
        return { kind: 'double', value: '-0' };
      }
      return { kind: 'double', value: Number.isFinite(d) ? d : String(d) };
    }
    case 'bytes':
      return { kind: 'bytes', value: (v as Buffer).toString('base64') };
    case 'timestamp':
      return { kind: 'timestamp', value: (v as Timestamp).epochMicros().toString() };
    case 'bool':
      return { kind: 'bool', value: v as boolean };
    default:
      // decimal, string, json, date, datetime: the string as delivered.
      return { kind: c.kind, value: v as string };
  }
}

