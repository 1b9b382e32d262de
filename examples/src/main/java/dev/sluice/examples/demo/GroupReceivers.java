package dev.sluice.examples.demo;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.db.DataSources;
import dev.sluice.receiver.GroupOutcome;
import dev.sluice.receiver.ReceivedEvent;
import dev.sluice.receiver.SluiceReceiver;
import dev.sluice.receiver.TransactionalAck;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The consumers of {@code sluice demo --groups}, one pair per queue (the children's two grouped
 * queues and the two completion queues): a flaky receiver whose handler fails 5% of the time, and
 * one that is killed mid-run ({@link SluiceReceiver#abort()}) and replaced under a new id; plus one
 * receiver of the recurring event's queue.
 *
 * <ul>
 *   <li>A child's handler fails always for a doomed child (it ends dead), notes a delivered copy (a
 *       repeat of a dedup key that got in), and otherwise notes the child handled.
 *   <li>A completion's handler reads, in its own transaction, the states of its group's children in
 *       both grouped queues; it is early when one of them is still pending or fired (with {@code
 *       group_on_dead=fail_fast}: and none is dead). It writes what it saw into {@code
 *       group_outcomes} and acks the completion in the same transaction ({@link TransactionalAck}):
 *       a handling that committed is one row, so a completion handled twice shows as two, and an
 *       ack lost to a killed manager cannot make a double.
 * </ul>
 */
final class GroupReceivers implements AutoCloseable, Consumers {
  static final double FAILURE_RATE = 0.05;
  private static final int CHILD_CONCURRENCY = 8;
  private static final int COMPLETION_CONCURRENCY = 4;

  private final List<String> targets;
  private final HikariDataSource pool;
  private final List<SluiceReceiver> live = new CopyOnWriteArrayList<>();
  private final List<SluiceReceiver> doomed = new CopyOnWriteArrayList<>();

  private final Set<GroupLedger.Row> handledChildren = ConcurrentHashMap.newKeySet();
  private final Set<GroupLedger.Row> copiesDelivered = ConcurrentHashMap.newKeySet();
  private final AtomicLong childDeliveries = new AtomicLong();
  private final AtomicLong completionDeliveries = new AtomicLong();
  private final AtomicLong completionsHandled = new AtomicLong();
  private final AtomicLong staleCompletionAcks = new AtomicLong();
  private final AtomicLong completionErrors = new AtomicLong();
  private final AtomicLong ticks = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();

  GroupReceivers(List<String> targets, DemoDatabase.Shard shard) {
    this.targets = List.copyOf(targets);
    this.pool =
        DataSources.pool(
            "demo-completions", shard.url(), DemoDatabase.USER, DemoDatabase.PASSWORD, 8);
  }

  /** Starts every receiver and waits until each is subscribed. */
  void start() {
    List<SluiceReceiver> started = new ArrayList<>();
    for (String q : GroupProducer.CHILD_QUEUES) {
      started.add(startReceiver(q, "flaky", FAILURE_RATE));
      doomed.add(startReceiver(q, "doomed", 0));
    }
    for (String q : GroupProducer.COMPLETION_QUEUES) {
      started.add(startReceiver(q, "flaky", FAILURE_RATE));
      doomed.add(startReceiver(q, "doomed", 0));
    }
    started.add(startReceiver(GroupsRun.TICKS, "ticks", 0));
    started.addAll(doomed);
    for (SluiceReceiver r : started) {
      if (!r.awaitSubscribed(Duration.ofSeconds(30))) {
        throw new IllegalStateException(r.receiverId() + " could not subscribe within 30 s");
      }
    }
  }

  /** Kills the doomed receivers abruptly, then starts their replacements after {@code pause}. */
  void killAndReplace(Duration pause) throws InterruptedException {
    List<SluiceReceiver> victims = new ArrayList<>(doomed);
    doomed.clear();
    for (SluiceReceiver r : victims) {
      live.remove(r);
      r.abort();
    }
    Thread.sleep(pause.toMillis());
    List<SluiceReceiver> replacements = new ArrayList<>();
    for (String q : GroupProducer.CHILD_QUEUES) {
      replacements.add(startReceiver(q, "replacement", 0));
    }
    for (String q : GroupProducer.COMPLETION_QUEUES) {
      replacements.add(startReceiver(q, "replacement", 0));
    }
    for (SluiceReceiver r : replacements) {
      if (!r.awaitSubscribed(Duration.ofSeconds(30))) {
        throw new IllegalStateException(r.receiverId() + " could not subscribe within 30 s");
      }
    }
  }

  /** Waits, up to the timeout, until every live receiver has a stream to every manager. */
  void awaitAllStreams(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (live.stream().allMatch(r -> r.stats().streamsConnected() == targets.size())) {
        return;
      }
      Thread.sleep(50);
    }
  }

  @Override
  public int liveCount() {
    return live.size();
  }

  @Override
  public int inFlight() {
    int n = 0;
    for (SluiceReceiver r : live) {
      n += r.stats().inFlight();
    }
    return n;
  }

  Set<GroupLedger.Row> handledChildren() {
    return handledChildren;
  }

  Set<GroupLedger.Row> copiesDelivered() {
    return copiesDelivered;
  }

  long childDeliveries() {
    return childDeliveries.get();
  }

  long completionDeliveries() {
    return completionDeliveries.get();
  }

  long completionsHandled() {
    return completionsHandled.get();
  }

  long staleCompletionAcks() {
    return staleCompletionAcks.get();
  }

  long completionErrors() {
    return completionErrors.get();
  }

  long ticks() {
    return ticks.get();
  }

  long failures() {
    return failures.get();
  }

  @Override
  public void close() {
    for (SluiceReceiver r : live) {
      r.close();
    }
    live.clear();
    pool.close();
  }

  private SluiceReceiver startReceiver(String queue, String role, double failureRate) {
    boolean completion = GroupProducer.COMPLETION_QUEUES.contains(queue);
    boolean tick = queue.equals(GroupsRun.TICKS);
    String id = queue.replace("_events", "") + "-" + role;
    SluiceReceiver r =
        SluiceReceiver.builder()
            .targets(targets)
            .queue(queue)
            .receiverId(id)
            .concurrency(completion ? COMPLETION_CONCURRENCY : CHILD_CONCURRENCY)
            .shutdownTimeout(Duration.ofSeconds(10))
            .handler(
                event -> {
                  if (tick) {
                    ticks.incrementAndGet();
                  } else if (completion) {
                    complete(id, failureRate, event);
                  } else {
                    child(failureRate, event);
                  }
                })
            .build();
    live.add(r);
    return r.start();
  }

  private void child(double failureRate, ReceivedEvent event) throws InterruptedException {
    childDeliveries.incrementAndGet();
    GroupLedger.Row row = new GroupLedger.Row(event.queue(), event.id());
    if (event.getInt("copy") == 1) {
      copiesDelivered.add(row);
    }
    ThreadLocalRandom random = ThreadLocalRandom.current();
    Thread.sleep(random.nextInt(2, 11));
    if (event.getInt("doomed") == 1) {
      failures.incrementAndGet();
      throw new IllegalStateException("demo: a doomed child fails every time");
    }
    if (random.nextDouble() < failureRate) {
      failures.incrementAndGet();
      throw new IllegalStateException("demo: simulated handler failure");
    }
    handledChildren.add(row);
  }

  private void complete(String receiverId, double failureRate, ReceivedEvent event)
      throws SQLException {
    completionDeliveries.incrementAndGet();
    if (ThreadLocalRandom.current().nextDouble() < failureRate) {
      failures.incrementAndGet();
      throw new IllegalStateException("demo: simulated handler failure");
    }
    String key = event.getString("completes_group");
    boolean failFast = event.queue().equals(GroupProducer.FAIL_FAST);
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      try {
        long open = 0;
        long acked = 0;
        long dead = 0;
        long cancelled = 0;
        for (String q : GroupProducer.CHILD_QUEUES) {
          try (PreparedStatement ps =
              c.prepareStatement(
                  "SELECT state, COUNT(*) FROM `" + q + "` WHERE group_key = ? GROUP BY state")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                int state = rs.getInt(1);
                long n = rs.getLong(2);
                switch (state) {
                  case 0, 1 -> open += n;
                  case 2 -> acked += n;
                  case 3 -> dead += n;
                  case 4 -> cancelled += n;
                  default -> open += n;
                }
              }
            }
          }
        }
        boolean early = failFast ? open > 0 && dead == 0 : open > 0;
        Optional<GroupOutcome> reported = event.group();
        try (PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO group_outcomes (completion_queue, completion_id, group_key,"
                    + " open_children, acked, dead, cancelled, early, receiver, attempt, reported,"
                    + " reported_key, reported_acked, reported_dead, reported_cancelled)"
                    + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
          ps.setString(1, event.queue());
          ps.setLong(2, event.id());
          ps.setString(3, key);
          ps.setLong(4, open);
          ps.setLong(5, acked);
          ps.setLong(6, dead);
          ps.setLong(7, cancelled);
          ps.setInt(8, early ? 1 : 0);
          ps.setString(9, receiverId);
          ps.setLong(10, event.attempt());
          ps.setInt(11, reported.isPresent() ? 1 : 0);
          ps.setString(12, reported.map(GroupOutcome::key).orElse(null));
          ps.setObject(13, reported.map(GroupOutcome::acked).orElse(null));
          ps.setObject(14, reported.map(GroupOutcome::dead).orElse(null));
          ps.setObject(15, reported.map(GroupOutcome::cancelled).orElse(null));
          ps.executeUpdate();
        }
        if (!TransactionalAck.ack(c, event)) {
          c.rollback();
          staleCompletionAcks.incrementAndGet();
          throw new IllegalStateException(
              "demo: " + event.describe() + " no longer fired at its epoch; rolled back");
        }
        c.commit();
        completionsHandled.incrementAndGet();
      } catch (SQLException | RuntimeException e) {
        try {
          c.rollback();
        } catch (SQLException ignored) {
          // The connection is broken; the server rolls back.
        }
        if (e instanceof SQLException) {
          completionErrors.incrementAndGet();
        }
        throw e;
      }
    }
  }
}
