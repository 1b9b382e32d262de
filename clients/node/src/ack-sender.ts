import type { Completion } from './completion';
import type { Connector } from './connector';
import type { Logger } from './logger';
import type { Outbox } from './outbox';

/** Caps one message well under gRPC's 4 MiB, even with long nack reasons. */
export const MAX_BATCH = 1000;

/** How long an endpoint may be unreachable before its acks go through another one. */
export const REROUTE_AFTER_MS = 1000;

/**
 * One endpoint's sender loop: takes what piled up in that endpoint's outbox, waits for a
 * subscribed stream to the same endpoint and writes it as one Acks and one Nacks message. It
 * yields to the event loop once before taking, so the answers of handlers that end together share
 * a message (small batches, no added delay when idle). If the stream turned out to be gone, the
 * batch goes out on the endpoint's next stream: the manager decides whether an (id, epoch) still
 * applies.
 *
 * A manager unreachable for {@link REROUTE_AFTER_MS} (killed, restarting) would leave its acks
 * waiting while the shard's new leader redelivers those events after ack_wait, so they are handed
 * to another endpoint whose stream is up: every manager configured with a shard applies acks and
 * nacks for it through the same compare-and-set on (id, epoch), leading it or not. (A manager
 * without that shard answers UNKNOWN: the event then comes back after ack_wait, as it would have.)
 */
export class AckSender {
  private readonly endpoint: string;
  private readonly outbox: Outbox;
  private readonly connector: Connector;
  private readonly done: () => boolean;
  private readonly fallback: (self: Outbox) => Outbox | undefined;
  private readonly logger: Logger;
  private rerouting = false;

  /**
   * @param done true once nothing more may be sent (stop() finished its sweep, or abort())
   * @param fallback given this endpoint's outbox, another endpoint's whose stream is subscribed
   */
  constructor(
    endpoint: string,
    outbox: Outbox,
    connector: Connector,
    done: () => boolean,
    fallback: (self: Outbox) => Outbox | undefined,
    logger: Logger,
  ) {
    this.endpoint = endpoint;
    this.outbox = outbox;
    this.connector = connector;
    this.done = done;
    this.fallback = fallback;
    this.logger = logger;
  }

  /** Runs until done(); the returned promise never rejects. */
  async run(): Promise<void> {
    try {
      while (!this.done()) {
        if (this.outbox.queued === 0) {
          await this.outbox.changed.wait();
          continue;
        }
        await new Promise<void>((resolve) => setImmediate(resolve));
        const batch = this.outbox.drainInto([], MAX_BATCH);
        if (batch.length > 0) {
          await this.deliver(batch);
        }
      }
    } catch (e) {
      this.logger.error(`ack sender of ${this.endpoint} failed: ${(e as Error).stack ?? e}`);
    }
  }

  private async deliver(batch: Completion[]): Promise<void> {
    for (;;) {
      if (this.done()) {
        this.logger.debug(`dropping ${batch.length} unsent acks/nacks: receiver stopped`);
        return;
      }
      const session = await this.connector.awaitSubscribed(REROUTE_AFTER_MS);
      if (session !== undefined) {
        // Whatever piled up while we waited for the stream goes out in the same messages.
        this.outbox.drainInto(batch, MAX_BATCH);
        if (session.sendCompletions(batch)) {
          if (this.rerouting) {
            this.rerouting = false;
            this.logger.info(
              `manager ${this.endpoint} is reachable again: its acks/nacks go to it again`,
            );
          }
          return;
        }
        continue;
      }
      if (this.done()) {
        continue;
      }
      const other = this.fallback(this.outbox);
      if (other !== undefined) {
        this.reroute(batch, other);
        return;
      }
    }
  }

  /**
   * Moves the batch, and whatever else waits here, to another endpoint's outbox: that endpoint now
   * owes the answers (added there before they leave here, so that stop() never sees both empty).
   */
  private reroute(batch: Completion[], other: Outbox): void {
    this.outbox.drainInto(batch, Number.MAX_SAFE_INTEGER);
    for (const c of batch) {
      other.add(c);
    }
    this.outbox.answered(batch.length);
    if (!this.rerouting) {
      this.rerouting = true;
      this.logger.info(
        `manager ${this.endpoint} unreachable for ${REROUTE_AFTER_MS} ms: sending its acks/nacks ` +
          `through another manager (${batch.length} now; every manager applies them for its ` +
          `shards through the same CAS)`,
      );
    } else {
      this.logger.debug(
        `manager ${this.endpoint} still unreachable: ${batch.length} acks/nacks rerouted`,
      );
    }
  }
}
