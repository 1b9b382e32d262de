package dev.sluice.core.outlet;

import dev.sluice.db.store.EventRef;

/**
 * An outlet could not deliver or handle an event: it goes back to pending after the queue's backoff
 * (or {@code retryAfterNs} when that is positive), or dead once its attempts are used up.
 *
 * <p>The reason comes from outside (a receiver, a broker), so it is made safe here, once, before it
 * reaches a log or the dead reason: cut to {@link #MAX_REASON_CHARS} characters, and each control
 * character (a newline, say) written as an escape ({@code \n}, {@code \r}, {@code \t}, {@code
 * \u001b}), so that a reason cannot forge log lines.
 *
 * @param reason why, as the destination said it (recorded as the dead reason on the last attempt)
 * @param snooze the handler snoozed the event: back to pending after {@code retryAfterNs} without
 *     spending an attempt, where the table counts snoozes (else it is this nack)
 */
public record Nack(EventRef ref, long retryAfterNs, String reason, boolean snooze) {
  /** The longest reason kept, in characters; longer ones end with "...". */
  public static final int MAX_REASON_CHARS = 1024;

  public Nack {
    reason = clean(reason);
  }

  public Nack(EventRef ref, long retryAfterNs, String reason) {
    this(ref, retryAfterNs, reason, false);
  }

  /** How it reads in logs and dead reasons: "nack", "nack: why", "snooze: why". */
  public String why() {
    String kind = snooze ? "snooze" : "nack";
    return reason.isEmpty() ? kind : kind + ": " + reason;
  }

  /** {@code reason} bounded and with its control characters escaped; "" for null. */
  static String clean(String reason) {
    if (reason == null) {
      return "";
    }
    StringBuilder sb = new StringBuilder(Math.min(reason.length(), MAX_REASON_CHARS + 8));
    int i = 0;
    for (; i < reason.length() && sb.length() < MAX_REASON_CHARS; i++) {
      char c = reason.charAt(i);
      switch (c) {
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    if (i < reason.length() || sb.length() > MAX_REASON_CHARS) {
      sb.setLength(MAX_REASON_CHARS - 3);
      sb.append("...");
    }
    return sb.toString();
  }
}
