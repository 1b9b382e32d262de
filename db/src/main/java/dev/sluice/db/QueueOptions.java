package dev.sluice.db;

import static dev.sluice.db.QueueOptionKeys.*;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A queue's options, read from its table comment: {@code sluice_queue key=value ...}.
 *
 * <p>Every option is defined once, as one typed {@link QueueOption} key of {@link QueueOptionKeys}:
 * its name, default, bounds, how it parses and prints, whether a change is applied in place or
 * restarts the queue, and its meaning. These options hold one value per key, read with {@link #get}
 * or the named accessors ({@link #ackWait()}, ...); the restart list ({@link #RESTART_OPTIONS}) and
 * the README's table ({@link QueueOptionsDoc}) are derived. A malformed comment is rejected as a
 * whole with a message naming the table, the option, the value and what is accepted, so that a typo
 * never silently runs a queue with a default the DBA did not mean; every problem of a comment is
 * collected before it fails. Parsing throws nothing but {@link QueueConfigException}, whatever the
 * text.
 *
 * <p>The {@link #CHANNEL_OPTIONS} bind the queue to a broker channel of the manager's
 * configuration. Here each is only checked for its form; whether they fit together, the channel
 * exists and the columns they name are in the table is the manager's check ({@code
 * ChannelBinding}), made after its configuration's {@code queues} section is applied with {@link
 * #with}. An empty text option is its default: {@code channel=} none (gRPC receivers only), {@code
 * channel_target=} the queue's name as Kafka topic, or RabbitMQ's default exchange.
 */
public final class QueueOptions {

  /** The first word of every queue table's comment. */
  public static final String MARKER = "sluice_queue";

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

  /** The bound of max_qps, max_concurrency and tenant_max_in_flight. */
  public static final int MAX_RATE = 1_000_000;

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
              CHANNEL,
              CHANNEL_TARGET,
              CHANNEL_ROUTING_KEY,
              CHANNEL_TARGET_COLUMN,
              CHANNEL_KEY_COLUMN,
              CHANNEL_BODY,
              CHANNEL_RECEIVERS)
          .stream()
          .map(QueueOption::name)
          .toList();

  /** A channel's name, as the manager's configuration and {@code channel=} write it. */
  public static final Pattern CHANNEL_NAME = QueueOptionKeys.CHANNEL_NAME;

  /** Every option, in the order the docs list them ({@link QueueOptionKeys#ALL}). */
  public static final List<QueueOption<?>> OPTIONS = QueueOptionKeys.ALL;

  /** Option names, as written in comments, in the order the docs list them. */
  public static final List<String> NAMES = OPTIONS.stream().map(QueueOption::name).toList();

  /**
   * Options that shape the window, the tenant ledgers, the receiver pool or the channel's outlet,
   * built once when the queue starts: a change to one of them needs a restart (which releases the
   * events in flight). The others are applied in place.
   */
  public static final List<String> RESTART_OPTIONS =
      OPTIONS.stream().filter(o -> !o.inPlace()).map(QueueOption::name).toList();

  private static final QueueOptions DEFAULTS = new QueueOptions(Map.of());

  /** One value per option, each put by {@link #put} under its own key, so of its key's type. */
  private final Map<QueueOption<?>, Object> values;

  /** The options with {@code given}'s values, and the defaults for the rest. */
  private QueueOptions(Map<QueueOption<?>, Object> given) {
    Map<QueueOption<?>, Object> v = new LinkedHashMap<>();
    for (QueueOption<?> o : OPTIONS) {
      v.put(o, given.containsKey(o) ? given.get(o) : o.dflt());
    }
    this.values = v;
  }

  /** The option of that name, or null. */
  public static QueueOption<?> option(String name) {
    for (QueueOption<?> o : OPTIONS) {
      if (o.name().equals(name)) {
        return o;
      }
    }
    return null;
  }

  public static QueueOptions defaults() {
    return DEFAULTS;
  }

  /** This option's value. */
  @SuppressWarnings("unchecked") // put only by parse or the default of the same key
  public <T> T get(QueueOption<T> key) {
    return (T) values.get(key);
  }

  /** Parses {@code text} for {@code key} into {@code into}; a problem is added if it is bad. */
  private static <T> void put(
      Map<QueueOption<?>, Object> into, QueueOption<T> key, String text, List<String> problems) {
    into.put(key, key.parse(text, problems));
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
        QueueOption<?> option = option(key);
        if (option == null) {
          problems.add("unknown option '" + key + "' (known: " + String.join(", ", NAMES) + ")");
        } else if (eq == token.length() - 1 && option.kind() != QueueOption.Kind.TEXT) {
          problems.add("'" + token + "' is not key=value");
        } else if (values.put(key, token.substring(eq + 1)) != null) {
          problems.add("option '" + key + "' is given twice");
        }
      }
    }
    Map<QueueOption<?>, Object> parsed = new LinkedHashMap<>();
    for (QueueOption<?> o : OPTIONS) {
      String v = values.get(o.name());
      if (v != null) {
        put(parsed, o, v, problems);
      }
    }
    QueueOptions o = new QueueOptions(parsed);
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
    Map<QueueOption<?>, Object> parsed = new LinkedHashMap<>(this.values);
    for (QueueOption<?> o : OPTIONS) {
      String v = values.get(o.name());
      if (v != null) {
        put(parsed, o, v.strip(), problems);
      }
    }
    for (String key : values.keySet()) {
      if (option(key) == null) {
        problems.add("unknown option '" + key + "' (known: " + String.join(", ", NAMES) + ")");
      }
    }
    QueueOptions o = new QueueOptions(parsed);
    o.checkTogether(problems);
    if (!problems.isEmpty()) {
      throw new QueueConfigException(where + ": " + String.join("; ", problems));
    }
    return o;
  }

  /** The rules between options, once each option is valid on its own. */
  private void checkTogether(List<String> problems) {
    if (problems.isEmpty() && maxBackoff().compareTo(minBackoff()) < 0) {
      problems.add(
          "max_backoff ("
              + Durations.format(maxBackoff())
              + ") is less than min_backoff ("
              + Durations.format(minBackoff())
              + ")");
    }
    if (problems.isEmpty() && ordered() && keyMaxInFlight() > 1) {
      problems.add(
          "key_max_in_flight="
              + keyMaxInFlight()
              + " with ordering="
              + ordering()
              + ": an ordered key has one event in flight at a time (use 0 or 1, or drop"
              + " ordering for N at a time in any order)");
    }
    if (problems.isEmpty() && cacheBytes() < maxEventBytes()) {
      problems.add(
          "cache_bytes ("
              + ByteSizes.format(cacheBytes())
              + ") is less than max_event_bytes ("
              + ByteSizes.format(maxEventBytes())
              + ")");
    }
  }

  /** The options as a comment, e.g. for a migration that changes one of them. */
  public String toComment() {
    StringBuilder sb = new StringBuilder(MARKER);
    for (QueueOption<?> o : OPTIONS) {
      String v = o.formatIn(this);
      if (!v.equals(o.formattedDefault())) {
        sb.append(' ').append(o.name()).append('=').append(v);
      }
    }
    return sb.toString();
  }

  /** Every option and its value, as written in comments. */
  public Map<String, String> asMap() {
    Map<String, String> m = new LinkedHashMap<>();
    for (QueueOption<?> o : OPTIONS) {
      m.put(o.name(), o.formatIn(this));
    }
    return m;
  }

  /** The names of the options whose values differ between this and {@code other}. */
  public List<String> changedFrom(QueueOptions other) {
    List<String> out = new ArrayList<>();
    for (QueueOption<?> o : OPTIONS) {
      if (!values.get(o).equals(other.values.get(o))) {
        out.add(o.name());
      }
    }
    return out;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof QueueOptions q && values.equals(q.values);
  }

  @Override
  public int hashCode() {
    return Objects.hash(values);
  }

  @Override
  public String toString() {
    return "QueueOptions" + asMap();
  }

  public Duration ackWait() {
    return get(ACK_WAIT);
  }

  /** The longest hold of one attempt by extensions, from its fire: max_hold, or 10 × ack_wait. */
  public Duration maxHold() {
    Duration d = get(MAX_HOLD);
    return d.isZero() ? ackWait().multipliedBy(10) : d;
  }

  public Duration minBackoff() {
    return get(MIN_BACKOFF);
  }

  public Duration maxBackoff() {
    return get(MAX_BACKOFF);
  }

  public int maxAttempts() {
    return get(MAX_ATTEMPTS);
  }

  /**
   * Whether attempt number {@code attempts} used up an event's {@code maxAttempts}. Epochs never go
   * back past an attempt that was sent; an operator's replay of a dead event keeps its epoch, so
   * each life of an event is {@code max_attempts} attempts long: it dies at every multiple.
   */
  public static boolean isLastAttempt(long attempts, int maxAttempts) {
    return attempts >= maxAttempts && attempts % maxAttempts == 0;
  }

  public int maxSnoozes() {
    return get(MAX_SNOOZES);
  }

  public Duration purgeAfter() {
    return get(PURGE_AFTER);
  }

  public Duration dedupWindow() {
    return get(DEDUP_WINDOW);
  }

  public int cacheSize() {
    return get(CACHE_SIZE);
  }

  public Duration pollInterval() {
    return get(POLL_INTERVAL);
  }

  public int maxQps() {
    return get(MAX_QPS);
  }

  public int maxConcurrency() {
    return get(MAX_CONCURRENCY);
  }

  public int maxReceiversPerTenant() {
    return get(MAX_RECEIVERS_PER_TENANT);
  }

  public boolean fair() {
    return get(FAIR);
  }

  public int tenantCacheShare() {
    return get(TENANT_CACHE_SHARE);
  }

  public int tenantMaxInFlight() {
    return get(TENANT_MAX_IN_FLIGHT);
  }

  public int tenantMaxRate() {
    return get(TENANT_MAX_RATE);
  }

  public int tenantBurst() {
    return get(TENANT_BURST);
  }

  public int tenantReserve() {
    return get(TENANT_RESERVE);
  }

  public int actorMaxDepth() {
    return get(ACTOR_MAX_DEPTH);
  }

  public Map<String, Integer> classShares() {
    return get(CLASS_SHARES);
  }

  /** At most {@code QueueOptionKeys.EVENT_BYTES_LIMIT}, so an int. */
  public int maxEventBytes() {
    return Math.toIntExact(get(MAX_EVENT_BYTES));
  }

  public long cacheBytes() {
    return get(CACHE_BYTES);
  }

  public String channel() {
    return get(CHANNEL);
  }

  public String channelTarget() {
    return get(CHANNEL_TARGET);
  }

  public String channelRoutingKey() {
    return get(CHANNEL_ROUTING_KEY);
  }

  public String channelTargetColumn() {
    return get(CHANNEL_TARGET_COLUMN);
  }

  public String channelKeyColumn() {
    return get(CHANNEL_KEY_COLUMN);
  }

  public String channelBody() {
    return get(CHANNEL_BODY);
  }

  public boolean channelReceivers() {
    return get(CHANNEL_RECEIVERS);
  }

  public String ordering() {
    return get(ORDERING);
  }

  public String orderingColumn() {
    return get(ORDERING_COLUMN);
  }

  /** Events of one key in flight at once per shard (0: no limit); see KEY_MAX_IN_FLIGHT. */
  public int keyMaxInFlight() {
    return get(KEY_MAX_IN_FLIGHT);
  }

  /** Whether events are counted per key ({@code key_max_in_flight} without ordering). */
  public boolean keyLimited() {
    return keyMaxInFlight() > 0 && !ordered();
  }

  public String orderingOnDead() {
    return get(ORDERING_ON_DEAD);
  }

  public String groupOnDead() {
    return get(GROUP_ON_DEAD);
  }

  /** Whether events are ordered: {@code ordering=key} or {@code ordering=queue}. */
  public boolean ordered() {
    String ordering = ordering();
    return !ORDERING_NONE.equals(ordering) && !ordering.isEmpty();
  }

  /** Whether the whole queue is one key ({@code ordering=queue}). */
  public boolean orderedAsOneKey() {
    return ORDERING_QUEUE.equals(ordering());
  }

  /** Whether a dead event stops its key ({@code ordering_on_dead=halt}). */
  public boolean haltOnDead() {
    return ordered() && ON_DEAD_HALT.equals(orderingOnDead());
  }

  /** Whether a dead child completes its group at once ({@code group_on_dead=fail_fast}). */
  public boolean groupFailFast() {
    return GROUP_FAIL_FAST.equals(groupOnDead());
  }

  /** The window slots one tenant may hold: tenant_cache_share of cache_size, at least one. */
  public int tenantCacheCap() {
    return Math.max(1, (int) ((long) cacheSize() * tenantCacheShare() / 100));
  }
}
