/**
 * The `sluice.v1` API, loaded at run time from the package's copy of the repository's
 * `sluice.proto` (scripts/copy-proto.js puts it there at build time), and the shapes its messages
 * take in JavaScript with the loader options below: field names in camelCase, 64-bit integers as
 * decimal strings (exact; the client turns them into `bigint`), enums as their names, bytes as
 * `Buffer`, and a `kind` field naming the member set in each oneof.
 */
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** Where the build put the proto: `<package>/proto/sluice/v1/sluice.proto`. */
export const PROTO_FILE = path.resolve(__dirname, '..', '..', 'proto', 'sluice', 'v1', 'sluice.proto');

const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

/** A 64-bit integer on the wire: its decimal string (received), or a string or number (sent). */
export type WireLong = string;

export interface WireTimestamp {
  seconds: WireLong;
  nanos: number;
}

export type WireValueKind =
  | 'nullValue'
  | 'intValue'
  | 'doubleValue'
  | 'stringValue'
  | 'bytesValue'
  | 'decimalValue'
  | 'uintValue'
  | 'timestampValue'
  | 'dateValue'
  | 'datetimeValue'
  | 'timeValue'
  | 'boolValue'
  | 'jsonValue';

export interface WireValue {
  kind?: WireValueKind;
  nullValue?: boolean;
  intValue?: WireLong;
  doubleValue?: number;
  stringValue?: string;
  bytesValue?: Buffer;
  decimalValue?: string;
  uintValue?: WireLong;
  timestampValue?: WireTimestamp;
  dateValue?: string;
  datetimeValue?: string;
  timeValue?: WireTimestamp;
  boolValue?: boolean;
  jsonValue?: string;
}

export interface WireGroupOutcome {
  key: string;
  acked: WireLong;
  dead: WireLong;
  cancelled: WireLong;
}

export interface WireEvent {
  id: WireLong;
  epoch: WireLong;
  queue: string;
  shard: string;
  tenant: string;
  priority: number;
  timeDueNs: WireLong;
  timeCreatedNs: WireLong;
  timeFiredNs: WireLong;
  columns: Record<string, WireValue>;
  deliveryToken: Buffer;
  orderingKey?: string;
  group?: WireGroupOutcome;
  lastAttempt: boolean;
  /** When the manager takes the event back unless acked or extended; "0" from an older manager. */
  timeDeadlineNs?: WireLong;
}

export interface WireEventRef {
  id: WireLong;
  epoch: WireLong;
  shard: string;
  deliveryToken: Buffer;
}

export type WireAckStatus =
  | 'ACK_STATUS_UNSPECIFIED'
  | 'ACK_STATUS_OK'
  | 'ACK_STATUS_STALE'
  | 'ACK_STATUS_UNKNOWN';

export interface WireAckResult {
  event?: WireEventRef;
  status: WireAckStatus | string;
  outcome: string;
}

export interface WireExtend {
  event: WireEventRef;
  extendByMs: WireLong;
  timeFiredNs: WireLong;
}

export interface WireExtendResult {
  event?: WireEventRef;
  status: string;
  timeDeadlineNs: WireLong;
}

export interface WireSubscribed {
  queue: string;
  shard: string;
  receiverId: string;
  maxInFlight: number;
}

export interface WireShardChange {
  queue: string;
  shard: string;
  serving: boolean;
}

export interface ManagerMessage {
  kind?: 'subscribed' | 'events' | 'ackResults' | 'shardChange' | 'extendResults';
  subscribed?: WireSubscribed;
  events?: { events: WireEvent[] };
  ackResults?: { results: WireAckResult[] };
  shardChange?: WireShardChange;
  extendResults?: { results: WireExtendResult[] };
}

export interface WireSubscribe {
  queue: string;
  receiverId: string;
  maxInFlight: number;
  keyRange: string;
}

export interface WireNack {
  event: WireEventRef;
  retryAfterMs: WireLong;
  reason: string;
  /** A nack that spends no attempt (when the table counts snoozes). */
  snooze?: boolean;
}

export interface ReceiverMessage {
  subscribe?: WireSubscribe;
  acks?: { events: WireEventRef[]; committed: WireEventRef[] };
  nacks?: { nacks: WireNack[] };
  flow?: { maxInFlight: number };
  extends?: { extends: WireExtend[] };
}

export interface WireCancelResult {
  id: WireLong;
  status: string;
}

export interface WireQueueInfo {
  name: string;
  shard: string;
  status: string;
  problem: string;
  options: Record<string, string>;
}

export interface WireQueueStatsEntry {
  queue: string;
  shard: string;
  pending: WireLong;
  fired: WireLong;
  acked: WireLong;
  dead: WireLong;
  cancelled: WireLong;
  cached: WireLong;
  inFlight: WireLong;
  receivers: number;
  oldestDueAgeMs: WireLong;
}

type Unary<Req, Res> = (
  request: Req,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (error: grpc.ServiceError | null, response?: Res) => void,
) => grpc.ClientUnaryCall;

/** The generated client of `sluice.v1.Sluice`. */
export interface SluiceStub extends grpc.Client {
  Subscribe(
    metadata: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientDuplexStream<ReceiverMessage, ManagerMessage>;
  NotifyShutdown: Unary<{ receiverId: string }, { streams: number }>;
  Cancel: Unary<
    { queue: string; ids: WireLong[]; shard: string },
    { results: WireCancelResult[] }
  >;
  ListQueues: Unary<Record<string, never>, { queues: WireQueueInfo[] }>;
  QueueStats: Unary<{ queue: string }, { queues: WireQueueStatsEntry[] }>;
}

export type SluiceStubConstructor = new (
  target: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ChannelOptions,
) => SluiceStub;

let stubConstructor: SluiceStubConstructor | undefined;

/** The client constructor of `sluice.v1.Sluice`, loading the proto on first use. */
export function sluiceStub(): SluiceStubConstructor {
  if (stubConstructor === undefined) {
    let definition: protoLoader.PackageDefinition;
    try {
      definition = protoLoader.loadSync(PROTO_FILE, LOADER_OPTIONS);
    } catch (e) {
      throw new Error(
        `cannot load the Sluice API from ${PROTO_FILE} (run the package's build, which copies it ` +
          `there): ${(e as Error).message}`,
      );
    }
    const loaded = grpc.loadPackageDefinition(definition) as unknown as {
      sluice: { v1: { Sluice: SluiceStubConstructor } };
    };
    stubConstructor = loaded.sluice.v1.Sluice;
  }
  return stubConstructor;
}
