/**
 * Sluice's Node.js client: a receiver of a queue's events from every manager, and a producer
 * helper that adds events in the caller's own MySQL transaction. README.md describes it all.
 */
export { ReceivedEvent, type GroupOutcome } from './event';
export { RetryLater } from './retry-later';
export { Timestamp, type ColumnKind, type ColumnJsValue, type ColumnValue } from './values';
export { Backoff } from './backoff';
export { checkKeyRange } from './key-range';
