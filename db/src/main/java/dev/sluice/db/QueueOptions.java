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
    int maxReceiversPerTenant,
    boolean fair,
    int tenantCacheShare,
    int tenantMaxInFlight,
    int tenantReserve,
    int actorMaxDepth,
    Map<String, Integer> classShares,
    int maxEventBytes,
    long cacheBytes) {

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
  public static final boolean DEFAULT_FAIR = true;

  /** Percent of the window one tenant may hold, so a backlog cannot hide others' events. */
  public static final int DEFAULT_TENANT_CACHE_SHARE = 50;

  public static final int DEFAULT_TENANT_MAX_IN_FLIGHT = 0;

  /**
   * Percent of all receivers' credits kept free for tenants with nothing in flight while other
   * tenants are busy, so that a quiet tenant's event goes out at once instead of after an ack.
   */
  public static final int DEFAULT_TENANT_RESERVE = 10;

  public static final int MAX_TENANT_RESERVE = 50;
  public static final int DEFAULT_ACTOR_MAX_DEPTH = 4;
  public static final int MAX_ACTOR_DEPTH = 16;

  /**
   * The largest message a manager sends a receiver: gRPC's default limit on inbound messages, which
   * every gRPC client accepts unless told otherwise (the Java receiver SDK sets it explicitly to
   * the same). Events are sent in batches of at most this many bytes.
   */
  public static final int MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

  /**
   * What a batch message adds to its events (the message and batch headers): an event of {@link
   * #MAX_EVENT_BYTES} still fits a message alone.
   */
  public static final int MESSAGE_OVERHEAD_BYTES = 1024;

  /**
   * An event (its columns and Sluice's fields, as sent) larger than this goes dead with "too large"
   * instead of being sent: 1 MiB, the common limit of message brokers.
   */
  public static final int DEFAULT_MAX_EVENT_BYTES = 1024 * 1024;

  public static final int MIN_EVENT_BYTES = 1024;
  public static final int MAX_EVENT_BYTES = MAX_MESSAGE_BYTES - MESSAGE_OVERHEAD_BYTES;

  /** The bytes of events the window may hold, besides cache_size events: 64 MiB. */
  public static final long DEFAULT_CACHE_BYTES = 64L * 1024 * 1024;

  public static final long MIN_CACHE_BYTES = 64L * 1024;
  public static final long MAX_CACHE_BYTES = 16L * 1024 * 1024 * 1024;

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
          "max_receivers_per_tenant",
          "fair",
          "tenant_cache_share",
          "tenant_max_in_flight",
          "tenant_reserve",
          "actor_max_depth",
          "class_shares",
          "max_event_bytes",
          "cache_bytes");

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
        DEFAULT_MAX_RECEIVERS_PER_TENANT,
        DEFAULT_FAIR,
        DEFAULT_TENANT_CACHE_SHARE,
        DEFAULT_TENANT_MAX_IN_FLIGHT,
        DEFAULT_TENANT_RESERVE,
        DEFAULT_ACTOR_MAX_DEPTH,
        Map.of(),
        DEFAULT_MAX_EVENT_BYTES,
        DEFAULT_CACHE_BYTES);
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
              r.integer("max_receivers_per_tenant", DEFAULT_MAX_RECEIVERS_PER_TENANT, 0),
              r.bool("fair", DEFAULT_FAIR),
              r.percent("tenant_cache_share", DEFAULT_TENANT_CACHE_SHARE),
              r.integer("tenant_max_in_flight", DEFAULT_TENANT_MAX_IN_FLIGHT, 0),
              r.percent("tenant_reserve", DEFAULT_TENANT_RESERVE, 0, MAX_TENANT_RESERVE),
              Math.min(MAX_ACTOR_DEPTH, r.integer("actor_max_depth", DEFAULT_ACTOR_MAX_DEPTH, 1)),
              r.classShares("class_shares"),
              (int)
                  r.bytes(
                      "max_event_bytes", DEFAULT_MAX_EVENT_BYTES, MIN_EVENT_BYTES, MAX_EVENT_BYTES),
              r.bytes("cache_bytes", DEFAULT_CACHE_BYTES, MIN_CACHE_BYTES, MAX_CACHE_BYTES));
      if (problems.isEmpty() && o.cacheBytes < o.maxEventBytes) {
        problems.add(
            "cache_bytes ("
                + ByteSizes.format(o.cacheBytes)
                + ") is less than max_event_bytes ("
                + ByteSizes.format(o.maxEventBytes)
                + ")");
      }
      if (problems.isEmpty()
          && o.actorMaxDepth != r.integer("actor_max_depth", DEFAULT_ACTOR_MAX_DEPTH, 1)) {
        problems.add("actor_max_depth must be at most " + MAX_ACTOR_DEPTH);
      }
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
    m.put("fair", Boolean.toString(fair));
    m.put("tenant_cache_share", tenantCacheShare + "%");
    m.put("tenant_max_in_flight", Integer.toString(tenantMaxInFlight));
    m.put("tenant_reserve", tenantReserve + "%");
    m.put("actor_max_depth", Integer.toString(actorMaxDepth));
    m.put("class_shares", classSharesText());
    m.put("max_event_bytes", ByteSizes.format(maxEventBytes));
    m.put("cache_bytes", ByteSizes.format(cacheBytes));
    return m;
  }

  private String classSharesText() {
    StringBuilder sb = new StringBuilder();
    classShares.forEach(
        (k, v) -> sb.append(sb.length() == 0 ? "" : ",").append(k).append(':').append(v));
    return sb.length() == 0 ? "none" : sb.toString();
  }

  /** The window slots one tenant may hold: tenant_cache_share of cache_size, at least one. */
  public int tenantCacheCap() {
    return Math.max(1, (int) ((long) cacheSize * tenantCacheShare / 100));
  }

  private record Reader(Map<String, String> values, List<String> problems) {
    boolean bool(String key, boolean dflt) {
      String v = values.get(key);
      if (v == null) {
        return dflt;
      }
      if (v.equals("true") || v.equals("false")) {
        return Boolean.parseBoolean(v);
      }
      problems.add(key + "='" + v + "' must be true or false");
      return dflt;
    }

    int percent(String key, int dflt) {
      return percent(key, dflt, 1, 100);
    }

    int percent(String key, int dflt, int min, int max) {
      String v = values.get(key);
      if (v == null) {
        return dflt;
      }
      String n = v.endsWith("%") ? v.substring(0, v.length() - 1) : v;
      try {
        int p = Integer.parseInt(n);
        if (p >= min && p <= max) {
          return p;
        }
      } catch (NumberFormatException ignored) {
        // reported below
      }
      problems.add(key + "='" + v + "' must be a percentage from " + min + "% to " + max + "%");
      return dflt;
    }

    /** {@code slow:25,batch:50}: class name, then its percent of a receiver's credits. */
    Map<String, Integer> classShares(String key) {
      String v = values.get(key);
      if (v == null || v.equals("none")) {
        return Map.of();
      }
      Map<String, Integer> out = new java.util.TreeMap<>();
      for (String part : v.split(",")) {
        String[] kv = part.split(":");
        if (kv.length != 2 || !kv[0].matches("[A-Za-z0-9_-]{1,32}")) {
          problems.add(key + ": '" + part + "' is not class:percent (e.g. slow:25)");
          continue;
        }
        try {
          int p =
              Integer.parseInt(
                  kv[1].endsWith("%") ? kv[1].substring(0, kv[1].length() - 1) : kv[1]);
          if (p < 1 || p > 100) {
            throw new NumberFormatException();
          }
          out.put(kv[0], p);
        } catch (NumberFormatException e) {
          problems.add(
              key + ": share of class '" + kv[0] + "' must be 1-100 percent, was '" + kv[1] + "'");
        }
      }
      return Map.copyOf(out);
    }

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

    long bytes(String key, long dflt, long min, long max) {
      String v = values.get(key);
      if (v == null) {
        return dflt;
      }
      try {
        long n = ByteSizes.parse(v);
        if (n < min || n > max) {
          problems.add(
              key
                  + "="
                  + v
                  + " must be from "
                  + ByteSizes.format(min)
                  + " to "
                  + ByteSizes.format(max));
          return dflt;
        }
        return n;
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
