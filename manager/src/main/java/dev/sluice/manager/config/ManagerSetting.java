package dev.sluice.manager.config;

import dev.sluice.db.Durations;
import java.nio.file.Path;
import java.time.Duration;

/**
 * One scalar setting of the manager's configuration, defined once: its name in the YAML file, kind,
 * default, bounds and meaning. Its environment variable ({@link #env()}), its parsing and bounds
 * check, and its row of the README's table ({@link ManagerSettings#markdown()}) come from here. A
 * change takes effect when the manager restarts.
 *
 * @param dflt the default, or null when it is computed ({@code manager_id}) or depends on another
 *     setting ({@code http_port})
 * @param shownDefault the default said in words, or null for the default's value
 * @param min the least value: milliseconds for a duration, the number for a port
 * @param max the greatest value, as {@code min}; {@link Long#MAX_VALUE} for none
 * @param boundsNote a rule between settings added to the bounds, or null
 * @param doc the meaning, in Markdown
 */
public record ManagerSetting<T>(
    String name,
    Kind kind,
    T dflt,
    String shownDefault,
    long min,
    long max,
    String boundsNote,
    String doc) {

  /** What kind of value a setting takes; each kind parses and checks one way. */
  public enum Kind {
    TEXT,
    PORT,
    DURATION,
    PATH
  }

  /** The environment variable that overrides the file: {@code SLUICE_} and the name. */
  public String env() {
    return EnvOverrides.variable(name);
  }

  /**
   * The value of {@code text}, as the file or the environment writes it.
   *
   * @throws IllegalArgumentException naming the setting
   */
  @SuppressWarnings("unchecked")
  T parse(String text) {
    return (T)
        switch (kind) {
          case TEXT -> text;
          case PORT -> {
            try {
              yield Integer.parseInt(text.trim());
            } catch (NumberFormatException e) {
              throw new IllegalArgumentException(
                  name + " must be a whole number, was '" + text + "'");
            }
          }
          case DURATION -> {
            try {
              yield Durations.parse(text);
            } catch (IllegalArgumentException e) {
              throw new IllegalArgumentException(name + ": " + e.getMessage(), e);
            }
          }
          case PATH -> {
            if (text == null || text.isBlank()) {
              throw new IllegalArgumentException(name + " must name a directory");
            }
            yield Path.of(text);
          }
        };
  }

  /**
   * Checks a value against the bounds.
   *
   * @throws IllegalArgumentException naming the setting, its bounds and the value
   */
  void check(Object v) {
    boolean ok =
        switch (kind) {
          case TEXT -> true;
          case PATH -> v != null;
          case PORT -> v != null && (Integer) v >= min && (Integer) v <= max;
          case DURATION ->
              v != null && ((Duration) v).toMillis() >= min && ((Duration) v).toMillis() <= max;
        };
    if (!ok) {
      throw new IllegalArgumentException(
          name
              + " must be "
              + bounds()
              + ", was "
              + (v instanceof Duration d ? Durations.format(d) : v));
    }
  }

  /** The accepted values, as the README and errors say them ("at least 100ms", "0-65535"). */
  public String bounds() {
    return switch (kind) {
      case TEXT -> "any text";
      case PATH -> "a directory";
      case PORT -> min + "-" + max;
      case DURATION ->
          max == Long.MAX_VALUE
              ? (min == 0 ? "0 or more" : "at least " + ms(min))
              : "from " + ms(min) + " to " + ms(max);
    };
  }

  /** The default as the README's table shows it. */
  public String shownDefaultText() {
    if (shownDefault != null) {
      return shownDefault;
    }
    Object d = dflt instanceof Duration dur ? Durations.format(dur) : dflt;
    return "`" + d + "`";
  }

  private static String ms(long ms) {
    return Durations.format(Duration.ofMillis(ms));
  }
}
