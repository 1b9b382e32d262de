package dev.sluice.db;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * How each {@link QueueOption.Kind} reads a comment's value: each returns the value, or adds a
 * problem naming the option and what it accepts and returns null (the option's default is then
 * used, so that every problem of a comment is collected before it fails).
 */
final class OptionParsers {
  private OptionParsers() {}

  /** A word matching the option's rule; empty is the default. */
  static String text(QueueOption<String> o, String v, List<String> problems) {
    if (v.isEmpty()) {
      return o.dflt();
    }
    if (!o.text().pattern().matcher(v).matches()) {
      problems.add(o.name() + "='" + v + "' must be " + o.text().says());
      return null;
    }
    return v;
  }

  /** A size such as {@code 512KiB} or {@code 1048576}, within the bounds. */
  static Long bytes(QueueOption<Long> o, String v, List<String> problems) {
    long n;
    try {
      n = ByteSizes.parse(v);
    } catch (IllegalArgumentException e) {
      problems.add(o.name() + ": " + e.getMessage());
      return null;
    }
    if (n < o.min() || n > o.max()) {
      problems.add(
          o.name()
              + "="
              + v
              + " must be from "
              + ByteSizes.format(o.min())
              + " to "
              + ByteSizes.format(o.max()));
      return null;
    }
    return n;
  }

  static Duration duration(QueueOption<Duration> o, String v, List<String> problems) {
    Duration d;
    try {
      d = Durations.parse(v);
    } catch (Durations.TooLargeException e) {
      problems.add(o.name() + "=" + v + " is too large: at most " + fmtMs(o.max()));
      return null;
    } catch (IllegalArgumentException e) {
      problems.add(o.name() + ": " + e.getMessage());
      return null;
    }
    if (d.compareTo(Duration.ofMillis(o.min())) < 0) {
      problems.add(o.name() + "=" + v + " is below the minimum " + fmtMs(o.min()));
      return null;
    }
    if (d.compareTo(Duration.ofMillis(o.max())) > 0) {
      problems.add(o.name() + "=" + v + " is too large: at most " + fmtMs(o.max()));
      return null;
    }
    return d;
  }

  static Integer count(QueueOption<Integer> o, String v, List<String> problems) {
    if (!v.matches("-?[0-9]{1,30}")) {
      problems.add(o.name() + "='" + v + "' is not a whole number");
      return null;
    }
    long n;
    try {
      n = Long.parseLong(v);
    } catch (NumberFormatException e) {
      n = v.startsWith("-") ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
    if (n < o.min()) {
      problems.add(o.name() + "=" + v + " must be at least " + o.min());
      return null;
    }
    if (n > o.max()) {
      problems.add(o.name() + "=" + v + " is too large: at most " + o.max());
      return null;
    }
    return (int) n;
  }

  static Integer percent(QueueOption<Integer> o, String v, List<String> problems) {
    String n = v.endsWith("%") ? v.substring(0, v.length() - 1) : v;
    if (n.matches("[0-9]{1,3}")) {
      int p = Integer.parseInt(n);
      if (p >= o.min() && p <= o.max()) {
        return p;
      }
    }
    problems.add(
        o.name() + "='" + v + "' must be a percentage from " + o.min() + "% to " + o.max() + "%");
    return null;
  }

  static Boolean bool(QueueOption<Boolean> o, String v, List<String> problems) {
    if (v.equals("true") || v.equals("false")) {
      return Boolean.parseBoolean(v);
    }
    problems.add(o.name() + "='" + v + "' must be true or false");
    return null;
  }

  /** {@code slow:25,batch:50}: class name, then its percent of a receiver's credits. */
  static Map<String, Integer> classShares(
      QueueOption<Map<String, Integer>> o, String v, List<String> problems) {
    if (v.equals("none")) {
      return Map.of();
    }
    String name = o.name();
    Map<String, Integer> out = new TreeMap<>();
    String[] parts = v.split(",", -1);
    if (parts.length > QueueOptions.MAX_CLASSES) {
      problems.add(
          name + " names " + parts.length + " classes: at most " + QueueOptions.MAX_CLASSES);
      return null;
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

  /** Class shares as comments write them: {@code slow:25,batch:50}, or {@code none}. */
  static String classSharesText(Map<String, Integer> shares) {
    StringBuilder sb = new StringBuilder();
    new TreeMap<>(shares)
        .forEach((k, v) -> sb.append(sb.length() == 0 ? "" : ",").append(k).append(':').append(v));
    return sb.length() == 0 ? "none" : sb.toString();
  }

  private static String fmtMs(long ms) {
    return Durations.format(Duration.ofMillis(ms));
  }
}
