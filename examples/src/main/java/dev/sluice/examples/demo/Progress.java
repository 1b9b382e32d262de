package dev.sluice.examples.demo;

import java.io.PrintWriter;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** Prints one live progress line a second, from the ledger, the tally and the receivers. */
final class Progress implements AutoCloseable {
  private final PrintWriter out;
  private final Ledger ledger;
  private final Tally tally;
  private final Consumers receivers;
  private final Supplier<String> extra;

  /** The whole line after the time, when a demo has its own figures (--groups); else null. */
  private final Supplier<String> line;

  private final long startNs = System.nanoTime();
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "demo-progress");
            t.setDaemon(true);
            return t;
          });

  Progress(PrintWriter out, Ledger ledger, Tally tally, Consumers receivers) {
    this(out, ledger, tally, receivers, () -> "");
  }

  /**
   * @param extra appended to each progress line (the shards' leaders, with several managers)
   */
  Progress(
      PrintWriter out, Ledger ledger, Tally tally, Consumers receivers, Supplier<String> extra) {
    this.extra = extra;
    this.line = null;
    this.out = out;
    this.ledger = ledger;
    this.tally = tally;
    this.receivers = receivers;
  }

  /**
   * @param line the progress line's figures, after its time (a demo of its own: --groups)
   */
  Progress(PrintWriter out, Supplier<String> line) {
    this.out = out;
    this.line = line;
    this.extra = () -> "";
    this.ledger = null;
    this.tally = null;
    this.receivers = null;
  }

  Progress start() {
    timer.scheduleAtFixedRate(this::print, 1, 1, TimeUnit.SECONDS);
    return this;
  }

  /** A line now, out of schedule: for events worth marking (the kill, the end). */
  void note(String what) {
    out.printf("[%2ds] %s%n", elapsedSeconds(), what);
    out.flush();
  }

  private void print() {
    if (line != null) {
      out.printf("[%2ds] %s%n", elapsedSeconds(), line.get());
      out.flush();
      return;
    }
    out.printf(
        "[%2ds] committed=%d rolled_back=%d cancelled=%d delivered=%d in_flight=%d retries=%d"
            + " receivers=%d%s%n",
        elapsedSeconds(),
        ledger.committedCount(),
        ledger.rolledBackCount(),
        ledger.cancelledCount(),
        tally.handledCount(),
        receivers.inFlight(),
        tally.redeliveries(),
        receivers.liveCount(),
        extra.get());
    out.flush();
  }

  private long elapsedSeconds() {
    return TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startNs);
  }

  /** Stops the timer and prints a last line, so the final state is always shown. */
  @Override
  public void close() {
    timer.shutdownNow();
    try {
      timer.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    print();
  }
}
