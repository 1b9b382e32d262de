package dev.sluice.db;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A queue's options, read from its table comment: {@code sluice_queue key=value ...}.
 *
 * <p>Every option has a safe default ({@code DEFAULT_*}); a malformed comment is rejected as a
 * whole with a message naming the table, the option and what is accepted, so that a typo never
 * silently runs a queue with a default the DBA did not mean.
 */
public record QueueOptions(
    Duration ackWait,
    Duration minBackoff,
    Duration maxBackoff,
    int maxAttempts,
    Duration purgeAfter,
    int cacheSize,
    Duration pollInterval,
    int maxQps,
    int maxConcurrency,
    int maxReceiversPerTenant) {

  /** The first word of every queue table's comment. */
  public static final String MARKER = "sluice_queue";

  public static final Duration DEFAULT_ACK_WAIT = Duration.ofSeconds(30);
  public static final Duration DEFAULT_MIN_BACKOFF = Duration.ofSeconds(1);
  public static final Duration DEFAULT_MAX_BACKOFF = Duration.ofMinutes(5);
  public static final int DEFAULT_MAX_ATTEMPTS = 20;
  public static final Duration DEFAULT_PURGE_AFTER = Duration.ofDays(1);
  public static final int DEFAULT_CACHE_SIZE = 10_000;
  public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofMillis(100);
  public static final int DEFAULT_MAX_QPS = 0;
  public static final int DEFAULT_MAX_CONCURRENCY = 0;
  public static final int DEFAULT_MAX_RECEIVERS_PER_TENANT = 0;

  /** Option names, as written in comments, in the order the docs list them. */
  public static final List<String> NAMES =
      List.of(
          "ack_wait",
          "min_backoff",
          "max_backoff",
          "max_attempts",
          "purge_after",
          "cache_size",
          "poll_interval",
          "max_qps",
          "max_concurrency",
          "max_receivers_per_tenant");

  public static QueueOptions defaults() {
    return new QueueOptions(
        DEFAULT_ACK_WAIT,
        DEFAULT_MIN_BACKOFF,
        DEFAULT_MAX_BACKOFF,
        DEFAULT_MAX_ATTEMPTS,
        DEFAULT_PURGE_AFTER,
        DEFAULT_CACHE_SIZE,
        DEFAULT_POLL_INTERVAL,
        DEFAULT_MAX_QPS,
        DEFAULT_MAX_CONCURRENCY,
        DEFAULT_MAX_RECEIVERS_PER_TENANT);
  }

  /** True when a table comment marks a queue: its first word is {@link #MARKER}. */
  public static boolean isQueueComment(String comment) {
    if (comment == null) {
      return false;
    }
    String c = comment.strip();
    return c.equals(MARKER) || c.startsWith(MARKER + " ") || c.startsWith(MARKER + "\t");
  }

  /**
   * Parses a queue table's comment.
   *
   * @throws QueueConfigException naming the table and every problem found
   */
  public static QueueOptions parseComment(String table, String comment) {
    if (!isQueueComment(comment)) {
      throw new QueueConfigException(
          "queue " + table + ": comment must start with '" + MARKER + "', was '" + comment + "'");
    }
    Map<String, String> values = new LinkedHashMap<>();
    List<String> problems = new ArrayList<>();
    String rest = comment.strip().substring(MARKER.length()).strip();
    if (!rest.isEmpty()) {
      for (String token : rest.split("\\s+")) {
        int eq = token.indexOf('=');
        if (eq <= 0 || eq == token.length() - 1) {
          problems.add("'" + token + "' is not key=value");
          continue;
        }
        String key = token.substring(0, eq);
        if (!NAMES.contains(key)) {
          problems.add("unknown option '" + key + "' (known: " + String.join(", ", NAMES) + ")");
        } else if (values.put(key, token.substring(eq + 1)) != null) {
          problems.add("option '" + key + "' is given twice");
        }
      }
    }
    QueueOptions o = null;
    if (problems.isEmpty()) {
      Reader r = new Reader(values, problems);
      o =
          new QueueOptions(
              r.duration("ack_wait", DEFAULT_ACK_WAIT, Duration.ofMillis(100)),
              r.duration("min_backoff", DEFAULT_MIN_BACKOFF, Duration.ZERO),
              r.duration("max_backoff", DEFAULT_MAX_BACKOFF, Duration.ZERO),
              r.integer("max_attempts", DEFAULT_MAX_ATTEMPTS, 1),
              r.duration("purge_after", DEFAULT_PURGE_AFTER, Duration.ZERO),
              r.integer("cache_size", DEFAULT_CACHE_SIZE, 1),
              r.duration("poll_interval", DEFAULT_POLL_INTERVAL, Duration.ofMillis(1)),
              r.integer("max_qps", DEFAULT_MAX_QPS, 0),
              r.integer("max_concurrency", DEFAULT_MAX_CONCURRENCY, 0),
              r.integer("max_receivers_per_tenant", DEFAULT_MAX_RECEIVERS_PER_TENANT, 0));
      if (problems.isEmpty() && o.maxBackoff.compareTo(o.minBackoff) < 0) {
        problems.add(
            "max_backoff ("
                + Durations.format(o.maxBackoff)
                + ") is less than min_backoff ("
                + Durations.format(o.minBackoff)
                + ")");
      }
    }
    if (!problems.isEmpty()) {
      throw new QueueConfigException(
          "queue "
              + table
              + ": malformed comment '"
              + comment
              + "': "
              + String.join("; ", problems));
    }
    return o;
  }

  /** The options as a comment, e.g. for a migration that changes one of them. */
  public String toComment() {
    Map<String, String> m = asMap();
    Map<String, String> d = defaults().asMap();
    StringBuilder sb = new StringBuilder(MARKER);
    m.forEach(
        (k, v) -> {
          if (!v.equals(d.get(k))) {
            sb.append(' ').append(k).append('=').append(v);
          }
        });
    return sb.toString();
  }

  /** Every option and its value, as written in comments. */
  public Map<String, String> asMap() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("ack_wait", Durations.format(ackWait));
    m.put("min_backoff", Durations.format(minBackoff));
    m.put("max_backoff", Durations.format(maxBackoff));
    m.put("max_attempts", Integer.toString(maxAttempts));
    m.put("purge_after", Durations.format(purgeAfter));
    m.put("cache_size", Integer.toString(cacheSize));
    m.put("poll_interval", Durations.format(pollInterval));
    m.put("max_qps", Integer.toString(maxQps));
    m.put("max_concurrency", Integer.toString(maxConcurrency));
    m.put("max_receivers_per_tenant", Integer.toString(maxReceiversPerTenant));
    return m;
  }

  private record Reader(Map<String, String> values, List<String> problems) {
    Duration duration(String key, Duration dflt, Duration min) {
      String v = values.get(key);
      if (v == null) {
        return dflt;
      }
      try {
        Duration d = Durations.parse(v);
        if (d.compareTo(min) < 0) {
          problems.add(key + "=" + v + " is below the minimum " + Durations.format(min));
          return dflt;
        }
        return d;
      } catch (IllegalArgumentException e) {
        problems.add(key + ": " + e.getMessage());
        return dflt;
      }
    }

    int integer(String key, int dflt, int min) {
      String v = values.get(key);
      if (v == null) {
        return dflt;
      }
      try {
        int n = Integer.parseInt(v);
        if (n < min) {
          problems.add(key + "=" + v + " must be at least " + min);
          return dflt;
        }
        return n;
      } catch (NumberFormatException e) {
        problems.add(key + "='" + v + "' is not a whole number");
        return dflt;
      }
    }
  }
}
