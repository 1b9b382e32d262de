package dev.sluice.db;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * One queue option, defined once: its name in comments, kind, default and bounds (milliseconds for
 * durations, the number itself for counts and percents), how the record holds it, whether a
 * migration changing it is applied in place or restarts the queue, and its meaning as the README's
 * table says it ({@link QueueOptionsDoc}). Parsing, defaults, bounds checks, the restart list and
 * the docs table all come from {@link QueueOptions#OPTIONS}.
 *
 * @param inPlace true when a change is applied to the running queue (no restart, no release of
 *     events in flight); false when the queue restarts for it
 * @param doc the meaning, in Markdown
 * @param shownDefault the default said in words, or null for the default's value
 * @param boundsNote a rule between options added to the bounds, or null
 */
public record QueueOption(
    String name,
    Kind kind,
    Object dflt,
    long min,
    long max,
    Function<QueueOptions, Object> get,
    TextRule text,
    boolean inPlace,
    String doc,
    String shownDefault,
    String boundsNote) {

  /** What kind of value an option takes; each kind parses and prints one way. */
  public enum Kind {
    DURATION,
    COUNT,
    PERCENT,
    BOOL,
    CLASS_SHARES,
    BYTES,
    /**
     * A word of text, checked by the option's {@link TextRule}; an empty value ({@code
     * channel_target=}) is the default.
     */
    TEXT
  }

  /**
   * What a {@link Kind#TEXT} option accepts: a pattern (a comment's values never hold whitespace)
   * and how the docs and errors say it.
   */
  public record TextRule(Pattern pattern, String says) {}

  /** An option of any kind but {@link Kind#TEXT}, restart-only and not yet documented. */
  public QueueOption(
      String name, Kind kind, Object dflt, long min, long max, Function<QueueOptions, Object> get) {
    this(name, kind, dflt, min, max, get, null, false, "", null, null);
  }

  /** This option, taking effect in place when a migration changes it (no restart). */
  public QueueOption appliedInPlace() {
    return new QueueOption(
        name, kind, dflt, min, max, get, text, true, doc, shownDefault, boundsNote);
  }

  /** This option with its meaning, as the README's table says it. */
  public QueueOption doc(String meaning) {
    return new QueueOption(
        name, kind, dflt, min, max, get, text, inPlace, meaning, shownDefault, boundsNote);
  }

  /** This option with its default said in words (null: the default's value). */
  public QueueOption shownDefault(String says) {
    return new QueueOption(name, kind, dflt, min, max, get, text, inPlace, doc, says, boundsNote);
  }

  /** This option with a rule between options added to its bounds ("≥ `min_backoff`"). */
  public QueueOption boundsNote(String note) {
    return new QueueOption(name, kind, dflt, min, max, get, text, inPlace, doc, shownDefault, note);
  }

  /** The value as comments write it. */
  public String format(Object v) {
    return switch (kind) {
      case DURATION -> Durations.format((Duration) v);
      case PERCENT -> v + "%";
      case CLASS_SHARES -> QueueOptions.classSharesText(QueueOptions.castShares(v));
      case BYTES -> ByteSizes.format(((Number) v).longValue());
      default -> String.valueOf(v);
    };
  }

  /** The accepted range, as the README and error messages say it. */
  public String bounds() {
    return switch (kind) {
      case DURATION ->
          Durations.format(Duration.ofMillis(min))
              + " to "
              + Durations.format(Duration.ofMillis(max));
      case COUNT -> min + " to " + max;
      case PERCENT -> min + "% to " + max + "%";
      case BOOL -> "true or false";
      case CLASS_SHARES ->
          "none, or up to " + QueueOptions.MAX_CLASSES + " class:percent pairs, each 1% to 100%";
      case BYTES -> ByteSizes.format(min) + " to " + ByteSizes.format(max);
      case TEXT -> text.says();
    };
  }

  Object parse(String v, List<String> problems) {
    return switch (kind) {
      case DURATION -> duration(v, problems);
      case COUNT -> count(v, problems);
      case PERCENT -> percent(v, problems);
      case BOOL -> bool(v, problems);
      case CLASS_SHARES -> classShares(v, problems);
      case BYTES -> bytes(v, problems);
      case TEXT -> text(v, problems);
    };
  }

  /** A word matching the option's rule; empty is the default. */
  private Object text(String v, List<String> problems) {
    if (v.isEmpty()) {
      return dflt;
    }
    if (!text.pattern().matcher(v).matches()) {
      problems.add(name + "='" + v + "' must be " + text.says());
      return dflt;
    }
    return v;
  }

  /** A size such as {@code 512KiB} or {@code 1048576}, within the bounds. */
  private Object bytes(String v, List<String> problems) {
    long n;
    try {
      n = ByteSizes.parse(v);
    } catch (IllegalArgumentException e) {
      problems.add(name + ": " + e.getMessage());
      return dflt;
    }
    if (n < min || n > max) {
      problems.add(
          name
              + "="
              + v
              + " must be from "
              + ByteSizes.format(min)
              + " to "
              + ByteSizes.format(max));
      return dflt;
    }
    return n;
  }

  private Object duration(String v, List<String> problems) {
    Duration d;
    try {
      d = Durations.parse(v);
    } catch (Durations.TooLargeException e) {
      problems.add(name + "=" + v + " is too large: at most " + fmtMs(max));
      return dflt;
    } catch (IllegalArgumentException e) {
      problems.add(name + ": " + e.getMessage());
      return dflt;
    }
    if (d.compareTo(Duration.ofMillis(min)) < 0) {
      problems.add(name + "=" + v + " is below the minimum " + fmtMs(min));
      return dflt;
    }
    if (d.compareTo(Duration.ofMillis(max)) > 0) {
      problems.add(name + "=" + v + " is too large: at most " + fmtMs(max));
      return dflt;
    }
    return d;
  }

  private Object count(String v, List<String> problems) {
    if (!v.matches("-?[0-9]{1,30}")) {
      problems.add(name + "='" + v + "' is not a whole number");
      return dflt;
    }
    long n;
    try {
      n = Long.parseLong(v);
    } catch (NumberFormatException e) {
      n = v.startsWith("-") ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
    if (n < min) {
      problems.add(name + "=" + v + " must be at least " + min);
      return dflt;
    }
    if (n > max) {
      problems.add(name + "=" + v + " is too large: at most " + max);
      return dflt;
    }
    return (int) n;
  }

  private Object percent(String v, List<String> problems) {
    String n = v.endsWith("%") ? v.substring(0, v.length() - 1) : v;
    if (n.matches("[0-9]{1,3}")) {
      int p = Integer.parseInt(n);
      if (p >= min && p <= max) {
        return p;
      }
    }
    problems.add(name + "='" + v + "' must be a percentage from " + min + "% to " + max + "%");
    return dflt;
  }

  private Object bool(String v, List<String> problems) {
    if (v.equals("true") || v.equals("false")) {
      return Boolean.parseBoolean(v);
    }
    problems.add(name + "='" + v + "' must be true or false");
    return dflt;
  }

  /** {@code slow:25,batch:50}: class name, then its percent of a receiver's credits. */
  private Object classShares(String v, List<String> problems) {
    if (v.equals("none")) {
      return Map.of();
    }
    Map<String, Integer> out = new TreeMap<>();
    String[] parts = v.split(",", -1);
    if (parts.length > QueueOptions.MAX_CLASSES) {
      problems.add(
          name + " names " + parts.length + " classes: at most " + QueueOptions.MAX_CLASSES);
      return dflt;
    }
    for (String part : parts) {
      String[] kv = part.split(":", -1);
      if (kv.length != 2 || !kv[0].matches("[A-Za-z0-9_-]{1,32}")) {
        problems.add(name + ": '" + part + "' is not class:percent (e.g. slow:25)");
        continue;
      }
      String n = kv[1].endsWith("%") ? kv[1].substring(0, kv[1].length() - 1) : kv[1];
      int p = n.matches("[0-9]{1,3}") ? Integer.parseInt(n) : -1;
      if (p < 1 || p > 100) {
        problems.add(
            name + ": share of class '" + kv[0] + "' must be 1-100 percent, was '" + kv[1] + "'");
      } else {
        out.put(kv[0], p);
      }
    }
    return Map.copyOf(out);
  }

  private static String fmtMs(long ms) {
    return Durations.format(Duration.ofMillis(ms));
  }
}
