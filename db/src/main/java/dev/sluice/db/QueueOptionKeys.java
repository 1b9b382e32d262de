package dev.sluice.db;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Every queue option, each defined once as a typed {@link QueueOption}: its name, default, bounds,
 * parsing, whether a change applies in place, and its meaning. {@link QueueOptions} holds one value
 * per key; its accessors ({@code ackWait()}, ...) read them, the README's table ({@link
 * QueueOptionsDoc}) and the restart list are derived from {@link #ALL}.
 *
 * <p>Only compile-time constants of {@link QueueOptions} are read here, so that initializing either
 * class first never sees the other half-initialized.
 */
public final class QueueOptionKeys {
  private QueueOptionKeys() {}

  /** The longest backoff: a day, so deadlines never reach the end of a long. */
  static final Duration MAX_BACKOFF_LIMIT = Duration.ofDays(1);

  /** The longest purge_after and dedup_window. */
  static final Duration MAX_PURGE_AFTER = Duration.ofDays(365);

  /**
   * The largest event: one still fits a message of {@link QueueOptions#MAX_MESSAGE_BYTES} alone,
   * with what a batch message adds to its events.
   */
  static final long EVENT_BYTES_LIMIT =
      QueueOptions.MAX_MESSAGE_BYTES - QueueOptions.MESSAGE_OVERHEAD_BYTES;

  /** A channel's name, as the manager's configuration and {@code channel=} write it. */
  static final Pattern CHANNEL_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

  private static final Pattern COLUMN = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,63}");

  /** At most a day, as the backoffs, so that deadlines never reach the end of a long. */
  public static final QueueOption<Duration> ACK_WAIT =
      QueueOption.duration(
              "ack_wait", Duration.ofSeconds(30), Duration.ofMillis(100), Duration.ofDays(1))
          .appliedInPlace()
          .doc(
              "how long a receiver may hold an event before it is retried (a change applies"
                  + " to later fires). *Consider tuning*: above your slowest handling");

  /** 0: ten times ack_wait ({@link QueueOptions#maxHold()}). */
  public static final QueueOption<Duration> MAX_HOLD =
      QueueOption.duration("max_hold", Duration.ZERO, Duration.ZERO, Duration.ofDays(7))
          .appliedInPlace()
          .doc(
              "the longest a receiver may hold one attempt of an event by extending its deadline,"
                  + " counted from its fire (0: ten times ack_wait). An extension beyond it is"
                  + " answered LIMIT and the deadline stays at fire + max_hold, so a stuck handler"
                  + " cannot keep an event forever");

  public static final QueueOption<Duration> MIN_BACKOFF =
      QueueOption.duration("min_backoff", Duration.ofSeconds(1), Duration.ZERO, MAX_BACKOFF_LIMIT)
          .appliedInPlace()
          .doc("first retry delay after a nack, timeout or broken stream");

  public static final QueueOption<Duration> MAX_BACKOFF =
      QueueOption.duration("max_backoff", Duration.ofMinutes(5), Duration.ZERO, MAX_BACKOFF_LIMIT)
          .appliedInPlace()
          .boundsNote("≥ `min_backoff`")
          .doc("retry delays double per attempt up to this (with jitter); never unbounded");

  public static final QueueOption<Integer> MAX_ATTEMPTS =
      QueueOption.count("max_attempts", 20, 1, 10_000)
          .appliedInPlace()
          .doc("after this many attempts the event becomes `dead`");

  public static final QueueOption<Integer> MAX_SNOOZES =
      QueueOption.count("max_snoozes", 100, 0, 1_000_000)
          .appliedInPlace()
          .doc(
              "the most times one event may be snoozed (put back to pending by its handler"
                  + " without spending an attempt; needs the `snoozes` column); past it, a snooze"
                  + " counts as a failed attempt");

  public static final QueueOption<Duration> PURGE_AFTER =
      QueueOption.duration("purge_after", Duration.ofDays(1), Duration.ZERO, MAX_PURGE_AFTER)
          .appliedInPlace()
          .doc(
              "acked and cancelled rows are deleted this long after settling, in batches of"
                  + " 1000");

  /** How long a settled row keeps its dedup key at least; zero: as long as purge_after. */
  public static final QueueOption<Duration> DEDUP_WINDOW =
      QueueOption.duration("dedup_window", Duration.ZERO, Duration.ZERO, MAX_PURGE_AFTER)
          .appliedInPlace()
          .doc(
              "acked and cancelled rows that carry a `dedup_key` are kept this long after"
                  + " settling when it is longer than `purge_after`, so their key stays taken"
                  + " that long ([deduplication](#deduplication)); 0: `purge_after`");

  public static final QueueOption<Integer> CACHE_SIZE =
      QueueOption.count("cache_size", 10_000, 1, 1_000_000)
          .doc("events held in memory per queue (the window)");

  public static final QueueOption<Duration> POLL_INTERVAL =
      QueueOption.duration(
              "poll_interval", Duration.ofMillis(100), Duration.ofMillis(1), Duration.ofMinutes(1))
          .appliedInPlace()
          .doc(
              "the longest pause between polls of an idle table; busy tables are polled every"
                  + " 2 ms, and a full window re-polls as soon as it drains. *Rarely tuned*");

  public static final QueueOption<Integer> MAX_QPS =
      QueueOption.count("max_qps", 0, 0, QueueOptions.MAX_RATE)
          .appliedInPlace()
          .doc(
              "at most this many events fired a second, per queue on each shard, in bursts of"
                  + " at most a tenth of a second's worth (0 = no limit)");

  public static final QueueOption<Integer> MAX_CONCURRENCY =
      QueueOption.count("max_concurrency", 0, 0, QueueOptions.MAX_RATE)
          .appliedInPlace()
          .doc("cap on events in flight for the queue across receivers (0 = none)");

  public static final QueueOption<Integer> MAX_RECEIVERS_PER_TENANT =
      QueueOption.count("max_receivers_per_tenant", 0, 0, 10_000)
          .doc(
              "shuffle sharding: each tenant goes to a stable subset of this many receivers"
                  + " (0 = all)");

  public static final QueueOption<Boolean> FAIR =
      QueueOption.bool("fair", true)
          .doc(
              "tenants take turns (see [Fairness](#fairness)); `false` is one FIFO by"
                  + " (priority, time) across tenants: `tenant_max_in_flight` and the"
                  + " `tenant_limits`' `max_in_flight` still hold, and an event no receiver"
                  + " accepts (or of a tenant at its cap) waits aside while the events behind"
                  + " it go; the window shares (`tenant_cache_share`, `cache_share`) apply"
                  + " only with `true`");

  /** Percent of the window one tenant may hold, so a backlog cannot hide others' events. */
  public static final QueueOption<Integer> TENANT_CACHE_SHARE =
      QueueOption.percent("tenant_cache_share", 50, 1, 100)
          .doc(
              "the most of the window one tenant may hold, so its backlog cannot hide"
                  + " others' events");

  public static final QueueOption<Integer> TENANT_MAX_IN_FLIGHT =
      QueueOption.count("tenant_max_in_flight", 0, 0, QueueOptions.MAX_RATE)
          .doc("cap on one tenant's events in flight (0 = none)");

  public static final QueueOption<Integer> TENANT_MAX_RATE =
      QueueOption.count("tenant_max_rate", 0, 0, QueueOptions.MAX_RATE)
          .doc(
              "at most this many events of one tenant fired a second, on each shard (0 = none);"
                  + " a tenant at its rate waits aside while the others' events go. Per tenant:"
                  + " `max_rate` in the manager's `tenant_limits`");

  public static final QueueOption<Integer> TENANT_BURST =
      QueueOption.count("tenant_burst", 0, 0, QueueOptions.MAX_RATE)
          .doc(
              "with `tenant_max_rate`: how many of a tenant's events may go at once after it was"
                  + " quiet (0 = a tenth of a second's worth, at least 1)");

  /**
   * Percent of all receivers' credits kept free for tenants with nothing in flight while other
   * tenants are busy, so that a quiet tenant's event goes out at once instead of after an ack.
   */
  public static final QueueOption<Integer> TENANT_RESERVE =
      QueueOption.percent("tenant_reserve", 10, 0, 50)
          .doc(
              "share of all receivers' credits (rounded, at least one unless 0%) kept free"
                  + " for tenants with nothing in flight while others are busy: their events"
                  + " go out at once, at the cost of that much of a busy tenant's throughput"
                  + " (see [Fairness](#fairness))");

  public static final QueueOption<Integer> ACTOR_MAX_DEPTH =
      QueueOption.count("actor_max_depth", 4, 1, 16).doc("how deep an `actor` path may go");

  public static final QueueOption<Map<String, Integer>> CLASS_SHARES =
      QueueOption.classShares("class_shares")
          .doc(
              "e.g. `slow:25,batch:50`: a work class may hold at most this percent of a"
                  + " receiver's credits");

  /**
   * An event (its columns and Sluice's fields, as sent) larger than this goes dead with "too large"
   * instead of being sent: 1 MiB, the common limit of message brokers.
   */
  public static final QueueOption<Long> MAX_EVENT_BYTES =
      QueueOption.bytes("max_event_bytes", 1024 * 1024, 1024, EVENT_BYTES_LIMIT)
          .appliedInPlace()
          .doc(
              "the largest event (its columns plus Sluice's fields, as sent): a larger one"
                  + " goes `dead` with the reason `too large: N bytes > limit`, never fired."
                  + " Events go to a receiver in messages of at most 4 MiB, gRPC's default"
                  + " inbound limit, which the Java SDK sets explicitly; another client must"
                  + " accept messages of 4 MiB");

  /** The bytes of events the window may hold, besides cache_size events: 64 MiB. */
  public static final QueueOption<Long> CACHE_BYTES =
      QueueOption.bytes("cache_bytes", 64L * 1024 * 1024, 64L * 1024, 16L * 1024 * 1024 * 1024)
          .boundsNote("≥ `max_event_bytes`")
          .doc(
              "bytes of events held in memory per queue: the window stops at whichever of"
                  + " `cache_size` and this it reaches first, and the poller sizes its reads"
                  + " by the largest rows it has seen lately, so large rows cannot exhaust"
                  + " the heap");

  // a channel's outlet is built from the channel options when the queue starts
  public static final QueueOption<String> CHANNEL =
      QueueOption.text(
              "channel",
              "",
              CHANNEL_NAME,
              "a channel of the manager's configuration: 1-64 letters, digits, '.', '_' or"
                  + " '-'")
          .shownDefault("none")
          .doc(
              "publish this queue's events to that broker channel"
                  + " ([channels](#channel-options-publishing-to-kafka-or-rabbitmq)); none:"
                  + " gRPC receivers only");

  public static final QueueOption<String> CHANNEL_TARGET =
      QueueOption.text(
              "channel_target",
              "",
              Pattern.compile("[A-Za-z0-9._:-]{1,255}"),
              "a Kafka topic or RabbitMQ exchange: 1-255 letters, digits, '.', '_', ':' or"
                  + " '-' (empty: the default)")
          .shownDefault("the queue's name (Kafka), the default exchange (RabbitMQ)")
          .doc(
              "the Kafka topic, or the RabbitMQ exchange; `channel_target=` (empty) is the"
                  + " default");

  public static final QueueOption<String> CHANNEL_ROUTING_KEY =
      QueueOption.text(
              "channel_routing_key",
              "",
              Pattern.compile("[A-Za-z0-9._:/@+-]{1,255}"),
              "a RabbitMQ routing key: 1-255 letters, digits, '.', '_', ':', '/', '@', '+'"
                  + " or '-' (empty: the queue's name)")
          .shownDefault("the queue's name")
          .doc("RabbitMQ only: the routing key");

  public static final QueueOption<String> CHANNEL_TARGET_COLUMN =
      QueueOption.text("channel_target_column", "", COLUMN, "a column name")
          .shownDefault("none")
          .doc(
              "the column naming each event's Kafka topic or RabbitMQ routing key; its value"
                  + " must be one of the channel's `allowed_targets`");

  public static final QueueOption<String> CHANNEL_KEY_COLUMN =
      QueueOption.text(
              "channel_key_column",
              "",
              COLUMN,
              "a column name (empty: the ordering key or the tenant)")
          .shownDefault("the ordering key, else the tenant")
          .doc(
              "Kafka only: the column holding the record key; when empty, an ordered queue's"
                  + " records are keyed by their [ordering key](#ordered-delivery) (one"
                  + " partition per key, in `id` order) and others by the tenant");

  public static final QueueOption<String> CHANNEL_BODY =
      QueueOption.text(
              "channel_body",
              QueueOptions.BODY_JSON,
              COLUMN,
              QueueOptions.BODY_JSON + " or a column name")
          .doc(
              "the message body: a JSON object of the user columns, or one column's value as"
                  + " it is");

  public static final QueueOption<Boolean> CHANNEL_RECEIVERS =
      QueueOption.bool("channel_receivers", false)
          .doc("whether gRPC receivers may subscribe to a channel-bound queue as well");

  public static final QueueOption<String> ORDERING =
      QueueOption.text(
              "ordering",
              QueueOptions.ORDERING_NONE,
              Pattern.compile("none|key|queue"),
              "none, key or queue")
          .doc(
              "[ordered delivery](#ordered-delivery): `key` delivers the events that share"
                  + " the `ordering_column`'s value one at a time, in `id` order; `queue`"
                  + " makes the whole queue one key; `none` delivers in parallel");

  public static final QueueOption<String> ORDERING_COLUMN =
      QueueOption.text("ordering_column", QueueConvention.ORDERING_KEY, COLUMN, "a column name")
          .doc(
              "with `ordering=key` or `key_max_in_flight`: the column holding the key (an"
                  + " integer, or a CHAR or VARCHAR of at most 255 characters, with an index on"
                  + " (column, `state`)); a row whose key is NULL is not ordered nor limited");

  public static final QueueOption<Integer> KEY_MAX_IN_FLIGHT =
      QueueOption.count("key_max_in_flight", 0, 0, QueueOptions.MAX_RATE)
          .doc(
              "[concurrency per key](#concurrency-per-key): at most this many events sharing the"
                  + " `ordering_column`'s value in flight at once on each shard, in any order (0 ="
                  + " no limit; 1 without `ordering` is a mutex per key; with `ordering` only 0 or"
                  + " 1). Needs the column and its index on (column, `state`)");

  public static final QueueOption<String> ORDERING_ON_DEAD =
      QueueOption.text(
              "ordering_on_dead",
              QueueOptions.ON_DEAD_SKIP,
              Pattern.compile("skip|halt"),
              "skip or halt")
          .doc(
              "when a key's event goes `dead`: `skip` lets the next event of the key go;"
                  + " `halt` stops the key until the dead event is replayed or skipped"
                  + " (`sluice ordering`)");

  public static final QueueOption<String> GROUP_ON_DEAD =
      QueueOption.text(
              "group_on_dead",
              QueueOptions.GROUP_WAIT_ALL,
              Pattern.compile("wait_all|fail_fast"),
              "wait_all or fail_fast")
          .doc(
              "for a queue of [completion events](#event-groups): when a child of the group"
                  + " goes `dead`, `wait_all` counts it and waits for the other children;"
                  + " `fail_fast` releases the completion event at once");

  /**
   * Every option, in the order the docs list them: parsing, defaults, bounds, the in-place or
   * restart rule and the README's table come from here.
   */
  public static final List<QueueOption<?>> ALL =
      List.of(
          ACK_WAIT,
          MAX_HOLD,
          MIN_BACKOFF,
          MAX_BACKOFF,
          MAX_ATTEMPTS,
          MAX_SNOOZES,
          PURGE_AFTER,
          DEDUP_WINDOW,
          CACHE_SIZE,
          POLL_INTERVAL,
          MAX_QPS,
          MAX_CONCURRENCY,
          MAX_RECEIVERS_PER_TENANT,
          FAIR,
          TENANT_CACHE_SHARE,
          TENANT_MAX_IN_FLIGHT,
          TENANT_MAX_RATE,
          TENANT_BURST,
          TENANT_RESERVE,
          ACTOR_MAX_DEPTH,
          CLASS_SHARES,
          MAX_EVENT_BYTES,
          CACHE_BYTES,
          CHANNEL,
          CHANNEL_TARGET,
          CHANNEL_ROUTING_KEY,
          CHANNEL_TARGET_COLUMN,
          CHANNEL_KEY_COLUMN,
          CHANNEL_BODY,
          CHANNEL_RECEIVERS,
          ORDERING,
          ORDERING_COLUMN,
          KEY_MAX_IN_FLIGHT,
          ORDERING_ON_DEAD,
          GROUP_ON_DEAD);
}
