package dev.sluice.core.queue.poll;

import io.micrometer.core.instrument.Counter;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which way a fair queue's poller reads: one poll for all tenants, or tenant by tenant ({@link
 * TenantRounds}) while a backlog may hide other tenants' events. The poller's thread only.
 *
 * <p><b>Hysteresis.</b> A switch to per-tenant rounds lasts at least {@link #hold}: a round that
 * finds no tenant at its share does not end the mode before that. A backlog that makes the poller
 * come back within {@link #REENTRY_NS} of leaving doubles the hold (up to {@link #MAX_HOLD_NS}); a
 * calm start (the last exit longer ago) sets it back to {@link #MIN_HOLD_NS}. A restarted manager
 * facing one tenant's backlog once switched back and forth up to 26 times a second; now it switches
 * at most about once a second, and ever less often while the cause lasts.
 *
 * <p><b>Visible, not noisy.</b> Every switch counts in {@code sluice_poll_mode_switches_total}; a
 * switch is logged at INFO at most once a minute per queue ({@link #LOG_EVERY_NS}), and the next
 * line says how many switches went unlogged in between (they are at DEBUG).
 */
final class PollMode {
  private static final Logger log = LoggerFactory.getLogger(PollMode.class);

  static final long MIN_HOLD_NS = TimeUnit.SECONDS.toNanos(1);
  static final long MAX_HOLD_NS = TimeUnit.SECONDS.toNanos(30);
  static final long REENTRY_NS = TimeUnit.SECONDS.toNanos(10);
  static final long LOG_EVERY_NS = TimeUnit.MINUTES.toNanos(1);

  private final String where;
  private final Counter switches;

  private boolean perTenant;
  private long enteredMono;
  private long leftMono = Long.MIN_VALUE / 2;
  private long holdNs = MIN_HOLD_NS;
  private long loggedMono = Long.MIN_VALUE / 2;
  private int unlogged;
  private int logged;

  /**
   * @param where the queue and shard, for the log ({@code QueueContext.where()})
   * @param switches {@code sluice_poll_mode_switches_total} of the queue
   */
  PollMode(String where, Counter switches) {
    this.where = where;
    this.switches = switches;
  }

  /** Whether the poller reads tenant by tenant now. */
  boolean perTenant() {
    return perTenant;
  }

  /** The shortest stay in per-tenant rounds from the last switch into them. */
  long hold() {
    return holdNs;
  }

  /** Switches to per-tenant rounds, for {@code why} (a sentence for the log). */
  void enter(long mono, String why) {
    if (perTenant) {
      return;
    }
    perTenant = true;
    holdNs = mono - leftMono < REENTRY_NS ? Math.min(MAX_HOLD_NS, 2 * holdNs) : MIN_HOLD_NS;
    enteredMono = mono;
    switched(mono, why + "; polling tenant by tenant");
  }

  /** Whether per-tenant rounds have lasted their hold, so that the single poll may come back. */
  boolean mayLeave(long mono) {
    return perTenant && mono - enteredMono >= holdNs;
  }

  /** Back to one poll for all tenants. */
  void leave(long mono) {
    if (!perTenant) {
      return;
    }
    perTenant = false;
    leftMono = mono;
    switched(mono, "no tenant at its share any more; back to one poll for all");
  }

  /** How many switches were logged at INFO (for tests). */
  int logged() {
    return logged;
  }

  private void switched(long mono, String what) {
    switches.increment();
    if (mono - loggedMono < LOG_EVERY_NS) {
      unlogged++;
      log.debug("{}: {}", where, what);
      return;
    }
    String since =
        unlogged == 0
            ? ""
            : " (" + unlogged + " switches of the poll's mode since the last line were not logged)";
    log.info("{}: {}{}", where, what, since);
    loggedMono = mono;
    unlogged = 0;
    logged++;
  }
}
