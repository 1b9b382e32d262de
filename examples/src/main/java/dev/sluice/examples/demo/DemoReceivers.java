package dev.sluice.examples.demo;

import dev.sluice.receiver.ReceivedEvent;
import dev.sluice.receiver.SluiceReceiver;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The consumer side: receivers of the demo queue whose handlers report to the {@link Tally}.
 *
 * <ul>
 *   <li>{@code receiver-flaky} throws on about 5% of handlings, so the manager must retry them.
 *   <li>{@code receiver-doomed} is killed with {@link SluiceReceiver#abort()} mid-run, as a crash
 *       would: what it held must be redelivered elsewhere, and nothing it held is lost.
 *   <li>{@code receiver-replacement} takes its place, under a new id, as a restarted pod would.
 * </ul>
 */
final class DemoReceivers implements AutoCloseable, Consumers {
  static final double FAILURE_RATE = 0.05;
  private static final int CONCURRENCY = 16;

  /** Simulated work: long enough that a receiver holds a few events when it is killed. */
  private static final int MIN_WORK_MS = 10;

  private static final int MAX_WORK_MS = 50;

  private final List<String> targets;
  private final Tally tally;
  private final List<SluiceReceiver> live = new CopyOnWriteArrayList<>();
  private SluiceReceiver doomed;
  private final java.util.function.UnaryOperator<dev.sluice.receiver.SluiceReceiverBuilder> secure;
  private final OrderChecker checker;

  /**
   * @param targets every manager's gRPC address: each receiver keeps a stream to each
   */
  DemoReceivers(List<String> targets, Tally tally) {
    this(targets, tally, b -> b, null);
  }

  /**
   * @param checker told of each handling's start and end, with the event's key and number (with
   *     --ordered); null when the queue is not ordered
   */
  DemoReceivers(List<String> targets, Tally tally, OrderChecker checker) {
    this(targets, tally, b -> b, checker);
  }

  /**
   * @param secure adds TLS and credentials to each receiver's builder
   */
  DemoReceivers(
      List<String> targets,
      Tally tally,
      java.util.function.UnaryOperator<dev.sluice.receiver.SluiceReceiverBuilder> secure) {
    this(targets, tally, secure, null);
  }

  private DemoReceivers(
      List<String> targets,
      Tally tally,
      java.util.function.UnaryOperator<dev.sluice.receiver.SluiceReceiverBuilder> secure,
      OrderChecker checker) {
    this.targets = List.copyOf(targets);
    this.tally = tally;
    this.secure = secure;
    this.checker = checker;
  }

  /** Whether every live receiver still has its streams (none was drained or cut). */
  boolean allConnected() {
    return live.stream().allMatch(r -> r.stats().streamsConnected() == targets.size());
  }

  /** Starts the flaky and the doomed receiver and waits until both are subscribed. */
  void start() {
    SluiceReceiver flaky = startReceiver("receiver-flaky", FAILURE_RATE);
    doomed = startReceiver("receiver-doomed", 0);
    awaitSubscribed(flaky);
    awaitSubscribed(doomed);
  }

  /** Kills the doomed receiver abruptly, then starts its replacement after {@code pause}. */
  void killAndReplace(Duration pause) throws InterruptedException {
    live.remove(doomed);
    doomed.abort();
    Thread.sleep(pause.toMillis());
    awaitSubscribed(startReceiver("receiver-replacement", 0));
  }

  @Override
  public int liveCount() {
    return live.size();
  }

  /** Events the live receivers hold: received and not yet answered. */
  @Override
  public int inFlight() {
    int n = 0;
    for (SluiceReceiver r : live) {
      n += r.stats().inFlight();
    }
    return n;
  }

  /**
   * Waits, up to the timeout, until every live receiver has a stream to every manager: after a
   * manager restart its streams come back within their reconnect backoff, and closing before that
   * would leave that manager without the receivers' shutdown notice.
   */
  void awaitAllStreams(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (live.stream().allMatch(r -> r.stats().streamsConnected() == targets.size())) {
        return;
      }
      Thread.sleep(50);
    }
  }

  /** Graceful close of every live receiver: in-flight handlings finish and are acked. */
  @Override
  public void close() {
    for (SluiceReceiver r : live) {
      r.close();
    }
    live.clear();
  }

  private SluiceReceiver startReceiver(String id, double failureRate) {
    SluiceReceiver r =
        secure
            .apply(SluiceReceiver.builder())
            .targets(targets)
            .queue(DemoDatabase.QUEUE)
            .receiverId(id)
            .concurrency(CONCURRENCY)
            .shutdownTimeout(Duration.ofSeconds(10))
            .handler(event -> handle(id, failureRate, event))
            .build();
    live.add(r);
    return r.start();
  }

  private void handle(String receiverId, double failureRate, ReceivedEvent event)
      throws InterruptedException {
    if (checker == null) {
      work(receiverId, failureRate, event);
      return;
    }
    String orderingKey = event.getString(OrderChecker.KEY_COLUMN);
    long seq = event.getLong(OrderChecker.SEQ_COLUMN);
    checker.started(
        orderingKey,
        seq,
        new EventKey(event.shard(), event.id()),
        receiverId,
        event.dueTimeNanos());
    boolean handled = false;
    try {
      work(receiverId, failureRate, event);
      handled = true;
    } finally {
      checker.finished(orderingKey, seq, handled);
    }
  }

  private void work(String receiverId, double failureRate, ReceivedEvent event)
      throws InterruptedException {
    Instant now = Instant.now();
    long seenNs = now.getEpochSecond() * 1_000_000_000L + now.getNano();
    EventKey key = new EventKey(event.shard(), event.id());
    tally.delivered(key, event.getLong("order_id"), event.dueTimeNanos(), seenNs, receiverId);
    ThreadLocalRandom random = ThreadLocalRandom.current();
    Thread.sleep(random.nextInt(MIN_WORK_MS, MAX_WORK_MS + 1));
    if (random.nextDouble() < failureRate) {
      tally.failed();
      throw new IllegalStateException("demo: simulated handler failure");
    }
    tally.handled(key);
  }

  private static void awaitSubscribed(SluiceReceiver r) {
    if (!r.awaitSubscribed(Duration.ofSeconds(10))) {
      throw new IllegalStateException(r.receiverId() + " could not subscribe within 10 s");
    }
  }
}
