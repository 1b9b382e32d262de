package dev.sluice.bench;

import dev.sluice.core.config.BinlogMode;
import dev.sluice.core.config.ShardConfig;
import dev.sluice.core.queue.QueueManager;
import dev.sluice.db.QueueControl;
import dev.sluice.db.QueueConvention;
import dev.sluice.manager.SluiceServer;
import dev.sluice.manager.config.ChannelConfig;
import dev.sluice.manager.config.ManagerConfig;
import dev.sluice.receiver.EventHandler;
import dev.sluice.receiver.SluiceReceiver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;

/**
 * Sluice as the benchmark runs it: a queue table made by {@link QueueConvention}, the manager
 * in-process ({@link SluiceServer} on a loopback port) and receivers from the real SDK.
 */
public final class SluiceSide implements AutoCloseable {
  public static final String QUEUE = "bench_events";

  /** With {@code drain --groups}: the queue of the groups' completions. */
  public static final String COMPLETIONS = "bench_done";

  /** With {@code drain --groups}: the grouped queue's column and index (README "Event groups"). */
  public static final String GROUP_KEY = "group_key";

  public static final String COMPLETES_GROUP = "completes_group";

  /** The manager's id (channel clients are named after it) and its one shard. */
  public static final String MANAGER_ID = "bench";

  public static final String SHARD = "bench";

  /** The queue's options: the documented defaults, spelled out. */
  public static final String COMMENT =
      "sluice_queue ack_wait=30s cache_size=10000 poll_interval=100ms";

  /** The table comment the queue is created with: {@link #COMMENT} unless overridden. */
  private static volatile String comment = COMMENT;

  public final Database db;
  public final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private SluiceServer server;
  private BenchTls tls;

  /** Runs the manager with mutual TLS and token authentication (before startManager). */
  public SluiceSide secure() throws java.io.IOException {
    this.tls = new BenchTls();
    return this;
  }

  private final List<SluiceReceiver> receivers = new ArrayList<>();

  public SluiceSide(Database db) {
    this.db = db;
  }

  /** The queue table with one small user column, {@code payload}. */
  public void createQueue() throws SQLException {
    createQueue(QUEUE);
  }

  /** Another queue table like the bench's, named {@code name}. */
  public void createQueue(String name) throws SQLException {
    db.exec(QueueConvention.createTableSql(name, List.of("`payload` VARCHAR(32) NULL"), comment()));
  }

  /**
   * The queue table with an ordering key, {@code ordering_key BIGINT NULL} ({@link
   * QueueConvention#ORDERING_KEY}), its index {@code sluice_ordering (ordering_key, state, id)}
   * ({@link QueueConvention#ORDERING_INDEX}) and {@code payload}. The comment decides whether the
   * queue is ordered ({@code ordering=key}); the table is the same either way.
   */
  public void createOrderedQueue() throws SQLException {
    db.exec(
        QueueConvention.createTableSql(
            QUEUE,
            List.of(
                "`" + QueueConvention.ORDERING_KEY + "` BIGINT NULL", "`payload` VARCHAR(32) NULL"),
            comment()));
    db.exec(
        "ALTER TABLE `"
            + QUEUE
            + "` ADD KEY `"
            + QueueConvention.ORDERING_INDEX
            + "` (`"
            + QueueConvention.ORDERING_KEY
            + "`, `state`, `id`)");
  }

  /**
   * The queue table as a grouped queue, with {@code group_key VARCHAR(191) NULL} (binary collation)
   * and its index {@code sluice_group (group_key)} (with {@code stateIndexed}, earlier versions'
   * {@code (group_key, state)}), and {@code payload}; and the completion queue {@link
   * #COMPLETIONS}, with {@code completes_group} (same type) and {@code payload}. Both with this
   * run's comment.
   */
  public void createGroupedQueues(boolean stateIndexed) throws SQLException {
    String key = " VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL";
    db.exec(
        QueueConvention.createTableSql(
            QUEUE, List.of("`" + GROUP_KEY + "`" + key, "`payload` VARCHAR(32) NULL"), comment()));
    db.exec(
        "ALTER TABLE `"
            + QUEUE
            + "` ADD KEY `sluice_group` (`"
            + GROUP_KEY
            + (stateIndexed ? "`, `state`)" : "`)"));
    db.exec(
        QueueConvention.createTableSql(
            COMPLETIONS,
            List.of("`" + COMPLETES_GROUP + "`" + key, "`payload` VARCHAR(32) NULL"),
            comment()));
  }

