package dev.sluice.conformance.receiver;

import dev.sluice.receiver.EventHandler;
import dev.sluice.receiver.RetryLater;
import dev.sluice.receiver.Snooze;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;

/**
 * What the handler does with each event ({@code SLUICE_MODE}): {@code ack}, {@code nack-first},
 * {@code snooze-first}, {@code slow:<ms>}, {@code slow-noextend:<ms>} or {@code hold}. Handlers run
 * on the SDK's handler threads; {@link #release} runs on the main thread when the process is asked
 * to stop.
 */
final class Mode {
  private final String name;
  private final long slowMs;
  private final boolean autoExtend;

  /**
   * Ids ({@code shard/id}) seen by nack-first and snooze-first: each is nacked (snoozed) the first
   * time only.
   */
  private final Set<String> seen = ConcurrentHashMap.newKeySet();

  /** Holds hold-mode handlers until the process stops. */
  private final CountDownLatch released = new CountDownLatch(1);

  private Mode(String name, long slowMs) {
    this(name, slowMs, true);
  }

  private Mode(String name, long slowMs, boolean autoExtend) {
    this.name = name;
    this.slowMs = slowMs;
    this.autoExtend = autoExtend;
  }

  /** False for {@code slow-noextend:<ms>}: the receiver does not extend deadlines by itself. */
  boolean autoExtend() {
    return autoExtend;
  }

  static Mode parse(String text) {
    String t = text.strip();
    if (t.equals("ack") || t.equals("nack-first") || t.equals("snooze-first") || t.equals("hold")) {
      return new Mode(t, 0);
    }
    if (t.startsWith("slow:") || t.startsWith("slow-noextend:")) {
      try {
        long ms = Long.parseLong(t.substring(t.indexOf(':') + 1));
        if (ms >= 0) {
          return new Mode("slow", ms, t.startsWith("slow:"));
        }
      } catch (NumberFormatException e) {
        // refused below
      }
    }
    throw new IllegalArgumentException(
        "SLUICE_MODE must be ack, nack-first, snooze-first, slow:<ms>, slow-noextend:<ms> or hold,"
            + " not '"
            + text
            + "'");
  }

  /** The handler of this mode: returns to ack, throws {@link RetryLater} to nack. */
  EventHandler handler() {
    return event -> {
      switch (name) {
        case "nack-first", "snooze-first" -> {
          if (seen.add(event.shard() + "/" + event.id())) {
            throw name.equals("snooze-first")
                ? new Snooze(Duration.ofMillis(100), "conformance")
                : new RetryLater(Duration.ofMillis(100), "conformance");
          }
        }
        case "slow" -> Thread.sleep(slowMs); // the handler's work, as the mode says
        case "hold" -> released.await();
        default -> {
          // ack
        }
      }
    };
  }

  /** Lets every held handler finish (and ack), now and from now on. */
  void release() {
    released.countDown();
  }
}
