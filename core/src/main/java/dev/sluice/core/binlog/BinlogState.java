package dev.sluice.core.binlog;

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

  public BinlogState(String shard, BinlogMode mode, MeterRegistry registry) {
    this.mode = mode;
    this.detail = mode == BinlogMode.OFF ? "off in the configuration" : "not leading";
    Gauge.builder("sluice.binlog.following", this, s -> s.following ? 1 : 0)
        .description(
            "1 while the shard's binlog is followed (new rows wake their queue), 0 while the queues"
                + " poll alone")
        .tag("shard", shard)
        .register(registry);
    reconnects =
        counter(
            registry,
            shard,
            "sluice.binlog.connects",
            "binlog connections made (the first, and each after a gap)");
    rows =
        counter(registry, shard, "sluice.binlog.rows", "rows of queue tables read from the binlog");
    news =
        counter(
            registry,
            shard,
            "sluice.binlog.pending.rows",
            "binlog rows that were pending (new, retried, released): told to a poller");
    errors =
        counter(
            registry,
            shard,
            "sluice.binlog.errors",
            "binlog connections lost or refused, and events that could not be read");
  }

  private static Counter counter(MeterRegistry r, String shard, String name, String what) {
    return Counter.builder(name).description(what).tag("shard", shard).register(r);
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
