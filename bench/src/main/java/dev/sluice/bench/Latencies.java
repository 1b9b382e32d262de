package dev.sluice.bench;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Latencies in nanoseconds, recorded from many threads (HdrHistogram's {@link Recorder}), with a
 * count of negative values ("early") kept apart: a histogram cannot hold them.
 */
public final class Latencies {
  private final Recorder recorder = new Recorder(3);
  private final Histogram total = new Histogram(3);
  private final AtomicLong early = new AtomicLong();
  private final AtomicLong count = new AtomicLong();
  private volatile boolean recording = true;

  /** Wall clock in ns since the epoch (microsecond resolution on Linux). */
  public static long wallNanos() {
    Instant i = Instant.now();
    return i.getEpochSecond() * 1_000_000_000L + i.getNano();
  }

  /** Stops or resumes recording (warm-up is not recorded); counting goes on. */
  public void recording(boolean on) {
    recording = on;
  }

  /** Records {@code nowNs - dueNs}. */
  public void record(long dueNs, long nowNs) {
    count.incrementAndGet();
    if (!recording) {
      return;
    }
    long d = nowNs - dueNs;
    if (d < 0) {
      early.incrementAndGet();
      d = 0;
    }
    recorder.recordValue(d);
  }

  public long count() {
    return count.get();
  }

  public long early() {
    return early.get();
  }

  /** Everything recorded so far (accumulated; call from one thread). */
  public synchronized Histogram snapshot() {
    total.add(recorder.getIntervalHistogram());
    return total.copy();
  }

  /** The recordings since the last call, for progress lines (then added to the total). */
  public synchronized Histogram interval() {
    Histogram h = recorder.getIntervalHistogram();
    total.add(h);
    return h;
  }

  public static double ms(Histogram h, double percentile) {
    return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(percentile) / 1e6;
  }
}
