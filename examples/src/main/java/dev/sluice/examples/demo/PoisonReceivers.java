package dev.sluice.examples.demo;

import dev.sluice.receiver.ReceivedEvent;
import dev.sluice.receiver.ReceiverStats;
import dev.sluice.receiver.SluiceReceiver;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One receiver per poison queue ({@code poison-<queue>}), reporting every handling to the {@link
 * PoisonTally}. Handlers never fail on purpose, so any second delivery of an event is Sluice's
 * doing. Two labels make the handler itself part of a fault:
 *
 * <ul>
 *   <li>{@value #SET_UNKNOWN_STATE}: while the event is in flight (handler running, ack not yet
 *       sent) the handler sets the row's state to an unknown value, as a hand-written UPDATE would;
 *       then it returns, so the receiver acks a row Sluice cannot decode.
 *   <li>{@value #SLOW}: the handler takes {@link #SLOW_WORK}, so events stay in flight while their
 *       table is altered.
 * </ul>
 */
final class PoisonReceivers implements AutoCloseable {
  static final String SET_UNKNOWN_STATE = "set-unknown-state";
  static final String SLOW = "slow";
  static final Duration SLOW_WORK = Duration.ofSeconds(7);
  private static final int CONCURRENCY = 16;

  private final String target;
  private final PoisonTally tally;
  private final PoisonTables tables;
  private final Clock clock;
  private final Map<String, SluiceReceiver> byQueue = new ConcurrentHashMap<>();
  private final List<SluiceReceiver> all = new CopyOnWriteArrayList<>();

  PoisonReceivers(String target, PoisonTally tally, PoisonTables tables, Clock clock) {
    this.target = target;
    this.tally = tally;
    this.tables = tables;
    this.clock = clock;
  }

  /**
   * Starts the queue's receiver; waits up to {@code wait} for it to subscribe (zero: not at all, as
   * for a queue the manager may not serve yet). Returns whether it subscribed in that time.
   */
  boolean start(String queue, Duration wait) {
    return start(queue, target, idFor(queue), wait);
  }

  /** The receiver id of the queue's own receiver. */
  static String idFor(String queue) {
    return "poison-" + queue;
  }

  /** Starts another receiver of the queue, on one manager's address, as {@link #start}. */
  boolean start(String queue, String managerTarget, String receiverId, Duration wait) {
    SluiceReceiver r =
        SluiceReceiver.builder()
            .targets(List.of(managerTarget))
            .queue(queue)
            .receiverId(receiverId)
            .concurrency(CONCURRENCY)
            .shutdownTimeout(Duration.ofSeconds(5))
            .handler(event -> handle(queue, event))
            .build();
    byQueue.putIfAbsent(queue, r);
    all.add(r);
    r.start();
    return wait.isZero() || r.awaitSubscribed(wait);
  }

  /** The stats of the queue's first receiver. */
  ReceiverStats stats(String queue) {
    return byQueue.get(queue).stats();
  }

  private void handle(String queue, ReceivedEvent event) throws SQLException, InterruptedException {
    Instant now = clock.instant();
    long seenNs = now.getEpochSecond() * 1_000_000_000L + now.getNano();
    Object label = event.columns().get("label");
    String text = label instanceof String s ? s : String.valueOf(label);
    tally.seen(queue, event.id(), text, seenNs, event.dueTimeNanos());
    if (text.equals(SET_UNKNOWN_STATE)) {
      tables.execute(
          "UPDATE `" + queue + "` SET state = " + PoisonTables.UNKNOWN_STATE + " WHERE id = ?",
          event.id());
    } else if (text.equals(SLOW)) {
      Thread.sleep(SLOW_WORK.toMillis());
    }
  }

  @Override
  public void close() {
    all.forEach(SluiceReceiver::close);
    all.clear();
    byQueue.clear();
  }
}
