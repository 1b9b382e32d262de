package dev.sluice.core.queue.context;

import dev.sluice.db.store.BadRowListener;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rows of one queue that Sluice skipped or made dead because it cannot serve them as they are (an
 * unknown state, a column the driver cannot read, an epoch at its column's maximum): each is
 * counted in {@code sluice_bad_rows_total{shard,queue,reason}} and logged with its shard, queue and
 * id — at most one warning every {@link #WARN_EVERY_NS} per queue, saying how many more came
 * meanwhile, so a table full of them cannot flood the log.
 *
 * <p>Thread-safe: the store calls it from the poller, firer and ack threads; the warning's pace is
 * kept under this object's lock (no database call is made under it).
 */
public final class BadRows implements BadRowListener {
  private static final Logger log = LoggerFactory.getLogger(BadRows.class);
  static final long WARN_EVERY_NS = TimeUnit.SECONDS.toNanos(10);

  private final QueueContext ctx;
  private long unwarned;
  private long nextWarnMono = Long.MIN_VALUE / 2;

  public BadRows(QueueContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public void badRow(long id, String reason, String detail) {
    ctx.metrics().badRows(reason).increment();
    long more;
    synchronized (this) {
      long mono = ctx.clock().monoNs();
      if (mono - nextWarnMono < 0) {
        unwarned++;
        return;
      }
      more = unwarned;
      unwarned = 0;
      nextWarnMono = mono + WARN_EVERY_NS;
    }
    log.warn(
        "{}: event {}: {} ({}; {} more bad rows since the last such warning, see"
            + " sluice_bad_rows_total)",
        ctx.where(),
        id,
        detail,
        reason,
        more);
  }
}
