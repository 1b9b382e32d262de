package dev.sluice.core.loop;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How the worker loops of one queue (or a shard's own loops: {@link #ofShard}) survive what they
 * did not expect. Each loop catches {@code Throwable} at its top and hands it to {@link #caught}:
 * counted in {@code sluice_loop_errors_total{shard,queue,loop}}, logged (the stack at most every
 * {@link StackThrottle#EVERY_NS} per loop), and, for an {@code Error}, reported to the {@link
 * Listener} (the shard evicts its pooled connections: a read that died half-way may have left its
 * connection mid-result). The loop then backs off and goes on.
 *
 * <p>A worker thread that dies anyway reaches {@link #handler} through its uncaught-exception
 * handler, and the listener gives the shard up (see {@code ShardManager}). A shard's own loops
 * ({@link #ofShard}) have no listener: the lease keeper asks the term's workers whether one of
 * their threads died ({@code TermWorkers.fault}).
 *
 * <p>Thread-safe: any worker thread calls in; the listener is set once before the threads start.
 */
public final class LoopFaults {
  private static final Logger log = LoggerFactory.getLogger(LoopFaults.class);

  /** What the shard does about a queue's faults. Called on the failing worker's thread. */
  public interface Listener {
    /** A loop caught an {@code Error} and goes on. */
    void errorCaught(String queue, String loop, Throwable t);

    /** A worker thread of the queue died: nothing serves that loop any more. */
    void workerDied(String queue, String thread, Throwable t);
  }

  private static final Listener NONE =
      new Listener() {
        @Override
        public void errorCaught(String queue, String loop, Throwable t) {}

        @Override
        public void workerDied(String queue, String thread, Throwable t) {}
      };

  private final MeterRegistry registry;
  private final String shard;
  private final String queue;
  private final Map<String, Counter> counters = new ConcurrentHashMap<>();
  private final StackThrottle stacks;
  private volatile Listener listener = NONE;

  public LoopFaults(MeterRegistry registry, String shard, String queue, Ticker ticker) {
    this.registry = registry;
    this.shard = shard;
    this.queue = queue;
    this.stacks = new StackThrottle(ticker);
  }

  /**
   * The faults of a shard's own loops (the lease keeper, discovery): counted with an empty {@code
   * queue} tag.
   */
  public static LoopFaults ofShard(MeterRegistry registry, String shard, Ticker ticker) {
    return new LoopFaults(registry, shard, "", ticker);
  }

  public void listen(Listener l) {
    this.listener = l;
  }

  /** The error counter of one loop. */
  Counter counter(String loop) {
    return counters.computeIfAbsent(
        loop,
        l ->
            Counter.builder("sluice.loop.errors")
                .description("unexpected errors a worker loop caught and survived")
                .tags("shard", shard, "queue", queue, "loop", l)
                .register(registry));
  }

  /**
   * Counts and logs what a loop caught; rethrows only a fault injected as fatal ({@link
   * FaultHook#armFatal}).
   */
  public void caught(String loop, Throwable t) {
    counter(loop).increment();
    if (stacks.stackDue(loop)) {
      log.error(
          "{}: the {} loop failed, continuing after a pause: {}", where(), loop, t.toString(), t);
    } else {
      log.warn("{}: the {} loop failed again, continuing: {}", where(), loop, t.toString());
    }
    if (!(t instanceof RuntimeException)) {
      try {
        listener.errorCaught(queue, loop, t);
      } catch (RuntimeException e) {
        log.warn("{}: fault listener failed: {}", where(), e.toString());
      }
    }
    if (t instanceof FaultHook.InjectedFault f && f.fatal()) {
      throw f;
    }
  }

  /**
   * Counts a failure the loop dealt with and logged itself, and goes on without a pause: one item
   * of a pass (a schedule whose step failed, a binlog event that could not be used) whose fault
   * concerns that item alone, so that the rest of the pass is not held up by it.
   */
  public void handled(String loop) {
    counter(loop).increment();
  }

  /** "queue X on shard Y", or "shard Y" for the shard's own loops. */
  private String where() {
    return queue.isEmpty() ? "shard " + shard : "queue " + queue + " on shard " + shard;
  }

  /** The uncaught-exception handler of every worker thread of the queue (or of the shard). */
  public Thread.UncaughtExceptionHandler handler(String loop) {
    return (thread, t) -> {
      counter(loop).increment();
      log.error("{}: worker thread {} died: {}", where(), thread.getName(), t.toString(), t);
      listener.workerDied(queue, thread.getName(), t);
    };
  }

  /** Sleeps a loop's pause after an error; false when interrupted (the loop should end). */
  static boolean pause(long ms) {
    try {
      Thread.sleep(ms);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
