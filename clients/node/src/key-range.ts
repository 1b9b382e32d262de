const SYNTAX = '"" (every shard) or Vitess style "-80", "80-", "40-c0"';

/**
 * Checks a Vitess-style key range before it goes into Subscribe.key_range, as the Java SDK does:
 * "" (every shard), "-80", "80-" or "40-c0". Bounds are even-length lowercase hex; a shorter bound
 * stands for itself followed by zero bytes, and the start must be below the end. Returns the range
 * to send ("" for undefined, "" or "-"); throws a RangeError saying what is wrong.
 */
export function checkKeyRange(range: string | undefined): string {
  if (range === undefined || range === '' || range === '-') {
    return '';
  }
  const dash = range.indexOf('-');
  if (dash < 0 || dash !== range.lastIndexOf('-')) {
    throw bad(range, "it must be start-end with one '-'");
  }
  const start = range.slice(0, dash);
  const end = range.slice(dash + 1);
  checkBound(range, start);
  checkBound(range, end);
  if (end !== '') {
    const n = Math.max(start.length, end.length);
    if (start.padEnd(n, '0') >= end.padEnd(n, '0')) {
      throw bad(range, `start "${start}" must be below end "${end}"`);
    }
  }
  return range;
}

function checkBound(range: string, bound: string): void {
  if (bound.length % 2 !== 0) {
    throw bad(range, `bound "${bound}" must have an even number of hex digits`);
  }
  if (!/^[0-9a-f]*$/.test(bound)) {
    throw bad(range, `bound "${bound}" must be lowercase hex (0-9, a-f)`);
  }
}

function bad(range: string, why: string): RangeError {
  return new RangeError(`keyRange must be ${SYNTAX}, was "${range}": ${why}`);
}
