package dev.sluice.core.loop;

import java.util.function.BooleanSupplier;

/**
 * A loop on a thread of its own, run through a {@link LoopRunner}: how a shard's workers of one
 * leadership term run (recurring events, event groups, the binlog follower). A failed pass is
 * counted and logged by the shard's {@link LoopFaults} under the loop's name and backed off by
 * {@link Backoff#DB_RETRY}; the loop paces itself on a {@link Waiter} over the shard's {@link
 * Ticker} ({@link #pause}), which {@link #stop} wakes. What ended the thread, when it was not a
 * stop (a fault injected as fatal, an {@code Error} thrown while another was being reported), is
 * kept for the shard to see ({@link #died}), and counted and logged through {@link
 * LoopFaults#handler}.
 *
 * <p>Threads: {@link #start}, {@link #stop}, {@link #interrupt}, {@link #join}, {@link #running}
 * and {@link #died} from any thread, with no lock and no database call; {@link #run} and {@link
 * #pause} on the loop's own thread only.
 */
public final class LoopThread {
  private final String name;
  private final String loop;
  private final LoopFaults faults;
  private final Waiter waiter;

  private volatile boolean running = true;
  private volatile Throwable died;
  private volatile Thread thread;

  /**
   * @param name the thread's name, {@code sluice-<shard>-<loop>}
   * @param loop the loop's name in {@code sluice_loop_errors_total{loop}}
   */
  public LoopThread(String name, String loop, LoopFaults faults, Ticker ticker) {
    this.name = name;
    this.loop = loop;
    this.faults = faults;
    this.waiter = new Waiter(ticker);
  }

  /** Starts the thread on {@code body}, which calls {@link #run}. Once. */
  public void start(Runnable body) {
    Thread t = new Thread(body, name);
    t.setDaemon(true);
    t.setUncaughtExceptionHandler(
        (th, e) -> {
          running = false;
          died = e;
          faults.handler(loop).uncaughtException(th, e);
        });
    thread = t;
    t.start();
  }

  /**
   * On the loop's thread: runs {@code pass} again and again while the loop is not stopped and
   * {@code go} holds (see {@link LoopRunner#run}); returns when either turns false or the thread is
   * interrupted.
   */
  public void run(BooleanSupplier go, LoopRunner.Pass pass) {
    new LoopRunner(faults, loop).run(() -> running && go.getAsBoolean(), pass);
    running = false;
  }

  /** On the loop's thread: waits {@code nanos}, or less once the loop is stopped. */
  public void pause(long nanos) throws InterruptedException {
    if (running && nanos > 0) {
      waiter.await(nanos);
    }
  }

  /** Any thread, no lock: the loop ends after its current pass (its pause ends at once). */
  public void stop() {
    running = false;
    waiter.wake();
  }

  /** Any thread: interrupts the loop's thread (a blocking call that {@link #stop} cannot end). */
  public void interrupt() {
    Thread t = thread;
    if (t != null) {
      t.interrupt();
    }
  }

  /** Whether the loop still runs: not stopped, not ended, not dead. */
  public boolean running() {
    return running;
  }

  /** What ended the thread when it was not a stop; null while it runs or once it ended well. */
  public Throwable died() {
    return died;
  }

  /** Waits at most {@code ms} for the thread to end; true when it has (or never started). */
  public boolean join(long ms) {
    Thread t = thread;
    if (t == null || t == Thread.currentThread()) {
      return t == null;
    }
    try {
      t.join(Math.max(1, ms));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return !t.isAlive();
  }
}
