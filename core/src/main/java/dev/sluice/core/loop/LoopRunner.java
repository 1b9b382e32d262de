package dev.sluice.core.loop;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * How every loop of core runs and survives what it did not expect. {@link #run} repeats a loop's
 * pass while the loop should run; a pass that throws is counted and logged by {@link LoopFaults}
 * ({@code sluice_loop_errors_total{shard,queue,loop}}, the stack at most every {@link
 * StackThrottle#EVERY_NS}), and the loop backs off by {@link Backoff#DB_RETRY} (50 ms after the
 * first failure in a row, doubling to 5 s) before its next pass; a pass that goes through resets
 * the backoff. An interrupt ends the loop; a fault injected as fatal ({@link FaultHook#armFatal})
 * kills its thread (the thread's uncaught-exception handler, {@link LoopFaults#handler}, reports
 * it).
 *
 * <p>A loop that keeps its own pace counts and logs with {@link #once} and does not back off: a
 * scheduled task (discovery, the purger) runs again at its next turn, and the lease keeper must try
 * to renew every renew period whatever failed before. The dispatcher, whose thread must keep
 * serving its inbox, asks {@link #failed} for the pause and pauses firing only.
 *
 * <p>Threads: one runner per loop, used by that loop's thread only (the failure count is not
 * shared); what it reports to goes through the thread-safe {@link LoopFaults}.
 */
public final class LoopRunner {
  /** The longest sleep between two looks at whether the loop should still run. */
  private static final long SLICE_MS = 50;

  /** One pass of a loop. */
  @FunctionalInterface
  public interface Pass {
    void run() throws InterruptedException;
  }

  private final LoopFaults faults;
  private final String loop;
  private final Backoff backoff;

  /** Failures in a row; the loop's thread only. */
  private int failures;

  public LoopRunner(LoopFaults faults, String loop) {
    this(faults, loop, Backoff.DB_RETRY);
  }

  LoopRunner(LoopFaults faults, String loop, Backoff backoff) {
    this.faults = faults;
    this.loop = loop;
    this.backoff = backoff;
  }

  /**
   * Runs {@code pass} again and again while {@code running} says so, backing off after a failure;
   * returns when {@code running} turns false or the thread is interrupted.
   */
  public void run(BooleanSupplier running, Pass pass) {
    while (running.getAsBoolean()) {
      if (!once(pass)) {
        if (Thread.currentThread().isInterrupted()
            || !pause(TimeUnit.NANOSECONDS.toMillis(backoff.delayNs(failures)), running)) {
          return;
        }
      }
    }
  }

  /**
   * Runs one pass: true when it went through; false when it failed (counted and logged) or was
   * interrupted (the interrupt flag is then set again).
   */
  public boolean once(Pass pass) {
    try {
      pass.run();
      failures = 0;
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (Throwable t) { // an Error too: the loop must not die of it
      failed(t);
      return false;
    }
  }

  /**
   * Counts and logs a failure caught by the loop itself, and returns how long to back off (ns). A
   * fault injected as fatal is rethrown.
   */
  public long failed(Throwable t) {
    failures++;
    faults.caught(loop, t);
    return backoff.delayNs(failures);
  }

  /** A pass of a loop that runs itself ({@link #failed}) went through: the backoff starts over. */
  public void ok() {
    failures = 0;
  }

  /** Failures in a row so far. */
  int failures() {
    return failures;
  }

  /** Sleeps {@code ms}, ending early once the loop should stop; false when interrupted. */
  private static boolean pause(long ms, BooleanSupplier running) {
    for (long left = ms; left > 0 && running.getAsBoolean(); left -= SLICE_MS) {
      if (!LoopFaults.pause(Math.min(left, SLICE_MS))) {
        return false;
      }
    }
    return true;
  }
}
