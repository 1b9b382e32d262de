package dev.sluice.examples.demo;

import dev.sluice.receiver.ReceivedEvent;
import dev.sluice.receiver.SluiceReceiver;
import dev.sluice.receiver.Snooze;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The receivers of {@code sluice demo --long}: two of them, each running up to {@link #CONCURRENCY}
 * jobs at once; one is killed mid-run ({@link SluiceReceiver#abort()}) and replaced under a new id.
 *
 * <p>A job's handler first snoozes ({@link Snooze}: no attempt spent) as many times as its row asks
 * ({@code snoozes_wanted}, counted here per event id), as if it waited on something outside; then
 * it works {@code work_ms} (2-10 times the queue's ack_wait) and returns, which acks it. It
 * finishes before its deadline only because the SDK extends the deadline while it works ({@link
 * dev.sluice.receiver.SluiceReceiverBuilder#autoExtend(boolean)}); with that off, the event is
 * delivered again while the first handler still runs.
 *
 * <p>{@link #duplicatesWhileRunning()} counts exactly that: a handler that starts on an event while
 * a handler of a live receiver (one not killed) still runs it. Every handler thread registers its
 * run in {@link #running} when it starts and removes it when it ends; a kill removes the victim
 * from {@link #liveIds}, so that its abandoned runs no longer count.
 */
final class LongReceivers implements AutoCloseable, Consumers {
  static final int CONCURRENCY = 48;

  /** One handler's run of one event, on the receiver {@code receiverId}. */
  private record Run(String receiverId, long epoch) {}

  private final List<String> targets;
  private final boolean autoExtend;
  private final List<SluiceReceiver> live = new CopyOnWriteArrayList<>();
  private final Set<String> liveIds = ConcurrentHashMap.newKeySet();
  private final Map<Long, List<Run>> running = new ConcurrentHashMap<>();
  private final Map<Long, Integer> snoozed = new ConcurrentHashMap<>();
  private final Set<Long> completed = ConcurrentHashMap.newKeySet();
  private final Set<Long> duplicated = ConcurrentHashMap.newKeySet();
  private final AtomicLong deliveries = new AtomicLong();
  private final AtomicLong duplicatesWhileRunning = new AtomicLong();
  private final AtomicLong snoozes = new AtomicLong();
  private final AtomicLong extendedRuns = new AtomicLong();
  private final AtomicLong runningNow = new AtomicLong();
  private volatile SluiceReceiver doomed;

  LongReceivers(List<String> targets, boolean autoExtend) {
    this.targets = List.copyOf(targets);
    this.autoExtend = autoExtend;
  }

  /** Starts both receivers and waits until each is subscribed. */
  void start() {
    SluiceReceiver steady = startReceiver("long-steady");
    doomed = startReceiver("long-doomed");
    awaitSubscribed(List.of(steady, doomed));
  }

  /** Kills the doomed receiver abruptly (no more acks nor extensions), replaces it after pause. */
  void killAndReplace(Duration pause) throws InterruptedException {
    SluiceReceiver victim = doomed;
    liveIds.remove(victim.receiverId());
    live.remove(victim);
    victim.abort();
    Thread.sleep(pause.toMillis());
    doomed = startReceiver("long-replacement");
    awaitSubscribed(List.of(doomed));
  }

  private void awaitSubscribed(List<SluiceReceiver> rs) {
    for (SluiceReceiver r : rs) {
      if (!r.awaitSubscribed(Duration.ofSeconds(30))) {
        throw new IllegalStateException(r.receiverId() + " could not subscribe within 30 s");
      }
    }
  }

  private SluiceReceiver startReceiver(String id) {
    SluiceReceiver r =
        SluiceReceiver.builder()
            .targets(targets)
            .queue(LongRun.QUEUE)
            .receiverId(id)
            .concurrency(CONCURRENCY)
            .autoExtend(autoExtend)
            // ack_wait is only 2 s here: ask at a quarter of it, leaving 1.5 s for the answer.
            .autoExtendAt(0.25)
            .shutdownTimeout(Duration.ofSeconds(25))
            .handler(event -> handle(id, event))
            .build();
    liveIds.add(id);
    live.add(r);
    return r.start();
  }

  private void handle(String receiverId, ReceivedEvent event) throws InterruptedException {
    deliveries.incrementAndGet();
    long id = event.id();
    Run run = new Run(receiverId, event.epoch());
    begin(id, run);
    runningNow.incrementAndGet();
    try {
      if (snoozed.getOrDefault(id, 0) < event.getInt("snoozes_wanted")) {
        // Waits on "something outside" a little, then asks to be handed back later.
        Thread.sleep(ThreadLocalRandom.current().nextInt(100, 500));
        snoozed.merge(id, 1, Integer::sum);
        snoozes.incrementAndGet();
        throw new Snooze(
            Duration.ofMillis(ThreadLocalRandom.current().nextInt(1000, 4000)),
            "demo: waiting on the warehouse");
      }
      Instant firstDeadline = event.deadline();
      Thread.sleep(event.getInt("work_ms"));
      if (event.deadline().isAfter(firstDeadline)) {
        extendedRuns.incrementAndGet();
      }
      completed.add(id);
    } finally {
      runningNow.decrementAndGet();
      end(id, run);
    }
  }

  /** Registers a run; counts a duplicate when a live receiver's handler still runs this event. */
  private void begin(long id, Run run) {
    running.compute(
        id,
        (k, runs) -> {
          List<Run> now = runs == null ? new ArrayList<>() : new ArrayList<>(runs);
          if (now.stream().anyMatch(r -> liveIds.contains(r.receiverId()))) {
            duplicatesWhileRunning.incrementAndGet();
            duplicated.add(id);
          }
          now.add(run);
          return now;
        });
  }

  private void end(long id, Run run) {
    running.computeIfPresent(
        id,
        (k, runs) -> {
          List<Run> now = new ArrayList<>(runs);
          now.remove(run);
          return now.isEmpty() ? null : now;
        });
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

  long running() {
    return runningNow.get();
  }

  long deliveries() {
    return deliveries.get();
  }

  long duplicatesWhileRunning() {
    return duplicatesWhileRunning.get();
  }

  Set<Long> duplicated() {
    return duplicated;
  }

  long snoozes() {
    return snoozes.get();
  }

  long extendedRuns() {
    return extendedRuns.get();
  }

  Set<Long> completed() {
    return completed;
  }

  /** Stops every receiver at once: the handlers still running are abandoned, unacked. */
  void abort() {
    for (SluiceReceiver r : live) {
      r.abort();
    }
    live.clear();
  }

  @Override
  public void close() {
    for (SluiceReceiver r : live) {
      r.close();
    }
    live.clear();
  }
}
