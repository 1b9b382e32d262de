package dev.sluice.db;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses and prints durations the way queue comments and config files write them. */
public final class Durations {
  private static final Pattern FORM = Pattern.compile("(\\d+)(ms|s|m|h|d)");

  private Durations() {}

  /**
   * Parses {@code 250ms}, {@code 30s}, {@code 5m}, {@code 2h} or {@code 7d}.
   *
   * @throws IllegalArgumentException naming the accepted units when the text is not one of these
   */
  public static Duration parse(String text) {
    Matcher m = FORM.matcher(text == null ? "" : text.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "'"
              + text
              + "' is not a duration: write a whole number and a unit ms, s, m, h or d (e.g. 30s)");
    }
    long n;
    try {
      n = Long.parseLong(m.group(1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("'" + text + "' is too large a duration");
    }
    return switch (m.group(2)) {
      case "ms" -> Duration.ofMillis(n);
      case "s" -> Duration.ofSeconds(n);
      case "m" -> Duration.ofMinutes(n);
      case "h" -> Duration.ofHours(n);
      default -> Duration.ofDays(n);
    };
  }

  /** The shortest exact form: 1500ms, 30s, 5m, 2h, 7d. */
  public static String format(Duration d) {
    long ms = d.toMillis();
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
