package dev.sluice.core.binlog;

import com.github.shyiko.mysql.binlog.BinaryLogClient;
import com.github.shyiko.mysql.binlog.event.Event;
import com.github.shyiko.mysql.binlog.event.EventType;
import com.github.shyiko.mysql.binlog.event.TableMapEventData;
import com.github.shyiko.mysql.binlog.event.UpdateRowsEventData;
import com.github.shyiko.mysql.binlog.event.WriteRowsEventData;
import dev.sluice.core.config.ShardConfig;
import dev.sluice.core.loop.Backoff;
import dev.sluice.core.loop.DbClock;
import dev.sluice.core.loop.LoopFaults;
import dev.sluice.core.loop.LoopThread;
import dev.sluice.core.queue.QueueManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the shard's binlog while this process leads it: the rows its queue tables gain wake their
 * pollers at once ({@link BinlogRows}), so a queue with nothing due polls only for the safety net.
 * One replication connection per shard, from the server's current position.
 *
 * <p>Nothing depends on it for correctness: every queue still polls (at least every few seconds),
 * so a missed, late or lost binlog event delays a row, never loses it. After any gap — the
 * connection lost or killed, the server restarted or replaced by a failover — it connects again
 * from the (new) server's current position and wakes every queue, whose next read finds what
 * committed during the gap; it needs no position kept across connections, so a purged binlog or a
 * new primary is no different from a restart.
 *
 * <p>Thread: {@code sluice-<shard>-binlog}, started per leadership term ({@code TermWorkers}):
 * checks the server's settings over JDBC, connects, and reads events until the connection ends;
 * then waits (1 s, growing to 30 s with jitter while connects fail: {@link #RECONNECT}) and starts
 * again. A watchdog on the shard's maintenance thread drops a connection that has been silent past
 * {@link #SILENT_NS} (the server sends a heartbeat every second). Settings missing (binlog off, not
 * ROW format, no grant) leave the queues polling alone, said once in the log and in {@link
 * BinlogState}, and are checked again every {@link #RECHECK_NS}.
 *
 * <p>Errors: a connection refused or lost is the binlog's own business (logged once per reason,
 * counted in {@code sluice_binlog_errors_total}, retried on {@link #RECONNECT}). What the follower
 * did not expect goes through the shard's {@link LoopFaults} as any loop's ({@code
 * sluice_loop_errors_total{loop="binlog"}}): an event it could not use (counted there too, and in
 * {@code sluice_binlog_errors_total}), and whatever else escapes an attempt (an {@code Error}),
 * after which its {@link LoopThread} backs off and tries again.
 */
public final class BinlogFollower {
  private static final Logger log = LoggerFactory.getLogger(BinlogFollower.class);

  static final long HEARTBEAT_MS = 1000;
  static final long SILENT_NS = TimeUnit.SECONDS.toNanos(5);
  static final long RECHECK_NS = TimeUnit.SECONDS.toNanos(30);

  /** Between failed connects: 1 s growing to 30 s, with jitter (every shard's follower at once). */
  static final Backoff RECONNECT = new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(30));

  /** The loop's name in {@code sluice_loop_errors_total}. */
  static final String LOOP = "binlog";

  private final ShardConfig config;
  private final DataSource dataSource;
  private final DbClock clock;
  private final Function<String, QueueManager> queues;
  private final Supplier<Collection<QueueManager>> all;
  private final ScheduledExecutorService maintenance;
  private final BinlogState state;
  private final LoopFaults faults;
  private final LoopThread loop;

  private volatile boolean following;
  private volatile BinaryLogClient client;
  private volatile long lastEventNs;
  private volatile String lastWhy;
  private ScheduledFuture<?> watchdog;

  /** Connects that failed in a row, or 1 after a connection that lasted (this thread only). */
  private long failures;

  public BinlogFollower(
      ShardConfig config,
      DataSource dataSource,
      DbClock clock,
      Function<String, QueueManager> queues,
      Supplier<Collection<QueueManager>> all,
      ScheduledExecutorService maintenance,
      BinlogState state,
      LoopFaults faults) {
    this.config = config;
    this.dataSource = dataSource;
    this.clock = clock;
    this.queues = queues;
    this.all = all;
    this.maintenance = maintenance;
    this.state = state;
    this.faults = faults;
    this.loop = new LoopThread("sluice-" + config.name() + "-binlog", LOOP, faults, clock.ticker());
  }

  /** Whether the binlog is followed now (the queues' pollers ask on each pass). */
  public boolean following() {
    return following;
  }

  public void start() {
    loop.start(() -> loop.run(() -> true, this::attempt));
    watchdog = maintenance.scheduleWithFixedDelay(this::watch, 1, 1, TimeUnit.SECONDS);
  }

  /** No lock needed, no database call; returns without waiting for the thread. */
  public void stop() {
    loop.stop();
    if (watchdog != null) {
      watchdog.cancel(false);
    }
    disconnect();
    loop.interrupt();
    setFollowing(false, "not leading");
  }

  /**
   * One turn of the loop: one connection (until it ends) or one look at settings that are not met;
   * then the pause before the next.
   */
  private void attempt() throws InterruptedException {
    long started = clock.monoNs();
    long pause;
    try {
      String schema = schemaIfFollowable();
      if (schema == null) {
        pause = RECHECK_NS;
      } else {
        follow(schema);
        pause = -1;
      }
    } catch (Exception e) {
      state.errors.increment();
      polling("binlog connection to " + where() + " failed: " + message(e));
      pause = -1;
    }
    if (pause < 0) {
      // A connection that lasted starts the next attempt quickly; failing ones back off.
      failures = clock.monoNs() - started > TimeUnit.SECONDS.toNanos(10) ? 1 : failures + 1;
      pause = RECONNECT.delayNs(failures);
    }
    loop.pause(pause);
  }

  /** The shard's schema when the server's settings let the binlog be followed; else null. */
  private String schemaIfFollowable() throws SQLException {
    BinlogSettings s = BinlogSettings.read(dataSource);
    if (s.unmet() != null) {
      polling(s.unmet());
      return null;
    }
    return s.schema();
  }

  /** One connection: returns when it ends (lost, killed, dropped by the watchdog, or stopped). */
  private void follow(String schema) throws Exception {
    BinlogEndpoint endpoint = BinlogEndpoint.of(config);
    BinaryLogClient c = endpoint.client();
    c.setHeartbeatInterval(HEARTBEAT_MS);
    c.setConnectTimeout(5_000);
    c.setEventDeserializer(BinlogDecoding.deserializer());
    BinlogRows rows =
        new BinlogRows(config.name(), schema, dataSource, queues, clock::nowNs, clock::monoNs);
    c.registerEventListener(e -> onEvent(rows, e));
    c.registerLifecycleListener(
        new BinaryLogClient.AbstractLifecycleListener() {
          @Override
          public void onConnect(BinaryLogClient client) {
            lastEventNs = clock.monoNs();
            state.reconnects.increment();
            setFollowing(
                true,
                "following "
                    + endpoint
                    + " from "
                    + client.getBinlogFilename()
                    + ":"
                    + client.getBinlogPosition());
          }

          @Override
          public void onCommunicationFailure(BinaryLogClient client, Exception ex) {
            state.errors.increment();
            if (loop.running()) {
              log.warn(
                  "shard {}: binlog connection to {} failed: {}", name(), endpoint, message(ex));
            }
          }

          @Override
          public void onEventDeserializationFailure(BinaryLogClient client, Exception ex) {
            state.errors.increment();
            faults.handled(LOOP);
            log.warn("shard {}: a binlog event could not be read: {}", name(), message(ex));
            wakeAll();
          }
        });
    client = c;
    if (!loop.running()) {
      return;
    }
    try {
      c.connect(); // reads events on this thread until the connection ends
    } finally {
      client = null;
      if (loop.running() && following) {
        polling("binlog connection to " + endpoint + " ended; connecting again");
      }
    }
  }

  private void onEvent(BinlogRows rows, Event e) {
    lastEventNs = clock.monoNs();
    EventType type = e.getHeader().getEventType();
    try {
      if (type == EventType.TABLE_MAP) {
        rows.map((TableMapEventData) e.getData());
      } else if (EventType.isWrite(type)) {
        rows.written((WriteRowsEventData) e.getData());
      } else if (EventType.isUpdate(type)) {
        rows.updated((UpdateRowsEventData) e.getData());
      } else {
        return;
      }
      flushCounts(rows);
    } catch (RuntimeException ex) {
      state.errors.increment();
      faults.handled(LOOP);
      log.warn("shard {}: a binlog {} event could not be used: {}", name(), type, message(ex), ex);
      wakeAll();
    }
  }

  private void flushCounts(BinlogRows rows) {
    if (rows.rowsRead > 0) {
      state.rows.increment(rows.rowsRead);
      rows.rowsRead = 0;
    }
    if (rows.rowsNews > 0) {
      state.news.increment(rows.rowsNews);
      rows.rowsNews = 0;
    }
  }

  /** The watchdog: a connection silent past its heartbeats is dropped (and made again). */
  private void watch() {
    BinaryLogClient c = client;
    if (c != null && following && clock.monoNs() - lastEventNs > SILENT_NS) {
      log.warn(
          "shard {}: no binlog event or heartbeat from {} in {} s; reconnecting",
          name(),
          where(),
          TimeUnit.NANOSECONDS.toSeconds(SILENT_NS));
      state.errors.increment();
      disconnect();
    }
  }

  private void disconnect() {
    BinaryLogClient c = client;
    if (c != null) {
      try {
        c.disconnect();
      } catch (Exception e) {
        log.debug("shard {}: binlog disconnect: {}", name(), e.toString());
      }
    }
  }

  private void polling(String why) {
    boolean was = following;
    setFollowing(false, why);
    if (!why.equals(lastWhy) || was) {
      log.warn("shard {}: queues poll alone: {}", name(), why);
    }
    lastWhy = why;
  }

  private void setFollowing(boolean now, String detail) {
    boolean was = following;
    following = now;
    state.set(now, detail);
    if (now && !was) {
      lastWhy = null;
      log.info("shard {}: {}; new rows wake their queue", name(), detail);
    }
    if (now != was) {
      // Connected: each queue reads once, finding what committed while nothing was followed.
      // Lost: each goes back to its polling pace at once.
      wakeAll();
    }
  }

  private void wakeAll() {
    for (QueueManager q : all.get()) {
      q.rowNews().readAgain();
    }
  }

  private String where() {
    try {
      return BinlogEndpoint.of(config).toString();
    } catch (RuntimeException e) {
      return "shard " + config.name();
    }
  }

  private String name() {
    return config.name();
  }

  private static String message(Throwable e) {
    String m = e.getMessage();
    return m == null ? e.getClass().getSimpleName() : m;
  }
}
