package dev.sluice.manager.channel;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one channel did for one queue on one shard, for the status page and the metrics ({@code
 * sluice_channel_up}, {@code sluice_channel_published_total}, {@code
 * sluice_channel_failures_total{kind=refused|down}}), and whether its broker is down. Any thread.
 */
final class ChannelStats {
  private static final Logger log = LoggerFactory.getLogger(ChannelStats.class);

  private final String where;
  private final Counter published;
  private final Counter refused;
  private final Counter down;
  private final AtomicLong publishedCount = new AtomicLong();
  private final AtomicLong failureCount = new AtomicLong();
  private volatile boolean brokerDown;
  private volatile String lastError = "";

  ChannelStats(MeterRegistry registry, String channel, String queue, String shard) {
    this.where = "channel " + channel + " (queue " + queue + ", shard " + shard + ")";
    Tags tags = Tags.of("channel", channel, "queue", queue, "shard", shard);
    this.published = registry.counter("sluice.channel.published", tags);
    this.refused = registry.counter("sluice.channel.failures", tags.and("kind", "refused"));
    this.down = registry.counter("sluice.channel.failures", tags.and("kind", "down"));
    registry.gauge("sluice.channel.up", tags, this, s -> s.brokerDown ? 0 : 1);
  }

  void published() {
    published.increment();
    publishedCount.incrementAndGet();
    if (brokerDown) {
      brokerDown = false;
      log.info("{}: the broker confirms again; publishing resumes", where);
    }
  }

  void refused(String reason) {
    refused.increment();
    failureCount.incrementAndGet();
    lastError = reason;
  }

  void brokerDown(String reason) {
    down.increment();
    failureCount.incrementAndGet();
    lastError = reason;
    if (!brokerDown) {
      brokerDown = true;
      log.warn(
          "{}: the broker is down ({}); the queue waits, probing with one event at a time",
          where,
          reason);
    }
  }

  boolean down() {
    return brokerDown;
  }

  long publishedTotal() {
    return publishedCount.get();
  }

  long failuresTotal() {
    return failureCount.get();
  }

  String lastError() {
    return lastError;
  }
}
