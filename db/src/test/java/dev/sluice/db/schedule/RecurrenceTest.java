package dev.sluice.db.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Occurrence times of cron and interval schedules, in the schedule's zone. */
class RecurrenceTest {
  static long ns(String instant) {
    Instant i = Instant.parse(instant);
    return i.getEpochSecond() * 1_000_000_000L + i.getNano();
  }

  static String at(long ns) {
    return Instant.ofEpochSecond(0, ns).toString();
  }

  static List<String> occurrences(Recurrence r, String from, int n) {
    List<String> out = new ArrayList<>();
    long t = r.first(ns(from));
    for (int i = 0; i < n; i++) {
      out.add(at(t));
      t = r.next(t);
    }
    return out;
  }

  /**
   * A daily 02:30 in Europe/Berlin across the March change (2026-03-29, 02:00 CET becomes 03:00
   * CEST, so 02:30 does not exist that day): 02:30 local before and after — 01:30Z in winter,
   * 00:30Z in summer — and on the day of the change cron-utils skips the time that does not exist,
   * as crontab does for a time inside the gap.
   */
  @Test
  void aDailyCronFollowsTheZoneAcrossTheSpringChange() {
    Recurrence r = Recurrence.cron("30 2 * * *", "Europe/Berlin");
    assertThat(occurrences(r, "2026-03-27T12:00:00Z", 4))
        .containsExactly(
            "2026-03-28T01:30:00Z", // 02:30 CET
            "2026-03-30T00:30:00Z", // 02:30 CEST; none on the 29th
            "2026-03-31T00:30:00Z",
            "2026-04-01T00:30:00Z");
    // A time outside the gap is there every day.
    assertThat(
            occurrences(Recurrence.cron("30 3 * * *", "Europe/Berlin"), "2026-03-28T12:00:00Z", 2))
        .containsExactly("2026-03-29T01:30:00Z", "2026-03-30T01:30:00Z");
  }

  /** The October change repeats 02:00-03:00 local: 02:30 happens twice, the schedule fires once. */
  @Test
  void aDailyCronFiresOnceOnTheAutumnChange() {
    Recurrence r = Recurrence.cron("30 2 * * *", "Europe/Berlin");
    List<String> got = occurrences(r, "2026-10-24T12:00:00Z", 3);
    assertThat(got.get(0)).isIn("2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z");
    assertThat(got.subList(1, 3)).containsExactly("2026-10-26T01:30:00Z", "2026-10-27T01:30:00Z");
  }

  @Test
  void hourlyCronInAZoneIsHourlyInUtcAcrossTheChange() {
    Recurrence r = Recurrence.cron("0 * * * *", "Europe/Berlin");
    List<String> got = occurrences(r, "2026-03-29T00:00:00Z", 4);
    assertThat(got)
        .containsExactly(
            "2026-03-29T00:00:00Z",
            "2026-03-29T01:00:00Z",
            "2026-03-29T02:00:00Z",
            "2026-03-29T03:00:00Z");
  }

  @Test
  void sixFieldsHaveSecondsFirst() {
    Recurrence r = Recurrence.cron("*/15 * * * * *", "UTC");
    assertThat(occurrences(r, "2026-01-01T00:00:01Z", 3))
        .containsExactly("2026-01-01T00:00:15Z", "2026-01-01T00:00:30Z", "2026-01-01T00:00:45Z");
  }

  @Test
  void anIntervalCountsFromItsFirstOccurrence() {
    Recurrence r = Recurrence.every(Duration.ofSeconds(90));
    assertThat(occurrences(r, "2026-01-01T00:00:00Z", 3))
        .containsExactly("2026-01-01T00:00:00Z", "2026-01-01T00:01:30Z", "2026-01-01T00:03:00Z");
    assertThat(at(r.lastBefore(ns("2026-01-01T00:00:00Z"), ns("2026-01-01T00:10:00Z"))))
        .isEqualTo("2026-01-01T00:09:00Z");
  }

  @Test
  void badExpressionsAndZonesAreNamed() {
    assertThatThrownBy(() -> Recurrence.cron("61 * * * *", "UTC"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("bad cron expression '61 * * * *'");
    assertThatThrownBy(() -> Recurrence.cron("* * *", "UTC"))
        .hasMessageContaining("bad cron expression '* * *'")
        .hasMessageContaining("3 fields");
    assertThatThrownBy(() -> Recurrence.cron("0 3 * * *", "Mars/Olympus"))
        .hasMessageContaining("unknown time zone 'Mars/Olympus'");
    assertThatThrownBy(() -> Recurrence.every(Duration.ofMillis(5)))
        .hasMessageContaining("at least 100 ms");
  }
}
