package dev.sluice.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class QueueOptionsTest {
  @Test
  void bareMarkerGivesDefaults() {
    assertThat(QueueOptions.parseComment("q", "sluice_queue")).isEqualTo(QueueOptions.defaults());
  }

  @Test
  void parsesEveryUnit() {
    QueueOptions o =
        QueueOptions.parseComment(
            "q",
            "sluice_queue ack_wait=1500ms min_backoff=2s max_backoff=5m purge_after=7d"
                + " poll_interval=20ms max_attempts=3 cache_size=100");
    assertThat(o.ackWait()).isEqualTo(Duration.ofMillis(1500));
    assertThat(o.minBackoff()).isEqualTo(Duration.ofSeconds(2));
    assertThat(o.maxBackoff()).isEqualTo(Duration.ofMinutes(5));
    assertThat(o.purgeAfter()).isEqualTo(Duration.ofDays(7));
    assertThat(o.pollInterval()).isEqualTo(Duration.ofMillis(20));
    assertThat(o.maxAttempts()).isEqualTo(3);
    assertThat(o.cacheSize()).isEqualTo(100);
    assertThat(QueueOptions.parseComment("q", "sluice_queue max_backoff=1h").maxBackoff())
        .isEqualTo(Duration.ofHours(1));
    assertThat(QueueOptions.parseComment("q", "sluice_queue tenant_reserve=0%").tenantReserve())
        .isZero();
    assertThat(QueueOptions.parseComment("q", "sluice_queue tenant_reserve=25").tenantReserve())
        .isEqualTo(25);
  }

  @Test
  void roundTripsThroughComment() {
    QueueOptions o = QueueOptions.parseComment("q", "sluice_queue ack_wait=5s max_attempts=4");
    assertThat(o.toComment()).isEqualTo("sluice_queue ack_wait=5s max_attempts=4");
    assertThat(QueueOptions.parseComment("q", o.toComment())).isEqualTo(o);
  }

  @Test
  void recognisesTheMarkerOnlyAsAWord() {
    assertThat(QueueOptions.isQueueComment("sluice_queue")).isTrue();
    assertThat(QueueOptions.isQueueComment("  sluice_queue ack_wait=1s")).isTrue();
    assertThat(QueueOptions.isQueueComment("sluice_queues")).isFalse();
    assertThat(QueueOptions.isQueueComment("orders table")).isFalse();
    assertThat(QueueOptions.isQueueComment(null)).isFalse();
  }

  @Test
  void rejectsMalformedCommentsNamingTableAndOption() {
    assertThatThrownBy(() -> QueueOptions.parseComment("orders_q", "sluice_queue ack_wiat=30s"))
        .isInstanceOf(QueueConfigException.class)
        .hasMessageContaining("orders_q")
        .hasMessageContaining("unknown option 'ack_wiat'")
        .hasMessageContaining("ack_wait");
    assertThatThrownBy(() -> QueueOptions.parseComment("q", "sluice_queue ack_wait=30"))
        .hasMessageContaining("ack_wait")
        .hasMessageContaining("unit");
    assertThatThrownBy(() -> QueueOptions.parseComment("q", "sluice_queue max_attempts=0"))
        .hasMessageContaining("max_attempts=0 must be at least 1");
    assertThatThrownBy(() -> QueueOptions.parseComment("q", "sluice_queue max_attempts=ten"))
        .hasMessageContaining("not a whole number");
    assertThatThrownBy(
            () -> QueueOptions.parseComment("q", "sluice_queue min_backoff=10s max_backoff=1s"))
        .hasMessageContaining("max_backoff (1s) is less than min_backoff (10s)");
    assertThatThrownBy(() -> QueueOptions.parseComment("q", "sluice_queue tenant_reserve=60%"))
        .hasMessageContaining("tenant_reserve='60%' must be a percentage from 0% to 50%");
    assertThatThrownBy(() -> QueueOptions.parseComment("q", "sluice_queue tenant_cache_share=0%"))
        .hasMessageContaining("tenant_cache_share='0%' must be a percentage from 1% to 100%");
    assertThatThrownBy(() -> QueueOptions.parseComment("q", "sluice_queue ack_wait"))
        .hasMessageContaining("not key=value");
    assertThatThrownBy(() -> QueueOptions.parseComment("q", "sluice_queue ack_wait=1s ack_wait=2s"))
        .hasMessageContaining("given twice");
  }

  @Test
  void everyOptionHasBoundsAndHugeValuesNeverOverflow() {
    assertThatThrownBy(
            () -> QueueOptions.parseComment("q", "sluice_queue ack_wait=999999999999999d"))
        .isInstanceOf(QueueConfigException.class)
        .hasMessageContaining("ack_wait=999999999999999d is too large: at most 1d");
    assertThatThrownBy(
            () ->
                QueueOptions.parseComment(
                    "q",
                    "sluice_queue ack_wait=100000d max_attempts=99999999999999999999999"
                        + " cache_size=2000000000 poll_interval=2h purge_after=400d"
                        + " max_qps=9999999 actor_max_depth=17"))
        .hasMessageContaining("ack_wait=100000d is too large: at most 1d")
        .hasMessageContaining("max_attempts=99999999999999999999999 is too large: at most 10000")
        .hasMessageContaining("cache_size=2000000000 is too large: at most 1000000")
        .hasMessageContaining("poll_interval=2h is too large: at most 1m")
        .hasMessageContaining("purge_after=400d is too large: at most 365d")
        .hasMessageContaining("max_qps=9999999 is too large: at most 1000000")
        .hasMessageContaining("actor_max_depth=17 is too large: at most 16");
    for (QueueOptions.Option o : QueueOptions.OPTIONS) {
      assertThat(o.bounds()).as(o.name()).isNotBlank();
    }
  }

  @Test
  void durationsParseWithoutOverflow() {
    assertThat(Durations.parse("1d")).isEqualTo(Duration.ofDays(1));
    assertThatThrownBy(() -> Durations.parse("999999999999999d"))
        .isInstanceOf(Durations.TooLargeException.class)
        .hasMessageContaining("too large");
    assertThatThrownBy(() -> Durations.parse("99999999999999999999999999ms"))
        .isInstanceOf(Durations.TooLargeException.class);
    assertThat(Durations.format(Duration.ofSeconds(Long.MAX_VALUE))).endsWith("s");
  }

  @Test
  void sizesHaveUnitsAndBounds() {
    QueueOptions o =
        QueueOptions.parseComment("q", "sluice_queue max_event_bytes=256KiB cache_bytes=1GiB");
    assertThat(o.maxEventBytes()).isEqualTo(256 * 1024);
    assertThat(o.cacheBytes()).isEqualTo(1L << 30);
    assertThat(o.toComment()).isEqualTo("sluice_queue max_event_bytes=256KiB cache_bytes=1GiB");
    assertThat(QueueOptions.defaults().maxEventBytes()).isEqualTo(1 << 20);
    assertThatThrownBy(() -> QueueOptions.parseComment("q", "sluice_queue max_event_bytes=5MiB"))
        .hasMessageContaining("max_event_bytes=5MiB must be from 1KiB to 4095KiB");
    assertThatThrownBy(() -> QueueOptions.parseComment("q", "sluice_queue cache_bytes=99999GiB"))
        .hasMessageContaining("cache_bytes=99999GiB must be from 64KiB to 16GiB");
    assertThatThrownBy(() -> QueueOptions.parseComment("q", "sluice_queue cache_bytes=1.5MiB"))
        .hasMessageContaining("is not a size");
    assertThatThrownBy(
            () ->
                QueueOptions.parseComment(
                    "q", "sluice_queue cache_bytes=512KiB max_event_bytes=1MiB"))
        .hasMessageContaining("cache_bytes (512KiB) is less than max_event_bytes (1MiB)");
  }
}
