package dev.sluice.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
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
  void keyMaxInFlightIsOneAtMostWithOrderingAndNeedsItsColumnAndIndex() {
    QueueOptions o = QueueOptions.parseComment("q", "sluice_queue key_max_in_flight=3");
    assertThat(o.keyLimited()).isTrue();
    assertThat(o.keyMaxInFlight()).isEqualTo(3);
    assertThat(
            QueueOptions.parseComment("q", "sluice_queue ordering=key key_max_in_flight=1")
                .keyLimited())
        .as("ordering is one at a time already")
        .isFalse();
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> QueueOptions.parseComment("q", "sluice_queue ordering=key key_max_in_flight=2"))
        .hasMessageContaining("queue q")
        .hasMessageContaining("key_max_in_flight=2 with ordering=key");
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> QueueOptions.parseComment("q", "sluice_queue key_max_in_flight=-1"))
        .hasMessageContaining("key_max_in_flight");
    assertThat(
            QueueSchemaValidator.validateOrdering("q", o, java.util.Map.of(), java.util.Map.of()))
        .extracting(SchemaProblem::problem)
        .containsExactly("missing column: key_max_in_flight counts events by it");
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
    for (QueueOption<?> o : QueueOptions.OPTIONS) {
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

  @Test
  void channelOptionsDefaultToNoChannel() {
    QueueOptions d = QueueOptions.defaults();
    assertThat(d.channel()).isEmpty();
    assertThat(d.channelTarget()).isEmpty();
    assertThat(d.channelRoutingKey()).isEmpty();
    assertThat(d.channelTargetColumn()).isEmpty();
    assertThat(d.channelKeyColumn()).isEmpty();
    assertThat(d.channelBody()).isEqualTo("json");
    assertThat(d.channelReceivers()).isFalse();
    assertThat(d.toComment()).isEqualTo("sluice_queue");
    assertThat(QueueOptions.CHANNEL_OPTIONS).allMatch(QueueOptions.NAMES::contains);
  }

  @Test
  void parsesChannelOptionsAndPrintsThemBack() {
    String comment =
        "sluice_queue ack_wait=5s channel=events-kafka channel_target=reminders.due"
            + " channel_routing_key=orders/due:v1 channel_target_column=dest"
            + " channel_key_column=Order_Id channel_body=payload channel_receivers=true";
    QueueOptions o = QueueOptions.parseComment("q", comment);
    assertThat(o.channel()).isEqualTo("events-kafka");
    assertThat(o.channelTarget()).isEqualTo("reminders.due");
    assertThat(o.channelRoutingKey()).isEqualTo("orders/due:v1");
    assertThat(o.channelTargetColumn()).isEqualTo("dest");
    assertThat(o.channelKeyColumn()).isEqualTo("Order_Id");
    assertThat(o.channelBody()).isEqualTo("payload");
    assertThat(o.channelReceivers()).isTrue();
    assertThat(o.toComment()).isEqualTo(comment);
    assertThat(QueueOptions.parseComment("q", o.toComment())).isEqualTo(o);
    assertThat(o.asMap())
        .containsEntry("channel", "events-kafka")
        .containsEntry("channel_body", "payload");
    assertThat(QueueOptions.defaults().changedFrom(o)).contains("channel", "channel_receivers");
    for (String name : QueueOptions.CHANNEL_OPTIONS) {
      assertThat(QueueOptions.option(name).bounds()).as(name).isNotBlank();
    }
  }

  @Test
  void anEmptyTextOptionIsItsDefault() {
    // RabbitMQ's default exchange is named "": channel_target= says it, as does leaving it out.
    QueueOptions o =
        QueueOptions.parseComment("q", "sluice_queue channel=rabbit channel_target= channel_body=");
    assertThat(o.channelTarget()).isEmpty();
    assertThat(o.channelBody()).isEqualTo("json");
    assertThat(o.toComment()).isEqualTo("sluice_queue channel=rabbit");
    // Other kinds still need a value.
    assertThatThrownBy(() -> QueueOptions.parseComment("q", "sluice_queue channel_receivers="))
        .hasMessageContaining("'channel_receivers=' is not key=value");
    assertThatThrownBy(() -> QueueOptions.parseComment("q", "sluice_queue ack_wait="))
        .hasMessageContaining("'ack_wait=' is not key=value");
  }

  @Test
  void rejectsMalformedChannelOptionsNamingEach() {
    assertThatThrownBy(
            () ->
                QueueOptions.parseComment(
                    "orders_q",
                    "sluice_queue channel=-bad channel_target=a/b channel_routing_key=a'b"
                        + " channel_target_column=1dest channel_key_column=a-b"
                        + " channel_body=raw.bytes channel_receivers=yes"))
        .isInstanceOf(QueueConfigException.class)
        .hasMessageContaining("queue orders_q: malformed comment")
        .hasMessageContaining("channel='-bad' must be a channel of the manager's configuration")
        .hasMessageContaining("channel_target='a/b' must be a Kafka topic or RabbitMQ exchange")
        .hasMessageContaining("channel_routing_key='a'b' must be a RabbitMQ routing key")
        .hasMessageContaining("channel_target_column='1dest' must be a column name")
        .hasMessageContaining("channel_key_column='a-b' must be a column name")
        .hasMessageContaining("channel_body='raw.bytes' must be json or a column name")
        .hasMessageContaining("channel_receivers='yes' must be true or false");
    assertThatThrownBy(
            () -> QueueOptions.parseComment("q", "sluice_queue channel_target=" + "t".repeat(256)))
        .hasMessageContaining("must be a Kafka topic or RabbitMQ exchange: 1-255");
    assertThatThrownBy(() -> QueueOptions.parseComment("q", "sluice_queue channel=a channel=b"))
        .hasMessageContaining("option 'channel' is given twice");
  }

  @Test
  void configurationValuesReplaceTheCommentsOwn() {
    QueueOptions fromComment =
        QueueOptions.parseComment("q", "sluice_queue ack_wait=5s channel=a channel_target=t1");
    Map<String, String> conf = new LinkedHashMap<>();
    conf.put("channel", "b");
    conf.put("channel_routing_key", "rk");
    conf.put("channel_receivers", "true");
    QueueOptions o = fromComment.with(conf, "sluice.yaml: queues.q");
    assertThat(o.channel()).isEqualTo("b");
    assertThat(o.channelTarget()).isEqualTo("t1");
    assertThat(o.channelRoutingKey()).isEqualTo("rk");
    assertThat(o.channelReceivers()).isTrue();
    assertThat(o.ackWait()).isEqualTo(Duration.ofSeconds(5));
    assertThat(fromComment.with(Map.of(), "x")).isEqualTo(fromComment);
    assertThatThrownBy(
            () ->
                fromComment.with(
                    Map.of("channel_body", "a b", "chanel", "x"), "sluice.yaml: queues.q"))
        .isInstanceOf(QueueConfigException.class)
        .hasMessageStartingWith("sluice.yaml: queues.q: ")
        .hasMessageContaining("channel_body='a b' must be json or a column name")
        .hasMessageContaining("unknown option 'chanel'");
  }

  @Test
  void eachKeyHoldsItsTypedValueAndItsOneDefault() {
    QueueOptions d = QueueOptions.defaults();
    for (QueueOption<?> key : QueueOptions.OPTIONS) {
      assertThat((Object) d.get(key)).as(key.name()).isEqualTo(key.dflt());
    }
    assertThat(d.ackWait())
        .isEqualTo(QueueOptionKeys.ACK_WAIT.dflt())
        .isEqualTo(Duration.ofSeconds(30));
    assertThat(d.maxAttempts()).isEqualTo(QueueOptionKeys.MAX_ATTEMPTS.dflt()).isEqualTo(20);

    QueueOptions o =
        QueueOptions.parseComment("q", "sluice_queue ack_wait=2s class_shares=slow:25 fair=false");
    Duration ackWait = o.get(QueueOptionKeys.ACK_WAIT);
    assertThat(ackWait).isEqualTo(Duration.ofSeconds(2));
    assertThat(o.get(QueueOptionKeys.CLASS_SHARES)).containsEntry("slow", 25);
    assertThat(o.fair()).isFalse();
    assertThat(o.changedFrom(d)).containsExactly("ack_wait", "fair", "class_shares");
    assertThat(QueueOptions.parseComment("q", o.toComment())).isEqualTo(o);
  }

  @Test
  void everyKeyIsListedOnceInAll() throws Exception {
    java.util.List<QueueOption<?>> declared = new java.util.ArrayList<>();
    for (java.lang.reflect.Field f : QueueOptionKeys.class.getFields()) {
      if (f.getType() == QueueOption.class) {
        declared.add((QueueOption<?>) f.get(null));
      }
    }
    assertThat(QueueOptionKeys.ALL).containsExactlyInAnyOrderElementsOf(declared);
    assertThat(QueueOptions.NAMES).doesNotHaveDuplicates().hasSize(declared.size());
  }
}
