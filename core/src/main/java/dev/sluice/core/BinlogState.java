package dev.sluice.core;

import dev.sluice.core.config.BinlogMode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Whether a shard's binlog is followed here, and why not: what operators see (the status page,
 * {@code sluice_binlog_following}, the admin API). One per shard, across leadership terms; written
 * by the term's {@link BinlogFollower}, read by any thread.
 */
public final class BinlogState {
  private final BinlogMode mode;
  private volatile boolean following;
  private volatile String detail;
  final Counter reconnects;
  final Counter rows;
  final Counter news;
  final Counter errors;

  BinlogState(String shard, BinlogMode mode, MeterRegistry registry) {
    this.mode = mode;
    this.detail = mode == BinlogMode.OFF ? "off in the configuration" : "not leading";
    Gauge.builder("sluice.binlog.following", this, s -> s.following ? 1 : 0)
        .description(
            "1 while the shard's binlog is followed (new rows wake their queue), 0 while the queues"
                + " poll alone")
        .tag("shard", shard)
        .register(registry);
    reconnects =
        Counter.builder("sluice.binlog.connects")
            .description("binlog connections made (the first, and each after a gap)")
            .tag("shard", shard)
            .register(registry);
    rows =
        Counter.builder("sluice.binlog.rows")
            .description("rows of queue tables read from the binlog")
            .tag("shard", shard)
            .register(registry);
    news =
        Counter.builder("sluice.binlog.pending.rows")
            .description("binlog rows that were pending (new, retried, released): told to a poller")
            .tag("shard", shard)
            .register(registry);
    errors =
        Counter.builder("sluice.binlog.errors")
            .description("binlog connections lost or refused, and events that could not be read")
            .tag("shard", shard)
            .register(registry);
  }

  public BinlogMode mode() {
    return mode;
  }

  /** Whether new rows come from the binlog now. */
  public boolean following() {
    return following;
  }

  /**
   * While following, where from ({@code host:port}); otherwise why the queues poll alone (the
   * server setting or grant missing, the connection lost).
   */
  public String detail() {
    return detail;
  }

  void set(boolean following, String detail) {
    this.detail = detail;
    this.following = following;
  }
}
