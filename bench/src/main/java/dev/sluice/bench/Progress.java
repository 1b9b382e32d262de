package dev.sluice.bench;

import java.util.Locale;
import java.util.function.Supplier;

/**
 * Prints a workload's progress once a second on stdout, from a daemon thread, until closed. Lines
 * start with {@code [label]} so that the final figures line (without brackets) stands out.
 */
public final class Progress implements AutoCloseable {
  private final Thread thread;
  private volatile boolean running = true;

  private Progress(String label, Supplier<String> line) {
    long t0 = System.nanoTime();
    thread =
        new Thread(
            () -> {
              long next = t0 + 1_000_000_000L;
              while (running) {
                long wait = next - System.nanoTime();
                if (wait > 0) {
                  try {
                    Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                  } catch (InterruptedException e) {
                    return;
                  }
                }
                if (!running) {
                  return;
                }
                double s = (System.nanoTime() - t0) / 1e9;
                String text;
                try {
                  text = line.get();
                } catch (RuntimeException e) {
                  text = "(progress unavailable: " + e + ")";
                }
                System.out.printf(Locale.ROOT, "[%s] %5.1fs %s%n", label, s, text);
                System.out.flush();
                next += 1_000_000_000L;
              }
            },
            "bench-progress-" + label);
    thread.setDaemon(true);
    thread.start();
  }

  public static Progress start(String label, Supplier<String> line) {
    return new Progress(label, line);
  }

  /** A one-off line, such as a phase change. */
  public static void note(String text) {
    System.out.println("# " + text);
    System.out.flush();
  }

  @Override
  public void close() {
    running = false;
    thread.interrupt();
    try {
      thread.join(1000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
