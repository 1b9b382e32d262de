package dev.sluice.db;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses and prints durations the way queue comments and config files write them. Parsing never
 * overflows: a value past what a {@link Duration} in nanoseconds can hold is refused with {@link
 * TooLargeException}, and printing works for every duration.
 */
public final class Durations {
  private static final Pattern FORM = Pattern.compile("([0-9]+)(ms|s|m|h|d)");

  /** Nanoseconds fit a long up to about 292 years; nothing Sluice times comes near it. */
  private static final long MAX_MS = Long.MAX_VALUE / 1_000_000;

  private Durations() {}

  /** A well-formed duration too large to be held in nanoseconds. */
  public static final class TooLargeException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    TooLargeException(String message) {
      super(message);
    }
  }

  /**
   * Parses {@code 250ms}, {@code 30s}, {@code 5m}, {@code 2h} or {@code 7d}.
   *
   * @throws IllegalArgumentException naming the accepted units when the text is not one of these
   *     ({@link TooLargeException} when it is, but too large)
   */
  public static Duration parse(String text) {
    Matcher m = FORM.matcher(text == null ? "" : text.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "'"
              + text
              + "' is not a duration: write a whole number and a unit ms, s, m, h or d (e.g. 30s)");
    }
    long unitMs =
        switch (m.group(2)) {
          case "ms" -> 1;
          case "s" -> 1_000;
          case "m" -> 60_000;
          case "h" -> 3_600_000;
          default -> 86_400_000;
        };
    long ms;
    try {
      ms = Math.multiplyExact(Long.parseLong(m.group(1)), unitMs);
    } catch (ArithmeticException | NumberFormatException e) {
      ms = Long.MAX_VALUE;
    }
    if (ms > MAX_MS) {
      throw new TooLargeException("'" + text + "' is too large a duration");
    }
    return Duration.ofMillis(ms);
  }

  /** The shortest exact form: 1500ms, 30s, 5m, 2h, 7d (whole milliseconds, for any duration). */
  public static String format(Duration d) {
    long ms;
    try {
      ms = d.toMillis();
    } catch (ArithmeticException e) {
      return d.getSeconds() + "s";
    }
    if (ms % 86_400_000 == 0 && ms > 0) {
      return ms / 86_400_000 + "d";
    }
    if (ms % 3_600_000 == 0 && ms > 0) {
      return ms / 3_600_000 + "h";
    }
    if (ms % 60_000 == 0 && ms > 0) {
      return ms / 60_000 + "m";
    }
    if (ms % 1000 == 0 && ms > 0) {
      return ms / 1000 + "s";
    }
    return ms + "ms";
  }
}
