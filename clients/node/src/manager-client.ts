import * as grpc from '@grpc/grpc-js';
import { ChannelSecurity, type ConnectionOptions } from './channels';
import type { SluiceStub } from './proto';

export type CancelStatus = 'CANCELLED' | 'NOT_PENDING' | 'UNKNOWN' | 'UNSPECIFIED';

export interface QueueInfo {
  name: string;
  shard: string;
  /** SERVING, or DISABLED with the reason in `problem`. */
  status: string;
  problem: string;
  options: Record<string, string>;
}

export interface QueueStats {
  queue: string;
  shard: string;
  pending: bigint;
  fired: bigint;
  acked: bigint;
  dead: bigint;
  cancelled: bigint;
  cached: bigint;
  inFlight: bigint;
  receivers: number;
  oldestDueAgeMs: bigint;
}

/** Bound of each call unless the caller gives another. */
const DEFAULT_DEADLINE_MS = 10_000;

/**
 * The unary calls of `sluice.v1.Sluice` on one manager (Cancel, ListQueues, QueueStats,
 * NotifyShutdown), over its own channel with the same TLS and token settings as a receiver.
 * A failed call rejects with grpc-js's error (`code`, `details`). {@link close} the client.
 */
export class ManagerClient {
  readonly target: string;
  private readonly security: ChannelSecurity;
  private readonly stub: SluiceStub;

  constructor(target: string, options: ConnectionOptions = {}) {
    this.target = target;
    this.security = new ChannelSecurity(options);
    this.stub = this.security.open(target);
  }

  /**
   * Cancels pending events of `queue` on `shard` (required when the manager has several shards).
   * Per id: CANCELLED, NOT_PENDING (fired, acked, dead or cancelled already) or UNKNOWN.
   */
  async cancel(
    queue: string,
    ids: Array<bigint | number>,
    shard = '',
    deadlineMs = DEFAULT_DEADLINE_MS,
  ): Promise<Map<bigint, CancelStatus>> {
    const res = await this.call(this.stub.Cancel, { queue, ids: ids.map(String), shard }, deadlineMs);
    const out = new Map<bigint, CancelStatus>();
    for (const r of res.results) {
      out.set(BigInt(r.id), r.status.replace(/^CANCEL_STATUS_/, '') as CancelStatus);
    }
    return out;
  }

  /** The queues this manager knows, per shard it is configured with. Needs the `stats` grant. */
  async listQueues(deadlineMs = DEFAULT_DEADLINE_MS): Promise<QueueInfo[]> {
    const res = await this.call(this.stub.ListQueues, {}, deadlineMs);
    return res.queues.map((q) => ({ ...q, options: { ...q.options } }));
  }

  /** Counts per queue and shard (every queue when `queue` is empty). Needs the `stats` grant. */
  async queueStats(queue = '', deadlineMs = DEFAULT_DEADLINE_MS): Promise<QueueStats[]> {
    const res = await this.call(this.stub.QueueStats, { queue }, deadlineMs);
    return res.queues.map((q) => ({
      queue: q.queue,
      shard: q.shard,
      pending: BigInt(q.pending),
      fired: BigInt(q.fired),
      acked: BigInt(q.acked),
      dead: BigInt(q.dead),
      cancelled: BigInt(q.cancelled),
      cached: BigInt(q.cached),
      inFlight: BigInt(q.inFlight),
      receivers: q.receivers,
      oldestDueAgeMs: BigInt(q.oldestDueAgeMs),
    }));
  }

  /** Tells the manager to send `receiverId` nothing new; resolves to how many streams stopped. */
  async notifyShutdown(receiverId: string, deadlineMs = DEFAULT_DEADLINE_MS): Promise<number> {
    const res = await this.call(this.stub.NotifyShutdown, { receiverId }, deadlineMs);
    return res.streams;
  }

  close(): void {
    this.stub.close();
  }

  private call<Req, Res>(
    method: (
      req: Req,
      md: grpc.Metadata,
      options: grpc.CallOptions,
      cb: (e: grpc.ServiceError | null, r?: Res) => void,
    ) => grpc.ClientUnaryCall,
    request: Req,
    deadlineMs: number,
  ): Promise<Res> {
    return new Promise((resolve, reject) => {
      method.call(
        this.stub,
        request,
        this.security.metadata(),
        { deadline: Date.now() + deadlineMs },
        (e, r) => (e ? reject(e) : resolve(r as Res)),
      );
    });
  }
}
