package dev.sluice.db;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * A queue's options, read from its table comment: {@code sluice_queue key=value ...}.
 *
 * <p>Every option is defined once, as one {@link QueueOption} of {@link #OPTIONS}: its name,
 * default, bounds, how it parses and prints, whether a change is applied in place or restarts the
 * queue, and its meaning; the record is built from the parsed values by name, the restart list
 * ({@link #RESTART_OPTIONS}) and the README's table ({@link QueueOptionsDoc}) are derived. A
 * malformed comment is rejected as a whole with a message naming the table, the option, the value
 * and what is accepted, so that a typo never silently runs a queue with a default the DBA did not
 * mean; every problem of a comment is collected before it fails. Parsing throws nothing but {@link
 * QueueConfigException}, whatever the text.
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
    Duration dedupWindow,
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
    boolean channelReceivers,
    String ordering,
    String orderingColumn,
    String orderingOnDead,
    String groupOnDead) {

  /** The first word of every queue table's comment. */
  public static final String MARKER = "sluice_queue";

  public static final Duration DEFAULT_ACK_WAIT = Duration.ofSeconds(30);
  public static final Duration DEFAULT_MIN_BACKOFF = Duration.ofSeconds(1);
  public static final Duration DEFAULT_MAX_BACKOFF = Duration.ofMinutes(5);
  public static final int DEFAULT_MAX_ATTEMPTS = 20;
  public static final Duration DEFAULT_PURGE_AFTER = Duration.ofDays(1);

  /** How long a settled row keeps its dedup key at least; zero: as long as purge_after. */
  public static final Duration DEFAULT_DEDUP_WINDOW = Duration.ZERO;

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

  /** {@code ordering}'s values: none (the default), one key column, the whole queue. */
  public static final String ORDERING_NONE = "none";

  public static final String ORDERING_KEY = "key";
  public static final String ORDERING_QUEUE = "queue";

  /** {@code ordering_on_dead}'s values: the key goes on past a dead event, or stops at it. */
  public static final String ON_DEAD_SKIP = "skip";

  public static final String ON_DEAD_HALT = "halt";

  /** {@code group_on_dead}'s values: wait for every child, or complete at the first dead one. */
  public static final String GROUP_WAIT_ALL = "wait_all";

  public static final String GROUP_FAIL_FAST = "fail_fast";

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

  private static QueueOption duration(
      String name, Duration dflt, Duration min, Duration max, Function<QueueOptions, Object> get) {
    return new QueueOption(
        name, QueueOption.Kind.DURATION, dflt, min.toMillis(), max.toMillis(), get);
  }

  private static QueueOption count(
      String name, int dflt, int min, int max, Function<QueueOptions, Object> get) {
    return new QueueOption(name, QueueOption.Kind.COUNT, dflt, min, max, get);
  }

  private static QueueOption percent(
      String name, int dflt, int min, int max, Function<QueueOptions, Object> get) {
    return new QueueOption(name, QueueOption.Kind.PERCENT, dflt, min, max, get);
  }

  private static QueueOption bool(String name, boolean dflt, Function<QueueOptions, Object> get) {
    return new QueueOption(name, QueueOption.Kind.BOOL, dflt, 0, 1, get);
  }

  private static QueueOption bytes(
      String name, long dflt, long min, long max, Function<QueueOptions, Object> get) {
    return new QueueOption(name, QueueOption.Kind.BYTES, dflt, min, max, get);
  }

  private static QueueOption text(
      String name, String dflt, Pattern pattern, String says, Function<QueueOptions, Object> get) {
    return new QueueOption(
        name,
        QueueOption.Kind.TEXT,
        dflt,
        0,
        0,
        get,
        new QueueOption.TextRule(pattern, says),
        false,
        "",
        null,
        null);
  }

  /**
   * Every option, defined once, in the order the docs list them: parsing, defaults, bounds, the
   * in-place or restart rule ({@link #RESTART_OPTIONS}) and the README's table ({@link
   * QueueOptionsDoc}) come from here.
   */
  public static final List<QueueOption> OPTIONS =
      List.of(
          duration(
                  "ack_wait",
                  DEFAULT_ACK_WAIT,
                  Duration.ofMillis(100),
                  MAX_ACK_WAIT,
                  QueueOptions::ackWait)
              .appliedInPlace()
              .doc(
                  "how long a receiver may hold an event before it is retried (a change applies"
                      + " to later fires). *Consider tuning*: above your slowest handling"),
          duration(
                  "min_backoff",
                  DEFAULT_MIN_BACKOFF,
                  Duration.ZERO,
                  MAX_BACKOFF_LIMIT,
                  QueueOptions::minBackoff)
              .appliedInPlace()
              .doc("first retry delay after a nack, timeout or broken stream"),
          duration(
                  "max_backoff",
                  DEFAULT_MAX_BACKOFF,
                  Duration.ZERO,
                  MAX_BACKOFF_LIMIT,
                  QueueOptions::maxBackoff)
              .appliedInPlace()
              .boundsNote("≥ `min_backoff`")
              .doc("retry delays double per attempt up to this (with jitter); never unbounded"),
          count(
                  "max_attempts",
                  DEFAULT_MAX_ATTEMPTS,
                  1,
                  MAX_ATTEMPTS_LIMIT,
                  QueueOptions::maxAttempts)
              .appliedInPlace()
              .doc("after this many attempts the event becomes `dead`"),
          duration(
                  "purge_after",
                  DEFAULT_PURGE_AFTER,
                  Duration.ZERO,
                  MAX_PURGE_AFTER,
                  QueueOptions::purgeAfter)
              .appliedInPlace()
              .doc(
                  "acked and cancelled rows are deleted this long after settling, in batches of"
                      + " 1000"),
          duration(
                  "dedup_window",
                  DEFAULT_DEDUP_WINDOW,
                  Duration.ZERO,
                  MAX_PURGE_AFTER,
                  QueueOptions::dedupWindow)
              .appliedInPlace()
              .doc(
                  "acked and cancelled rows that carry a `dedup_key` are kept this long after"
                      + " settling when it is longer than `purge_after`, so their key stays taken"
                      + " that long ([deduplication](#deduplication)); 0: `purge_after`"),
          count("cache_size", DEFAULT_CACHE_SIZE, 1, MAX_CACHE_SIZE, QueueOptions::cacheSize)
              .doc("events held in memory per queue (the window)"),
          duration(
                  "poll_interval",
                  DEFAULT_POLL_INTERVAL,
                  Duration.ofMillis(1),
                  MAX_POLL_INTERVAL,
                  QueueOptions::pollInterval)
              .appliedInPlace()
              .doc(
                  "the longest pause between polls of an idle table; busy tables are polled every"
                      + " 2 ms, and a full window re-polls as soon as it drains. *Rarely tuned*"),
          count("max_qps", DEFAULT_MAX_QPS, 0, MAX_RATE, QueueOptions::maxQps)
              .appliedInPlace()
              .doc(
                  "at most this many events fired a second, per queue on each shard, in bursts of"
                      + " at most a tenth of a second's worth (0 = no limit)"),
          count(
                  "max_concurrency",
                  DEFAULT_MAX_CONCURRENCY,
                  0,
                  MAX_RATE,
                  QueueOptions::maxConcurrency)
              .appliedInPlace()
              .doc("cap on events in flight for the queue across receivers (0 = none)"),
          count(
                  "max_receivers_per_tenant",
                  DEFAULT_MAX_RECEIVERS_PER_TENANT,
                  0,
                  MAX_RECEIVERS_PER_TENANT_LIMIT,
                  QueueOptions::maxReceiversPerTenant)
              .doc(
                  "shuffle sharding: each tenant goes to a stable subset of this many receivers"
                      + " (0 = all)"),
          bool("fair", DEFAULT_FAIR, QueueOptions::fair)
              .doc(
                  "tenants take turns (see [Fairness](#fairness)); `false` is one FIFO by"
                      + " (priority, time) across tenants: `tenant_max_in_flight` and the"
                      + " `tenant_limits`' `max_in_flight` still hold, and an event no receiver"
                      + " accepts (or of a tenant at its cap) waits aside while the events behind"
                      + " it go; the window shares (`tenant_cache_share`, `cache_share`) apply"
                      + " only with `true`"),
          percent(
                  "tenant_cache_share",
                  DEFAULT_TENANT_CACHE_SHARE,
                  1,
                  100,
                  QueueOptions::tenantCacheShare)
              .doc(
                  "the most of the window one tenant may hold, so its backlog cannot hide"
                      + " others' events"),
          count(
                  "tenant_max_in_flight",
                  DEFAULT_TENANT_MAX_IN_FLIGHT,
                  0,
                  MAX_RATE,
                  QueueOptions::tenantMaxInFlight)
              .doc("cap on one tenant's events in flight (0 = none)"),
          percent(
                  "tenant_reserve",
                  DEFAULT_TENANT_RESERVE,
                  0,
                  MAX_TENANT_RESERVE,
                  QueueOptions::tenantReserve)
              .doc(
                  "share of all receivers' credits (rounded, at least one unless 0%) kept free"
                      + " for tenants with nothing in flight while others are busy: their events"
                      + " go out at once, at the cost of that much of a busy tenant's throughput"
                      + " (see [Fairness](#fairness))"),
          count(
                  "actor_max_depth",
                  DEFAULT_ACTOR_MAX_DEPTH,
                  1,
                  MAX_ACTOR_DEPTH,
                  QueueOptions::actorMaxDepth)
              .doc("how deep an `actor` path may go"),
          new QueueOption(
                  "class_shares",
                  QueueOption.Kind.CLASS_SHARES,
                  Map.of(),
                  0,
                  100,
                  QueueOptions::classShares)
              .doc(
                  "e.g. `slow:25,batch:50`: a work class may hold at most this percent of a"
                      + " receiver's credits"),
          bytes(
                  "max_event_bytes",
                  DEFAULT_MAX_EVENT_BYTES,
                  MIN_EVENT_BYTES,
                  MAX_EVENT_BYTES,
                  o -> (long) o.maxEventBytes())
              .appliedInPlace()
              .doc(
                  "the largest event (its columns plus Sluice's fields, as sent): a larger one"
                      + " goes `dead` with the reason `too large: N bytes > limit`, never fired."
                      + " Events go to a receiver in messages of at most 4 MiB, gRPC's default"
                      + " inbound limit, which the Java SDK sets explicitly; another client must"
                      + " accept messages of 4 MiB"),
          bytes(
                  "cache_bytes",
                  DEFAULT_CACHE_BYTES,
                  MIN_CACHE_BYTES,
                  MAX_CACHE_BYTES,
                  QueueOptions::cacheBytes)
              .boundsNote("≥ `max_event_bytes`")
              .doc(
                  "bytes of events held in memory per queue: the window stops at whichever of"
                      + " `cache_size` and this it reaches first, and the poller sizes its reads"
                      + " by the largest rows it has seen lately, so large rows cannot exhaust"
                      + " the heap"),
          // a channel's outlet is built from the channel options when the queue starts
          text(
                  "channel",
                  "",
                  CHANNEL_NAME,
                  "a channel of the manager's configuration: 1-64 letters, digits, '.', '_' or"
                      + " '-'",
                  QueueOptions::channel)
              .shownDefault("none")
              .doc(
                  "publish this queue's events to that broker channel"
                      + " ([channels](#channel-options-publishing-to-kafka-or-rabbitmq)); none:"
                      + " gRPC receivers only"),
          text(
                  "channel_target",
                  "",
                  Pattern.compile("[A-Za-z0-9._:-]{1,255}"),
                  "a Kafka topic or RabbitMQ exchange: 1-255 letters, digits, '.', '_', ':' or"
                      + " '-' (empty: the default)",
                  QueueOptions::channelTarget)
              .shownDefault("the queue's name (Kafka), the default exchange (RabbitMQ)")
              .doc(
                  "the Kafka topic, or the RabbitMQ exchange; `channel_target=` (empty) is the"
                      + " default"),
          text(
                  "channel_routing_key",
                  "",
                  Pattern.compile("[A-Za-z0-9._:/@+-]{1,255}"),
                  "a RabbitMQ routing key: 1-255 letters, digits, '.', '_', ':', '/', '@', '+'"
                      + " or '-' (empty: the queue's name)",
                  QueueOptions::channelRoutingKey)
              .shownDefault("the queue's name")
              .doc("RabbitMQ only: the routing key"),
          text(
                  "channel_target_column",
                  "",
                  COLUMN,
                  "a column name",
                  QueueOptions::channelTargetColumn)
              .shownDefault("none")
              .doc(
                  "the column naming each event's Kafka topic or RabbitMQ routing key; its value"
                      + " must be one of the channel's `allowed_targets`"),
          text(
                  "channel_key_column",
                  "",
                  COLUMN,
                  "a column name (empty: the ordering key or the tenant)",
                  QueueOptions::channelKeyColumn)
              .shownDefault("the ordering key, else the tenant")
              .doc(
                  "Kafka only: the column holding the record key; when empty, an ordered queue's"
                      + " records are keyed by their [ordering key](#ordered-delivery) (one"
                      + " partition per key, in `id` order) and others by the tenant"),
          text(
                  "channel_body",
                  BODY_JSON,
                  COLUMN,
                  BODY_JSON + " or a column name",
                  QueueOptions::channelBody)
              .doc(
                  "the message body: a JSON object of the user columns, or one column's value as"
                      + " it is"),
          bool("channel_receivers", false, QueueOptions::channelReceivers)
              .doc("whether gRPC receivers may subscribe to a channel-bound queue as well"),
          text(
                  "ordering",
                  ORDERING_NONE,
                  Pattern.compile("none|key|queue"),
                  "none, key or queue",
                  QueueOptions::ordering)
              .doc(
                  "[ordered delivery](#ordered-delivery): `key` delivers the events that share"
                      + " the `ordering_column`'s value one at a time, in `id` order; `queue`"
                      + " makes the whole queue one key; `none` delivers in parallel"),
          text(
                  "ordering_column",
                  QueueConvention.ORDERING_KEY,
                  COLUMN,
                  "a column name",
                  QueueOptions::orderingColumn)
              .doc(
                  "with `ordering=key`: the column holding the key (an integer, or a CHAR or"
                      + " VARCHAR of at most 255 characters, with an index on (column, `state`));"
                      + " a row whose key is NULL is not ordered"),
          text(
                  "ordering_on_dead",
                  ON_DEAD_SKIP,
                  Pattern.compile("skip|halt"),
                  "skip or halt",
                  QueueOptions::orderingOnDead)
              .doc(
                  "when a key's event goes `dead`: `skip` lets the next event of the key go;"
                      + " `halt` stops the key until the dead event is replayed or skipped"
                      + " (`sluice ordering`)"),
          text(
                  "group_on_dead",
                  GROUP_WAIT_ALL,
                  Pattern.compile("wait_all|fail_fast"),
                  "wait_all or fail_fast",
                  QueueOptions::groupOnDead)
              .doc(
                  "for a queue of [completion events](#event-groups): when a child of the group"
                      + " goes `dead`, `wait_all` counts it and waits for the other children;"
                      + " `fail_fast` releases the completion event at once"));

  /** Option names, as written in comments, in the order the docs list them. */
  public static final List<String> NAMES = OPTIONS.stream().map(QueueOption::name).toList();

  /**
   * Options that shape the window, the tenant ledgers, the receiver pool or the channel's outlet,
   * built once when the queue starts: a change to one of them needs a restart (which releases the
   * events in flight). The others are applied in place.
   */
  public static final List<String> RESTART_OPTIONS =
      OPTIONS.stream().filter(o -> !o.inPlace()).map(QueueOption::name).toList();

  /** The option of that name, or null. */
  public static QueueOption option(String name) {
    for (QueueOption o : OPTIONS) {
      if (o.name().equals(name)) {
        return o;
      }
    }
    return null;
  }

  public static QueueOptions defaults() {
    Map<String, Object> v = new LinkedHashMap<>();
    OPTIONS.forEach(o -> v.put(o.name(), o.dflt()));
    return of(v);
  }

  /** The record from one value per option, by the option's name. */
  private static QueueOptions of(Map<String, Object> v) {
    return new QueueOptions(
        (Duration) v.get("ack_wait"),
        (Duration) v.get("min_backoff"),
        (Duration) v.get("max_backoff"),
        (Integer) v.get("max_attempts"),
        (Duration) v.get("purge_after"),
        (Duration) v.get("dedup_window"),
        (Integer) v.get("cache_size"),
        (Duration) v.get("poll_interval"),
        (Integer) v.get("max_qps"),
        (Integer) v.get("max_concurrency"),
        (Integer) v.get("max_receivers_per_tenant"),
        (Boolean) v.get("fair"),
        (Integer) v.get("tenant_cache_share"),
        (Integer) v.get("tenant_max_in_flight"),
        (Integer) v.get("tenant_reserve"),
        (Integer) v.get("actor_max_depth"),
        castShares(v.get("class_shares")),
        Math.toIntExact((Long) v.get("max_event_bytes")),
        (Long) v.get("cache_bytes"),
        (String) v.get("channel"),
        (String) v.get("channel_target"),
        (String) v.get("channel_routing_key"),
        (String) v.get("channel_target_column"),
        (String) v.get("channel_key_column"),
        (String) v.get("channel_body"),
        (Boolean) v.get("channel_receivers"),
        (String) v.get("ordering"),
        (String) v.get("ordering_column"),
        (String) v.get("ordering_on_dead"),
        (String) v.get("group_on_dead"));
  }

  @SuppressWarnings("unchecked")
  static Map<String, Integer> castShares(Object v) {
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
        QueueOption option = option(key);
        if (option == null) {
          problems.add("unknown option '" + key + "' (known: " + String.join(", ", NAMES) + ")");
        } else if (eq == token.length() - 1 && option.kind() != QueueOption.Kind.TEXT) {
          problems.add("'" + token + "' is not key=value");
        } else if (values.put(key, token.substring(eq + 1)) != null) {
          problems.add("option '" + key + "' is given twice");
        }
      }
    }
    Map<String, Object> parsed = new LinkedHashMap<>();
    for (QueueOption o : OPTIONS) {
      String v = values.get(o.name());
      parsed.put(o.name(), v == null ? o.dflt() : o.parse(v, problems));
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
    Map<String, Object> parsed = new LinkedHashMap<>();
    for (QueueOption o : OPTIONS) {
      String v = values.get(o.name());
      parsed.put(o.name(), v == null ? o.get().apply(this) : o.parse(v.strip(), problems));
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
    for (QueueOption o : OPTIONS) {
      m.put(o.name(), o.format(o.get().apply(this)));
    }
    return m;
  }

  /** The names of the options whose values differ between this and {@code other}. */
  public List<String> changedFrom(QueueOptions other) {
    List<String> out = new ArrayList<>();
    for (QueueOption o : OPTIONS) {
      if (!o.get().apply(this).equals(o.get().apply(other))) {
        out.add(o.name());
      }
    }
    return out;
  }

  static String classSharesText(Map<String, Integer> shares) {
    StringBuilder sb = new StringBuilder();
    shares.forEach(
        (k, v) -> sb.append(sb.length() == 0 ? "" : ",").append(k).append(':').append(v));
    return sb.length() == 0 ? "none" : sb.toString();
  }

  /** Whether events are ordered: {@code ordering=key} or {@code ordering=queue}. */
  public boolean ordered() {
    return !ORDERING_NONE.equals(ordering) && !ordering.isEmpty();
  }

  /** Whether the whole queue is one key ({@code ordering=queue}). */
  public boolean orderedAsOneKey() {
    return ORDERING_QUEUE.equals(ordering);
  }

  /** Whether a dead event stops its key ({@code ordering_on_dead=halt}). */
  public boolean haltOnDead() {
    return ordered() && ON_DEAD_HALT.equals(orderingOnDead);
  }

  /** Whether a dead child completes its group at once ({@code group_on_dead=fail_fast}). */
  public boolean groupFailFast() {
    return GROUP_FAIL_FAST.equals(groupOnDead);
  }

  /** The window slots one tenant may hold: tenant_cache_share of cache_size, at least one. */
  public int tenantCacheCap() {
    return Math.max(1, (int) ((long) cacheSize * tenantCacheShare / 100));
  }
}
