/**
 * Sluice's Node.js client: a receiver of a queue's events from every manager, and a producer
 * helper that adds events in the caller's own MySQL transaction. README.md describes it all.
 */
export { SluiceReceiver, PROTOCOL_TIMEOUT_MS } from './receiver';
export type {
  ReceiverOptions,
  ReceiverEvents,
  SubscribedInfo,
  AckResultInfo,
  StreamEndedInfo,
  ShardChangeInfo,
} from './receiver-options';
export type { ReceiverStats } from './receiver-stats';
export type { EventHandler, HandlerContext, Handled } from './dispatcher';
export { ReceivedEvent, type GroupOutcome } from './event';
export { RetryLater, Snooze } from './retry-later';
export { ExtensionRefused, type ExtendRefusal } from './extender';
export { Timestamp, type ColumnKind, type ColumnJsValue, type ColumnValue } from './values';
export { Backoff } from './backoff';
export { checkKeyRange } from './key-range';
export type { ConnectionOptions, TlsOptions } from './channels';
export {
  ManagerClient,
  type CancelStatus,
  type QueueInfo,
  type QueueStats,
} from './manager-client';
export { stderrLogger, type Logger, type LogLevel } from './logger';
export {
  EventProducer,
  type EventOptions,
  type InsertOutcome,
  type Columns,
  type SqlConnection,
} from './producer';
export { QueueColumns, SYSTEM_COLUMNS } from './queue-columns';
export { transactionalAck, transactionalAckSql } from './transactional-ack';