  /**
   * Sets the queue options of this run: {@code options} (e.g. {@code poll_interval=10ms}) replace
   * or add to the defaults of {@link #COMMENT}.
   */
  public static String useOptions(String options) {
    java.util.Map<String, String> m = new java.util.LinkedHashMap<>();
    for (String kv :
        (COMMENT.substring("sluice_queue".length()) + " " + options).trim().split("\\s+")) {
      if (!kv.isEmpty()) {
        int eq = kv.indexOf('=');
        if (eq < 1) {
          throw new IllegalArgumentException(
              "--queue-options: expected key=value, got '" + kv + "'");
        }
        m.put(kv.substring(0, eq), kv.substring(eq + 1));
      }
    }
    StringBuilder sb = new StringBuilder("sluice_queue");
    m.forEach((k, v) -> sb.append(' ').append(k).append('=').append(v));
    comment = sb.toString();
    return comment;
  }

  private static volatile BinlogMode binlog = BinlogMode.AUTO;

  /** Whether the managers of this run follow the server's binlog ({@code auto}) or poll alone. */
  public static void useBinlog(BinlogMode mode) {
    binlog = mode;
  }

  /** The table comment queues of this run get. */
  public static String comment() {
    return comment;
  }

  /** The manager's gRPC port (after {@link #startManager}). */
  public int port() {
    return server.port();
  }

  /** Starts the manager and waits until it serves the queue. */
  public QueueManager startManager(int poolSize) throws InterruptedException {
    return startManager(poolSize, null, Map.of());
  }

  /**
   * Starts the manager and waits until it serves the queue. With a {@code channel}, the manager's
   * configuration declares it and binds the queue to it with {@code queueOptions} (its {@code
   * queues:} section: {@code channel=<name>} and the like), so the manager publishes the queue's
   * events to the broker through its channel outlet instead of offering them to receivers.
   */
  public QueueManager startManager(
      int poolSize, ChannelConfig channel, Map<String, String> queueOptions)
      throws InterruptedException {
    ManagerConfig.Builder b =
        ManagerConfig.builder()
            .managerId(MANAGER_ID)
            .grpcHost("127.0.0.1")
            .grpcPort(0)
            .shard(
                new ShardConfig(
                    SHARD,
                    db.url(),
                    db.user(),
                    db.password(),
                    poolSize,
                    dev.sluice.db.KeyRange.ALL,
                    binlog))
            .shutdownTimeout(Duration.ofSeconds(5))
            .security(tls == null ? dev.sluice.manager.security.SecurityConfig.NONE : tls.config());
    if (channel != null) {
      b.channel(channel).queueOverride(QUEUE, queueOptions);
    }
    server = new SluiceServer(b.build(), Clock.systemUTC(), registry).start();
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (System.nanoTime() < deadline) {
      var q = server.engine().find(QUEUE);
      var shard = server.engine().shards().get(0);
      if (q.isPresent()
          && (binlog == BinlogMode.OFF
              || shard.binlog().following()
              || System.nanoTime() > deadline - Duration.ofSeconds(20).toNanos())) {
        Progress.note(
            "manager: "
                + (shard.binlog().following()
                    ? "follows the binlog (" + shard.binlog().detail() + ")"
                    : "polls alone (" + shard.binlog().detail() + ")"));
        return q.get();
      }
      Thread.sleep(20);
    }
    throw new IllegalStateException("the manager did not serve " + QUEUE + " within 30 s");
  }

  /**
   * Pauses or resumes the queue as an operator does, in {@link QueueControl#TABLE}, and at once in
   * the running manager. An in-process {@link QueueManager#setPaused} alone lasts only until the
   * manager's next discovery round, which applies the switches of that table again (no row: not
   * paused): a load longer than {@code discovery_interval} would otherwise run into a resumed
   * queue.
   */
  public void setPaused(boolean paused) {
    setPaused(QUEUE, paused);
  }

  /** {@link #setPaused(boolean)} for the queue {@code name} of the shard. */
  public void setPaused(String name, boolean paused) {
    if (control == null) {
      control = db.pool("bench-control", 1);
    }
    new QueueControl(control).setPaused(name, paused);
    queue(name).setPaused(paused);
  }

  /** The connection {@link #setPaused} writes the switch on; closed with this. */
  private com.zaxxer.hikari.HikariDataSource control;

  public QueueManager queue() {
    return queue(QUEUE);
  }

  public QueueManager queue(String name) {
    return server.engine().find(name).orElseThrow();
  }

