package dev.sluice.manager.channel;

import dev.sluice.core.loop.Backoff;
import dev.sluice.core.loop.Ticker;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When a {@link RabbitLink} connects next, and what an outage counts and logs. The first attempt is
 * due at once; after a connection is lost the next waits {@link #RECONNECT}'s first step (100 ms);
 * each failed attempt in a row (or a turn of the publisher thread that failed) waits the backoff's
 * next step, up to 5 s, with jitter; a connection starts it over. Every wait is measured on the
 * publisher's ticker.
 *
 * <p>Each failed attempt is counted ({@code sluice_channel_connect_failures_total}, {@link
 * PublisherFaults}). The log says what happened once: the first failed attempt of an outage and any
 * later one whose reason differs at WARN (the others at DEBUG), and the connection that ends it at
 * INFO, with how long it took and how many attempts failed.
 *
 * <p>Publisher thread only.
 */
final class RabbitReconnects {
  private static final Logger log = LoggerFactory.getLogger(RabbitPublisher.class);

  /**
   * Between connection attempts: 100 ms after a loss (or a turn that failed), doubling to 5 s while
   * attempts fail, with jitter.
   */
  static final Backoff RECONNECT = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(5));

  private final String description;
  private final Ticker ticker;
  private final PublisherFaults faults;

  /** When the next attempt is due, on the ticker. */
  private long nextAt;

  /** Since when the publisher has had no connection. */
  private long downSince;

  /** Steps of the backoff since the last connection, or the start: failed attempts and turns. */
  private int steps;

  /** Failed attempts since the last connection, or the start. */
  private int failed;

  /** Why the last attempt failed, as logged; null while connected. */
  private String outageReason;

  private long connections;

  RabbitReconnects(String description, Ticker ticker, PublisherFaults faults) {
    this.description = description;
    this.ticker = ticker;
    this.faults = faults;
    this.nextAt = ticker.nanos();
    this.downSince = nextAt;
  }

  /** Whether the next attempt is due. */
  boolean due() {
    return ticker.nanos() - nextAt >= 0;
  }

  /** {@code max}, or less when the next attempt is due sooner (0 when it is due). */
  long waitNs(long max) {
    return Math.min(max, Math.max(0, nextAt - ticker.nanos()));
  }

  /** An attempt failed ({@code why}): counted, logged once per reason, and the backoff grows. */
  void failed(String why) {
    failed++;
    steps++;
    faults.connectFailed();
    if (!why.equals(outageReason)) {
      outageReason = why;
      log.warn(
          "{}: cannot connect: {}; trying again every {} to {} ms until it answers",
          description,
          why,
          TimeUnit.NANOSECONDS.toMillis(RECONNECT.minNs()),
          TimeUnit.NANOSECONDS.toMillis(RECONNECT.maxNs()));
    } else {
      log.debug("{}: cannot connect ({} attempts): {}", description, failed, why);
    }
    nextAt = Backoff.at(ticker.nanos(), RECONNECT.delayNs(steps));
  }

  /**
   * A turn of the publisher thread failed (and dropped its connection, if any): the next attempt
   * waits as after a failed one.
   */
  void turnFailed() {
    steps++;
    nextAt = Backoff.at(ticker.nanos(), RECONNECT.delayNs(steps));
  }

  /** Connected: the outage, if any, is over and logged; the backoff starts over. */
  void connected() {
    connections++;
    String attempts =
        failed == 0 ? "" : " (" + failed + (failed == 1 ? " attempt" : " attempts") + " failed)";
    if (connections == 1) {
      log.info("{}: connected{}", description, attempts);
    } else {
      long downMs = TimeUnit.NANOSECONDS.toMillis(ticker.nanos() - downSince);
      log.info("{}: connected again after {} ms{}", description, downMs, attempts);
    }
    failed = 0;
    steps = 0;
    outageReason = null;
  }

  /** The connection went: an outage starts, and the next attempt waits the backoff's first step. */
  void lost() {
    downSince = ticker.nanos();
    nextAt = Backoff.at(downSince, RECONNECT.delayNs(1));
  }
}
