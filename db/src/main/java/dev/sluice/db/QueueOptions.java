package dev.sluice.db;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * A queue's options, read from its table comment: {@code sluice_queue key=value ...}.
 *
 * <p>Every option is one row of {@link #OPTIONS}: its name, default, bounds, how it parses and how
 * it prints. A malformed comment is rejected as a whole with a message naming the table, the
 * option, the value and what is accepted, so that a typo never silently runs a queue with a default
 * the DBA did not mean; every problem of a comment is collected before it fails. Parsing throws
 * nothing but {@link QueueConfigException}, whatever the text.
 *
 * <p>The {@link #CHANNEL_OPTIONS} bind the queue to a broker channel of the manager's
 * configuration. Here each is only checked for its form; whether they fit together, the channel
 * exists and the columns they name are in the table is the manager's check ({@code
 * ChannelBinding}), made after its configuration's {@code queues} section is applied with {@link
 * #with}. An empty text option is its default: {@code channel=} none (gRPC receivers only), {@code
 * channel_target=} the queue's name as Kafka topic, or RabbitMQ's default exchange.
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
    long cacheBytes,
    String channel,
    String channelTarget,
    String channelRoutingKey,
    String channelTargetColumn,
    String channelKeyColumn,
    String channelBody,
    boolean channelReceivers) {

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

  /** The longest ack_wait and backoff: a day, so deadlines never reach the end of a long. */
  public static final Duration MAX_ACK_WAIT = Duration.ofDays(1);

  public static final Duration MAX_BACKOFF_LIMIT = Duration.ofDays(1);
  public static final Duration MAX_PURGE_AFTER = Duration.ofDays(365);
  public static final Duration MAX_POLL_INTERVAL = Duration.ofMinutes(1);

  /** The largest window: more is memory, not throughput. */
  public static final int MAX_CACHE_SIZE = 1_000_000;

  public static final int MAX_ATTEMPTS_LIMIT = 10_000;

  /** The bound of max_qps, max_concurrency and tenant_max_in_flight. */
  public static final int MAX_RATE = 1_000_000;

  public static final int MAX_RECEIVERS_PER_TENANT_LIMIT = 10_000;
  public static final int MAX_CLASSES = 32;

  /** {@code channel_body}'s value for a JSON object of the user columns (the default). */
  public static final String BODY_JSON = "json";

  /**
   * The options that bind a queue to a broker channel; the manager's configuration may set these
   * for a queue too (its {@code queues} section), and wins over the comment.
   */
  public static final List<String> CHANNEL_OPTIONS =
      List.of(
          "channel",
          "channel_target",
          "channel_routing_key",
          "channel_target_column",
          "channel_key_column",
          "channel_body",
          "channel_receivers");

  /** A channel's name, as the manager's configuration and {@code channel=} write it. */
  public static final Pattern CHANNEL_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

  private static final Pattern COLUMN = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,63}");

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

  /**
   * One option: its name in comments, kind, default and bounds (milliseconds for durations, the
   * number itself for counts and percents), and how the record holds it.
   */
  public record Option(
      String name,
      Kind kind,
      Object dflt,
      long min,
      long max,
      Function<QueueOptions, Object> get,
      TextRule text) {

    /** An option of any kind but {@link Kind#TEXT}. */
    public Option(
        String name,
        Kind kind,
        Object dflt,
        long min,
        long max,
        Function<QueueOptions, Object> get) {
      this(name, kind, dflt, min, max, get, null);
    }

    /** The value as comments write it. */
    public String format(Object v) {
      return switch (kind) {
        case DURATION -> Durations.format((Duration) v);
        case PERCENT -> v + "%";
        case CLASS_SHARES -> classSharesText(castShares(v));
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
            "none, or up to " + MAX_CLASSES + " class:percent pairs, each 1% to 100%";
        case BYTES -> ByteSizes.format(min) + " to " + ByteSizes.format(max);
        case TEXT -> text.says();
      };
    }

    private Object parse(String v, List<String> problems) {
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
      if (parts.length > MAX_CLASSES) {
        problems.add(name + " names " + parts.length + " classes: at most " + MAX_CLASSES);
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
  }

  private static String fmtMs(long ms) {
    return Durations.format(Duration.ofMillis(ms));
  }

  private static Option duration(
      String name, Duration dflt, Duration min, Duration max, Function<QueueOptions, Object> get) {
    return new Option(name, Kind.DURATION, dflt, min.toMillis(), max.toMillis(), get);
  }

  private static Option count(
      String name, int dflt, int min, int max, Function<QueueOptions, Object> get) {
    return new Option(name, Kind.COUNT, dflt, min, max, get);
  }

  private static Option percent(
      String name, int dflt, int min, int max, Function<QueueOptions, Object> get) {
    return new Option(name, Kind.PERCENT, dflt, min, max, get);
  }

  private static Option text(
      String name, String dflt, Pattern pattern, String says, Function<QueueOptions, Object> get) {
    return new Option(name, Kind.TEXT, dflt, 0, 0, get, new TextRule(pattern, says));
  }

  /** Every option, in the order the docs list them and the record holds them. */
  public static final List<Option> OPTIONS =
      List.of(
          duration(
              "ack_wait",
              DEFAULT_ACK_WAIT,
              Duration.ofMillis(100),
              MAX_ACK_WAIT,
              QueueOptions::ackWait),
          duration(
              "min_backoff",
              DEFAULT_MIN_BACKOFF,
              Duration.ZERO,
              MAX_BACKOFF_LIMIT,
              QueueOptions::minBackoff),
          duration(
              "max_backoff",
              DEFAULT_MAX_BACKOFF,
              Duration.ZERO,
              MAX_BACKOFF_LIMIT,
              QueueOptions::maxBackoff),
          count(
              "max_attempts",
              DEFAULT_MAX_ATTEMPTS,
              1,
              MAX_ATTEMPTS_LIMIT,
              QueueOptions::maxAttempts),
          duration(
              "purge_after",
              DEFAULT_PURGE_AFTER,
              Duration.ZERO,
              MAX_PURGE_AFTER,
              QueueOptions::purgeAfter),
          count("cache_size", DEFAULT_CACHE_SIZE, 1, MAX_CACHE_SIZE, QueueOptions::cacheSize),
          duration(
              "poll_interval",
              DEFAULT_POLL_INTERVAL,
              Duration.ofMillis(1),
              MAX_POLL_INTERVAL,
              QueueOptions::pollInterval),
          count("max_qps", DEFAULT_MAX_QPS, 0, MAX_RATE, QueueOptions::maxQps),
          count(
              "max_concurrency",
              DEFAULT_MAX_CONCURRENCY,
              0,
              MAX_RATE,
              QueueOptions::maxConcurrency),
          count(
              "max_receivers_per_tenant",
              DEFAULT_MAX_RECEIVERS_PER_TENANT,
              0,
              MAX_RECEIVERS_PER_TENANT_LIMIT,
              QueueOptions::maxReceiversPerTenant),
          new Option("fair", Kind.BOOL, DEFAULT_FAIR, 0, 1, QueueOptions::fair),
          percent(
              "tenant_cache_share",
              DEFAULT_TENANT_CACHE_SHARE,
              1,
              100,
              QueueOptions::tenantCacheShare),
          count(
              "tenant_max_in_flight",
              DEFAULT_TENANT_MAX_IN_FLIGHT,
              0,
              MAX_RATE,
              QueueOptions::tenantMaxInFlight),
          percent(
              "tenant_reserve",
              DEFAULT_TENANT_RESERVE,
              0,
              MAX_TENANT_RESERVE,
              QueueOptions::tenantReserve),
          count(
              "actor_max_depth",
              DEFAULT_ACTOR_MAX_DEPTH,
              1,
              MAX_ACTOR_DEPTH,
              QueueOptions::actorMaxDepth),
          new Option(
              "class_shares", Kind.CLASS_SHARES, Map.of(), 0, 100, QueueOptions::classShares),
          new Option(
              "max_event_bytes",
              Kind.BYTES,
              (long) DEFAULT_MAX_EVENT_BYTES,
              MIN_EVENT_BYTES,
              MAX_EVENT_BYTES,
              o -> (long) o.maxEventBytes()),
          new Option(
              "cache_bytes",
              Kind.BYTES,
              DEFAULT_CACHE_BYTES,
              MIN_CACHE_BYTES,
              MAX_CACHE_BYTES,
              QueueOptions::cacheBytes),
          text(
              "channel",
              "",
              CHANNEL_NAME,
              "a channel of the manager's configuration: 1-64 letters, digits, '.', '_' or '-'",
              QueueOptions::channel),
          text(
              "channel_target",
              "",
              Pattern.compile("[A-Za-z0-9._:-]{1,255}"),
              "a Kafka topic or RabbitMQ exchange: 1-255 letters, digits, '.', '_', ':' or '-'"
                  + " (empty: the default)",
              QueueOptions::channelTarget),
          text(
              "channel_routing_key",
              "",
              Pattern.compile("[A-Za-z0-9._:/@+-]{1,255}"),
              "a RabbitMQ routing key: 1-255 letters, digits, '.', '_', ':', '/', '@', '+' or '-'"
                  + " (empty: the queue's name)",
              QueueOptions::channelRoutingKey),
          text(
              "channel_target_column",
              "",
              COLUMN,
              "a column name",
              QueueOptions::channelTargetColumn),
          text(
              "channel_key_column",
              "",
              COLUMN,
              "a column name (empty: the tenant)",
              QueueOptions::channelKeyColumn),
          text(
              "channel_body",
              BODY_JSON,
              COLUMN,
              BODY_JSON + " or a column name",
              QueueOptions::channelBody),
          new Option("channel_receivers", Kind.BOOL, false, 0, 1, QueueOptions::channelReceivers));

  /** Option names, as written in comments, in the order the docs list them. */
  public static final List<String> NAMES = OPTIONS.stream().map(Option::name).toList();

  /** The option of that name, or null. */
  public static Option option(String name) {
    for (Option o : OPTIONS) {
      if (o.name().equals(name)) {
        return o;
      }
    }
    return null;
  }

  public static QueueOptions defaults() {
    return of(OPTIONS.stream().map(Option::dflt).toList());
  }

  /** The record from one value per option, in {@link #OPTIONS} order. */
  private static QueueOptions of(List<Object> v) {
    return new QueueOptions(
        (Duration) v.get(0),
        (Duration) v.get(1),
        (Duration) v.get(2),
        (Integer) v.get(3),
        (Duration) v.get(4),
        (Integer) v.get(5),
        (Duration) v.get(6),
        (Integer) v.get(7),
        (Integer) v.get(8),
        (Integer) v.get(9),
        (Boolean) v.get(10),
        (Integer) v.get(11),
        (Integer) v.get(12),
        (Integer) v.get(13),
        (Integer) v.get(14),
        castShares(v.get(15)),
        (int) (long) (Long) v.get(16),
        (Long) v.get(17),
        (String) v.get(18),
        (String) v.get(19),
        (String) v.get(20),
        (String) v.get(21),
        (String) v.get(22),
        (String) v.get(23),
        (Boolean) v.get(24));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Integer> castShares(Object v) {
    return (Map<String, Integer>) v;
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
   * @throws QueueConfigException naming the table and every problem found; nothing else
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
        if (eq <= 0) {
          problems.add("'" + token + "' is not key=value");
          continue;
        }
        String key = token.substring(0, eq);
        Option option = option(key);
        if (option == null) {
          problems.add("unknown option '" + key + "' (known: " + String.join(", ", NAMES) + ")");
        } else if (eq == token.length() - 1 && option.kind() != Kind.TEXT) {
          problems.add("'" + token + "' is not key=value");
        } else if (values.put(key, token.substring(eq + 1)) != null) {
          problems.add("option '" + key + "' is given twice");
        }
      }
    }
    List<Object> parsed = new ArrayList<>();
    for (Option o : OPTIONS) {
      String v = values.get(o.name());
      parsed.add(v == null ? o.dflt() : o.parse(v, problems));
    }
    QueueOptions o = of(parsed);
    o.checkTogether(problems);
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

  /**
   * These options with some replaced, each given as a comment writes it ({@code channel_target} to
   * {@code orders.due}): the manager configuration's {@code queues} section, which wins over the
   * comment.
   *
   * @param where what the values are, for the error ("sluice.yaml: queues.orders")
   * @throws QueueConfigException starting with {@code where}, naming every problem; nothing else
   */
  public QueueOptions with(Map<String, String> values, String where) {
    List<String> problems = new ArrayList<>();
    List<Object> parsed = new ArrayList<>();
    for (Option o : OPTIONS) {
      String v = values.get(o.name());
      parsed.add(v == null ? o.get().apply(this) : o.parse(v.strip(), problems));
    }
    for (String key : values.keySet()) {
      if (option(key) == null) {
        problems.add("unknown option '" + key + "' (known: " + String.join(", ", NAMES) + ")");
      }
    }
    QueueOptions o = of(parsed);
    o.checkTogether(problems);
    if (!problems.isEmpty()) {
      throw new QueueConfigException(where + ": " + String.join("; ", problems));
    }
    return o;
  }

  /** The rules between options, once each option is valid on its own. */
  private void checkTogether(List<String> problems) {
    if (problems.isEmpty() && maxBackoff.compareTo(minBackoff) < 0) {
      problems.add(
          "max_backoff ("
              + Durations.format(maxBackoff)
              + ") is less than min_backoff ("
              + Durations.format(minBackoff)
              + ")");
    }
    if (problems.isEmpty() && cacheBytes < maxEventBytes) {
      problems.add(
          "cache_bytes ("
              + ByteSizes.format(cacheBytes)
              + ") is less than max_event_bytes ("
              + ByteSizes.format(maxEventBytes)
              + ")");
    }
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
    for (Option o : OPTIONS) {
      m.put(o.name(), o.format(o.get().apply(this)));
    }
    return m;
  }

  /** The names of the options whose values differ between this and {@code other}. */
  public List<String> changedFrom(QueueOptions other) {
    List<String> out = new ArrayList<>();
    for (Option o : OPTIONS) {
      if (!o.get().apply(this).equals(o.get().apply(other))) {
        out.add(o.name());
      }
    }
    return out;
  }

  private static String classSharesText(Map<String, Integer> shares) {
    StringBuilder sb = new StringBuilder();
    shares.forEach(
        (k, v) -> sb.append(sb.length() == 0 ? "" : ",").append(k).append(':').append(v));
    return sb.length() == 0 ? "none" : sb.toString();
  }

  /** The window slots one tenant may hold: tenant_cache_share of cache_size, at least one. */
  public int tenantCacheCap() {
    return Math.max(1, (int) ((long) cacheSize * tenantCacheShare / 100));
  }
}