  /** Waits until the manager serves the queue {@code name} too (the first is waited for). */
  public QueueManager awaitQueue(String name) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (System.nanoTime() < deadline) {
      var q = server.engine().find(name);
      if (q.isPresent()) {
        return q.get();
      }
      Thread.sleep(20);
    }
    throw new IllegalStateException("the manager did not serve " + name + " within 30 s");
  }

  public SluiceServer server() {
    return server;
  }

  /**
   * Starts {@code count} receivers whose handler calls {@code onEvent} with the event's due time
   * and returns (an immediate ack); waits until each is subscribed.
   */
  public void startReceivers(int count, int concurrency, int maxInFlight, LongConsumer onDue) {
    startHandlers(count, concurrency, maxInFlight, e -> onDue.accept(e.dueTimeNanos()));
  }

  /** Starts {@code count} receivers running {@code handler}; waits until each is subscribed. */
  public void startHandlers(int count, int concurrency, int maxInFlight, EventHandler handler) {
    startHandlers(QUEUE, count, concurrency, maxInFlight, handler);
  }

  /** {@link #startHandlers(int, int, int, EventHandler)} on the queue {@code name}. */
  public void startHandlers(
      String name, int count, int concurrency, int maxInFlight, EventHandler handler) {
    int first = receivers.size();
    for (int i = 0; i < count; i++) {
      var b = SluiceReceiver.builder();
      receivers.add(
          (tls == null ? b : tls.receiver(b))
              .target((tls == null ? "127.0.0.1" : BenchTls.host()) + ":" + server.port())
              .queue(name)
              .receiverId(name.equals(QUEUE) ? "bench-" + i : name + "-" + i)
              .concurrency(concurrency)
              .maxInFlight(maxInFlight)
              .shutdownTimeout(Duration.ofSeconds(5))
              .handler(handler)
              .build()
              .start());
    }
    for (SluiceReceiver r : receivers.subList(first, receivers.size())) {
      if (!r.awaitSubscribed(Duration.ofSeconds(30))) {
        throw new IllegalStateException("receiver " + r.receiverId() + " did not subscribe");
      }
    }
  }

  /** One of the manager's counters, e.g. {@code sluice_events_acked} (once the queue runs). */
  public Counter counterOf(String name) {
    Counter c = registry.find(name).counter();
    if (c == null) {
      throw new IllegalStateException("the manager has no counter " + name);
    }
    return c;
  }

  /** One of the manager's counters of one queue, e.g. {@code sluice.events.acked}. */
  public Counter counterOf(String name, String queue) {
    Counter c = registry.find(name).tag("queue", queue).counter();
    if (c == null) {
      throw new IllegalStateException("the manager has no counter " + name + " of queue " + queue);
    }
    return c;
  }

  /**
   * The manager's own view of a latency timer ({@code sluice_due_to_dispatch}: due time to fire),
   * for splitting a receiver-measured latency into the manager's part and the delivery's.
   */
  public String timerSummary(String name) {
    Timer t = registry.find(name).timer();
    if (t == null || t.count() == 0) {
      return name + ": no samples";
    }
    io.micrometer.core.instrument.distribution.CountAtBucket[] buckets =
        t.takeSnapshot().histogramCounts();
    if (buckets.length == 0) {
      return String.format(
          Locale.ROOT,
          "%s (the manager's timer, whole run): count=%d mean=%.2fms recent max=%.2fms",
          name,
          t.count(),
          t.mean(TimeUnit.MILLISECONDS),
          t.max(TimeUnit.MILLISECONDS));
    }
    return String.format(
        Locale.ROOT,
        "%s (the manager's timer, whole run): count=%d mean=%.2fms p50<=%sms p99<=%sms"
            + " p99.9<=%sms recent max=%.2fms",
        name,
        t.count(),
        t.mean(TimeUnit.MILLISECONDS),
        bucketBound(buckets, t.count(), 0.5),
        bucketBound(buckets, t.count(), 0.99),
        bucketBound(buckets, t.count(), 0.999),
        t.max(TimeUnit.MILLISECONDS));
  }

  /** The upper bound of the histogram bucket that holds quantile {@code q} (cumulative counts). */
  private static String bucketBound(
      io.micrometer.core.instrument.distribution.CountAtBucket[] buckets, long count, double q) {
    if (buckets.length == 0) {
      return "n/a";
    }
    // Cumulative counts in some registries, per bucket in others: the last tells which.
    boolean cumulative = buckets[buckets.length - 1].count() >= count * 0.99;
    double want = Math.ceil(q * count);
    double seen = 0;
    for (io.micrometer.core.instrument.distribution.CountAtBucket b : buckets) {
      seen = cumulative ? b.count() : seen + b.count();
      if (seen >= want) {
        return String.format(Locale.ROOT, "%.2f", b.bucket(TimeUnit.MILLISECONDS));
      }
    }
    return "> "
        + String.format(
            Locale.ROOT, "%.0f", buckets[buckets.length - 1].bucket(TimeUnit.MILLISECONDS));
  }

  /**
   * Inserts {@code n} events due now with 100-row INSERTs (time_next and the other system columns
   * take their defaults).
   */
  public void insertDueNow(long n, LongConsumer progress) throws SQLException {
    insertRows(n, 0, 0, progress);
  }

  /**
   * Inserts {@code n} events with 100-row INSERTs; event {@code i} is due {@code firstDelayNs + i *
   * spacingNs} after the database's now (both 0: due now, by the column default).
   */
  public void insertRows(long n, long firstDelayNs, long spacingNs, LongConsumer progress)
      throws SQLException {
    boolean scheduled = firstDelayNs != 0 || spacingNs != 0;
    try (Connection c = db.connect()) {
      c.setAutoCommit(true);
      int batch = 100;
      String one = scheduled ? "(" + QueueConvention.NOW_NS_SQL + " + ?, ?)" : "(?)";
      String cols = scheduled ? "(time_next, payload)" : "(payload)";
      String full = insertSql(cols, one, batch);
      long done = 0;
      try (PreparedStatement ps = c.prepareStatement(full)) {
        while (done < n) {
          int k = (int) Math.min(batch, n - done);
          PreparedStatement use = k == batch ? ps : c.prepareStatement(insertSql(cols, one, k));
          int p = 1;
          for (int i = 0; i < k; i++) {
            long idx = done + i;
            if (scheduled) {
              use.setLong(p++, firstDelayNs + idx * spacingNs);
            }
            use.setString(p++, "e" + idx);
          }
          use.executeUpdate();
          if (use != ps) {
            use.close();
          }
          done += k;
          progress.accept(done);
        }
      }
    }
  }

  /**
   * Inserts {@code n} events due now as the children of groups of {@code groupSize}, each group in
   * one transaction: its children in one multi-row INSERT into the grouped queue, and its
   * completion (a row of {@link #COMPLETIONS} whose {@code completes_group} names it), the usual
   * way. Returns the number of groups (the last one may be smaller).
   */
  public long insertGroups(long n, int groupSize, LongConsumer progress) throws SQLException {
    long groups = 0;
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      long done = 0;
      try (PreparedStatement completion =
          c.prepareStatement(
              "INSERT INTO " + COMPLETIONS + " (" + COMPLETES_GROUP + ", payload) VALUES (?, ?)")) {
        while (done < n) {
          int k = (int) Math.min(groupSize, n - done);
          String key = "g" + groups;
          StringBuilder sql =
              new StringBuilder("INSERT INTO " + QUEUE + " (" + GROUP_KEY + ", payload) VALUES ");
          for (int i = 0; i < k; i++) {
            sql.append(i == 0 ? "" : ",").append("(?, ?)");
          }
          try (PreparedStatement ps = c.prepareStatement(sql.toString())) {
            int p = 1;
            for (int i = 0; i < k; i++) {
              ps.setString(p++, key);
              ps.setString(p++, "e" + (done + i));
            }
            ps.executeUpdate();
          }
          completion.setString(1, key);
          completion.setString(2, "done");
          completion.executeUpdate();
          c.commit();
          groups++;
          done += k;
          progress.accept(done);
        }
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      }
    }
    return groups;
  }

  private static String insertSql(String cols, String one, int k) {
    StringBuilder sb = new StringBuilder("INSERT INTO " + QUEUE + " " + cols + " VALUES ");
    for (int i = 0; i < k; i++) {
      sb.append(i == 0 ? "" : ",").append(one);
    }
    return sb.toString();
  }

  /**
   * Disconnects the receivers once the run's events are all acked. They are aborted rather than
   * closed: a graceful close can wait 5 s for the manager to end the stream (see BENCHMARKS.md),
   * and with nothing in flight both end the same way.
   */
  public void stopReceivers() {
    receivers.forEach(SluiceReceiver::abort);
    receivers.clear();
  }

  @Override
  public void close() {
    receivers.forEach(SluiceReceiver::abort);
    receivers.clear();
    if (server != null) {
      server.stop();
    }
    if (control != null) {
      control.close();
    }
  }
}
