package dev.sluice.manager.channel;

import dev.sluice.core.loop.Ticker;
import dev.sluice.core.loop.Waiter;
import java.util.concurrent.TimeUnit;

/**
 * The timeout thread of a channel publisher: runs the publisher's sweep of its deadlines every
 * {@link #PERIOD_NS} on the publisher's ticker, from its start until {@link #stop}. The sweep fails
 * the futures whose deadline passed: the bound on every future, whatever the broker does.
 *
 * <p>Not a core {@code LoopRunner}: its faults are counted per channel ({@link PublisherFaults},
 * loop {@value #LOOP}), not per shard and queue, and it keeps its own pace. A sweep that throws is
 * counted and logged, and the next one runs at its turn: backing off would push out the bound that
 * this thread is. The pause is measured on the ticker ({@link Waiter}), so a test that moves a fake
 * ticker decides when a sweep runs.
 *
 * <p>Threads: its own ({@code sluice-<kind>-timeout-<name>}, a daemon), which runs the sweep and
 * nothing else; {@link #start}, {@link #stop} and {@link #join} from any.
 */
final class TimeoutSweeper {
  /** The loop's name in {@link PublisherFaults}. */
  static final String LOOP = "timeout";

  /** Between two sweeps, on the ticker. */
  static final long PERIOD_NS = TimeUnit.MILLISECONDS.toNanos(50);

  private final Runnable sweep;
  private final PublisherFaults faults;
  private final Waiter waiter;
  private final Thread thread;
  private volatile boolean running = true;

  TimeoutSweeper(String threadName, Ticker ticker, PublisherFaults faults, Runnable sweep) {
    this.sweep = sweep;
    this.faults = faults;
    this.waiter = new Waiter(ticker);
    this.thread = new Thread(this::run, threadName);
    this.thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  /** No sweep starts after this; one under way finishes. */
  void stop() {
    running = false;
    waiter.wake();
  }

  /**
   * Waits up to {@code ms} for the thread to end (at once when called from the sweep itself: a
   * future's callback that closes the publisher).
   */
  void join(long ms) throws InterruptedException {
    if (Thread.currentThread() != thread) {
      thread.join(ms);
    }
  }

  private void run() {
    try {
      while (running) {
        waiter.await(PERIOD_NS);
        if (!running) {
          return;
        }
        try {
          sweep.run();
        } catch (RuntimeException | Error e) { // an Error too: the bound must not die of it
          faults.caught(LOOP, e);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // ends the thread
    }
  }
}
