package dev.sluice.core.queue.context;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * The meters of one queue on one shard, named as Prometheus users expect: {@code sluice_*}, tagged
 * {@code shard} and {@code queue}; counters get {@code _total}, timers {@code _seconds}.
 *
 * <p>Gauges read live figures through suppliers and are removed when the queue stops, so that a
 * restarted queue does not report through a stopped one.
 */
public final class QueueMetrics {
  public final Counter dispatched;
  public final Counter acked;
  public final Counter nacked;
  public final Counter snoozed;
  public final Counter retried;
  public final Counter dead;
  public final Counter timeouts;
  public final Counter released;
  public final Counter purged;
  public final Counter dbErrors;
  public final Counter staleAcks;
  public final Counter polledRows;
  public final Counter casMisses;

  /**
   * Rows read whose actor path was deeper than the queue's actor_max_depth (each read counts: a row
   * may be read more than once before it fires).
   */
  public final Counter actorTooDeep;

  /** Events made dead unsent because they were larger than max_event_bytes. */
  public final Counter tooLarge;

  /** Events a tenant gave up from the window so that tenants waiting on disk could come in. */
  public final Counter windowTrimmed;

  /** Ordered queues: events held behind an earlier event of their key, and released again. */
  public final Counter keyHeld;

  public final Counter keyReleased;

  /**
   * A fair queue's poller switched between one poll for all tenants and per-tenant rounds (either
   * way).
   */
  public final Counter pollModeSwitches;

  /** From the time an event became due to the time it was fired. */
  public final Timer dueToDispatch;

  /** A due row's wait until it was read into the window: the first stage of due → dispatch. */
  public final Timer dueToWindow;

  /** From fire to the ack's arrival at the manager. */
  public final Timer dispatchToAck;

  public final Timer pollDuration;

  /**
   * Events per fire UPDATE group and per ack/release write: each write is one commit, so these say
   * how much of the database's commit load batching saves (count = writes, sum = events).
   */
  public final DistributionSummary fireBatch;

  public final DistributionSummary ackBatch;

  private final MeterRegistry registry;
  private final Tags tags;
  private final java.util.concurrent.ConcurrentHashMap<String, Counter> badRows =
      new java.util.concurrent.ConcurrentHashMap<>();
  private final List<Meter> gauges = new ArrayList<>();

  public QueueMetrics(MeterRegistry r, String shard, String queue) {
    this.registry = r;
    this.tags = Tags.of("shard", shard, "queue", queue);
    Tags t = tags;
    dispatched = r.counter("sluice.events.dispatched", t);
    acked = r.counter("sluice.events.acked", t);
    nacked = r.counter("sluice.events.nacked", t);
    snoozed = r.counter("sluice.events.snoozed", t);
    retried = r.counter("sluice.events.retried", t);
    dead = r.counter("sluice.events.dead", t);
    timeouts = r.counter("sluice.events.ack.timeouts", t);
    released = r.counter("sluice.events.released", t);
    purged = r.counter("sluice.events.purged", t);
    dbErrors = r.counter("sluice.db.errors", t);
    staleAcks = r.counter("sluice.acks.stale", t);
    polledRows = r.counter("sluice.poll.rows", t);
    casMisses = r.counter("sluice.fire.cas.misses", t);
    windowTrimmed = r.counter("sluice.window.trimmed", t);
    keyHeld = r.counter("sluice.ordering.held", t);
    keyReleased = r.counter("sluice.ordering.released", t);
    pollModeSwitches =
        Counter.builder("sluice.poll.mode.switches")
            .description("switches between one poll for all tenants and per-tenant rounds")
            .tags(t)
            .register(r);
    actorTooDeep = r.counter("sluice.actor.path.too.deep", t);
    tooLarge = r.counter("sluice.events.too.large", t);
    dueToDispatch = latency("sluice.due.to.dispatch", "due time to fire", r);
    dueToWindow =
        latency(
            "sluice.due.to.window",
            "due time (a row due at once: its insert) to its read into the window",
            r);
    dispatchToAck = latency("sluice.dispatch.to.ack", "fire to ack", r);
    pollDuration = latency("sluice.poll.duration", "one poll query", r);
    fireBatch = batch("sluice.fire.batch.events", "events fired by one UPDATE group", r);
    ackBatch = batch("sluice.ack.batch.events", "acks and releases written together", r);
  }

  private Timer latency(String name, String what, MeterRegistry r) {
    return Timer.builder(name)
        .description(what)
        .tags(tags)
        .publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofMillis(1))
        .maximumExpectedValue(Duration.ofSeconds(60))
        .register(r);
  }

  private DistributionSummary batch(String name, String what, MeterRegistry r) {
    return DistributionSummary.builder(name).description(what).tags(tags).register(r);
  }

  /**
   * Rows skipped or made dead because Sluice cannot serve them, by reason ({@code
   * sluice_bad_rows_total{reason}}: unknown_state, unreadable_row, epoch_at_max).
   */
  Counter badRows(String reason) {
    return badRows.computeIfAbsent(
        reason,
        k ->
            Counter.builder("sluice.bad.rows")
                .description("rows skipped or made dead because Sluice cannot serve them")
                .tags(tags.and("reason", k))
                .register(registry));
  }

  /** Registers a gauge for this queue that lives as long as the queue runs. */
  public void gauge(String name, String description, Supplier<Number> value) {
    gauges.add(
        Gauge.builder(name, value)
            .description(description)
            .tags(tags)
            .strongReference(true)
            .register(registry));
  }

  /** What the function counters read: held here, as the registry holds them only weakly. */
  private final List<java.util.function.LongSupplier> counted =
      new java.util.concurrent.CopyOnWriteArrayList<>();

  /** Registers a counter read from {@code value}, for as long as the queue runs (like a gauge). */
  public void functionCounter(
      String name, String description, java.util.function.LongSupplier value) {
    counted.add(value);
    gauges.add(
        io.micrometer.core.instrument.FunctionCounter.builder(
                name, value, v -> (double) v.getAsLong())
            .description(description)
            .tags(tags)
            .register(registry));
  }

  public void removeGauges() {
    for (Meter m : gauges) {
      registry.remove(m);
    }
    gauges.clear();
  }

  MeterRegistry registry() {
    return registry;
  }

  public Counter dispatched() {
    return dispatched;
  }

  public Timer dueToDispatch() {
    return dueToDispatch;
  }

  public Timer dispatchToAck() {
    return dispatchToAck;
  }
}
