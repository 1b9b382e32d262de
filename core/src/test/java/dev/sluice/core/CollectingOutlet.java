package dev.sluice.core;

import static java.util.concurrent.TimeUnit.MILLISECONDS;

import dev.sluice.core.outlet.Delivery;
import dev.sluice.core.outlet.Outlet;
import dev.sluice.core.outlet.Settled;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The tests' outlet: it keeps what it is given, in arrival order, and what was settled, and holds
 * at most {@code max} events at a time (a reservation beyond it is refused, as a receiver with no
 * credit would), counting them per work class as a receiver's stream does. Each instance is a
 * receiver of its own (its own id and stream).
 */
public final class CollectingOutlet implements Outlet {
  private static final AtomicInteger instances = new AtomicInteger();

  private final int n = instances.incrementAndGet();
  private final int max;

  /** What was delivered and not yet taken by the test. */
  public final BlockingQueue<Delivery> got = new LinkedBlockingQueue<>();

  /** Everything delivered, in arrival order, whether or not the test took it from {@link #got}. */
  public final List<Delivery> all = new CopyOnWriteArrayList<>();

  /** What the engine reported settled, in order. */
  public final List<Settled> settled = new CopyOnWriteArrayList<>();

  /** Reservations held now (reserved and not yet given back). */
  public final AtomicInteger inFlight = new AtomicInteger();

  /** Reservations held now per work class, as a receiver's stream counts them. */
  private final Map<String, AtomicInteger> classInFlight = new ConcurrentHashMap<>();

  public CollectingOutlet(int max) {
    this.max = max;
  }

  @Override
  public String id() {
    return "collector-" + n;
  }

  @Override
  public long streamId() {
    return 1000 + n;
  }

  @Override
  public int maxInFlight() {
    return max;
  }

  @Override
  public int free() {
    return Math.max(0, max - inFlight.get());
  }

  @Override
  public boolean tryReserve(String workClass) {
    if (inFlight.incrementAndGet() <= max) {
      classInFlight.computeIfAbsent(workClass, k -> new AtomicInteger()).incrementAndGet();
      return true;
    }
    inFlight.decrementAndGet();
    return false;
  }

  @Override
  public void unreserve(String workClass) {
    inFlight.decrementAndGet();
    AtomicInteger c = classInFlight.get(workClass);
    if (c != null) {
      c.decrementAndGet();
    }
  }

  @Override
  public int classInFlight(String workClass) {
    AtomicInteger c = classInFlight.get(workClass);
    return c == null ? 0 : c.get();
  }

  @Override
  public void deliver(String shard, List<Delivery> batch) {
    all.addAll(batch);
    got.addAll(batch);
  }

  @Override
  public void settled(String shard, List<Settled> results) {
    settled.addAll(results);
  }

  /** The next delivery, or null after {@code ms}. */
  public Delivery next(long ms) throws InterruptedException {
    return got.poll(ms, MILLISECONDS);
  }

  /** The next {@code n} deliveries, each within {@code ms} of the one before (fewer if not). */
  public List<Delivery> take(int n, long ms) throws InterruptedException {
    List<Delivery> out = new ArrayList<>();
    Delivery d;
    while (out.size() < n && (d = next(ms)) != null) {
      out.add(d);
    }
    return out;
  }

  /** The deliveries that arrive within {@code ms}. */
  public List<Delivery> within(long ms) throws InterruptedException {
    List<Delivery> out = new ArrayList<>();
    long end = System.nanoTime() + MILLISECONDS.toNanos(ms);
    Delivery d;
    while ((d = got.poll(Math.max(1, end - System.nanoTime()), TimeUnit.NANOSECONDS)) != null) {
      out.add(d);
    }
    return out;
  }
}
