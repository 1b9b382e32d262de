package dev.sluice.db.schedule;

import com.cronutils.model.Cron;
import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.Optional;

/**
 * When a schedule's occurrences fall: a cron expression read in a time zone (parsed and evaluated
 * by cron-utils), or a fixed interval. Times are ns since the epoch, as {@code time_next}.
 * Immutable and thread-safe.
 *
 * <p>Cron expressions have 5 fields (minute, hour, day of month, month, day of week: crontab's) or
 * 6 (seconds first, as Spring's {@code @Scheduled}). They are evaluated in the schedule's zone, so
 * a daily 02:30 stays at 02:30 local time across daylight-saving changes; on the day a change skips
 * or repeats that local time, what cron-utils computes is what happens (README, "Recurring
 * events").
 *
 * <p>An interval schedule's occurrences are {@code every} apart, counted from its first occurrence
 * (time zones do not apply).
 */
public final class Recurrence {
  private static final CronParser UNIX =
      new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.UNIX));
  private static final CronParser SECONDS =
      new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.SPRING));

  private static final long S = 1_000_000_000L;

  /** The shortest interval allowed. */
  public static final Duration MIN_EVERY = Duration.ofMillis(100);

  private final String cron;
  private final ExecutionTime execution;
  private final long everyNs;
  private final ZoneId zone;

  private Recurrence(String cron, ExecutionTime execution, long everyNs, ZoneId zone) {
    this.cron = cron;
    this.execution = execution;
    this.everyNs = everyNs;
    this.zone = zone;
  }

  /**
   * A cron schedule.
   *
   * @throws IllegalArgumentException naming the expression (or the zone) when it is not valid
   */
  public static Recurrence cron(String expression, String zone) {
    ZoneId z = zone(zone);
    if (expression == null || expression.isBlank()) {
      throw new IllegalArgumentException("the cron expression is empty");
    }
    String e = expression.strip().replaceAll("\\s+", " ");
    int fields = e.split(" ").length;
    CronParser parser =
        switch (fields) {
          case 5 -> UNIX;
          case 6 -> SECONDS;
          default ->
              throw new IllegalArgumentException(
                  "bad cron expression '"
                      + expression
                      + "': it has "
                      + fields
                      + " fields; use 5 (minute hour day-of-month month day-of-week) or 6 (seconds"
                      + " first)");
        };
    Cron parsed;
    try {
      parsed = parser.parse(e).validate();
    } catch (IllegalArgumentException ex) {
      throw new IllegalArgumentException(
          "bad cron expression '" + expression + "': " + ex.getMessage(), ex);
    }
    return new Recurrence(e, ExecutionTime.forCron(parsed), 0, z);
  }

  /** An interval schedule; {@code every} must be at least {@link #MIN_EVERY}. */
  public static Recurrence every(Duration every) {
    if (every == null || every.compareTo(MIN_EVERY) < 0) {
      throw new IllegalArgumentException(
          "the interval must be at least " + MIN_EVERY.toMillis() + " ms, was " + every);
    }
    return new Recurrence(null, null, every.toNanos(), ZoneId.of("UTC"));
  }

  /** An IANA zone id; null or blank is UTC. */
  public static ZoneId zone(String zone) {
    if (zone == null || zone.isBlank()) {
      return ZoneId.of("UTC");
    }
    try {
      return ZoneId.of(zone.strip());
    } catch (DateTimeException e) {
      throw new IllegalArgumentException(
          "unknown time zone '" + zone + "' (use an IANA id such as Europe/Berlin)", e);
    }
  }

  public boolean isCron() {
    return cron != null;
  }

  /** The cron expression, or null for an interval. */
  public String cronExpression() {
    return cron;
  }

  /** The interval, or null for a cron schedule. */
  public Duration every() {
    return cron == null ? Duration.ofNanos(everyNs) : null;
  }

  public ZoneId zone() {
    return zone;
  }

  /**
   * The first occurrence strictly after {@code afterNs} (a cron schedule), or {@code afterNs +
   * every} (an interval, counted from its previous occurrence {@code afterNs}). {@link
   * Long#MAX_VALUE} when a cron expression has no later occurrence.
   */
  public long next(long afterNs) {
    if (cron == null) {
      return afterNs + everyNs;
    }
    // Cron times are whole seconds: from the second that contains afterNs (what cron-utils is
    // given keeps its fraction otherwise).
    Optional<ZonedDateTime> n = execution.nextExecution(at(Math.floorDiv(afterNs, S) * S));
    return n.map(Recurrence::ns).orElse(Long.MAX_VALUE);
  }

  /**
   * The first occurrence at or after {@code fromNs}, for a schedule that starts (or resumes) then:
   * a cron schedule's next time; an interval's first occurrence is {@code fromNs} itself.
   */
  public long first(long fromNs) {
    return cron == null ? fromNs : next(fromNs - 1);
  }

  /**
   * The occurrence of the same series as {@code knownNs} that is the last one before {@code
   * beforeNs} (exclusive), or {@code knownNs} when none after it is. Used to jump over a long
   * downtime without walking every occurrence.
   */
  public long lastBefore(long knownNs, long beforeNs) {
    if (beforeNs <= knownNs) {
      return knownNs;
    }
    if (cron == null) {
      long steps = (beforeNs - 1 - knownNs) / everyNs;
      return knownNs + steps * everyNs;
    }
    Optional<ZonedDateTime> l = execution.lastExecution(at(-Math.floorDiv(-beforeNs, S) * S));
    return l.map(Recurrence::ns).filter(t -> t > knownNs && t < beforeNs).orElse(knownNs);
  }

  private ZonedDateTime at(long ns) {
    return Instant.ofEpochSecond(
            Math.floorDiv(ns, 1_000_000_000L), Math.floorMod(ns, 1_000_000_000L))
        .atZone(zone);
  }

  private static long ns(ZonedDateTime t) {
    Instant i = t.withNano(0).toInstant();
    return i.getEpochSecond() * 1_000_000_000L + i.getNano();
  }

  @Override
  public String toString() {
    return cron != null ? "cron '" + cron + "' in " + zone : "every " + every();
  }
}
