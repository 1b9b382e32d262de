package dev.sluice.manager.channel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.core.outlet.Delivery;
import dev.sluice.db.store.JsonText;
import dev.sluice.manager.config.ChannelConfig;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** How a delivered event becomes a broker message: pure, no broker. */
class ChannelMessagesTest {
  static final ObjectMapper MAPPER =
      new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);
  static final ChannelConfig KAFKA =
      ChannelConfig.kafka("events-kafka", "127.0.0.1:9092")
          .withAllowedTargets(List.of("reminders.due", "payments.timeout"));
  static final ChannelConfig RABBIT =
      ChannelConfig.rabbitmq("events-rabbit", "amqp://guest:guest@127.0.0.1:5672/%2f")
          .withAllowedTargets(List.of("eu.orders", "us.orders"));

  static Delivery delivery(String tenant, Map<String, Object> columns) {
    return new Delivery(
        "s1",
        "orders",
        42,
        3,
        tenant,
        0,
        1_700_000_000_123_456_789L,
        1_699_999_999_000_000_000L,
        1_700_000_000_200_000_000L,
        "",
        List.of(),
        columns);
  }

  static ChannelMessages kafka(String targetColumn, String keyColumn, String bodyColumn) {
    return new ChannelMessages(
        new ChannelBinding(
            "orders", KAFKA, "orders", null, targetColumn, keyColumn, bodyColumn, false));
  }

  static ChannelMessages rabbit(String exchange, String routingKey, String targetColumn) {
    return new ChannelMessages(
        new ChannelBinding(
            "orders", RABBIT, exchange, routingKey, targetColumn, null, null, false));
  }

  static Map<String, Object> everyKind() {
    Map<String, Object> c = new LinkedHashMap<>();
    c.put("big", 9_007_199_254_740_993L); // beyond a double's exact integers
    c.put("small", 7);
    c.put("unsigned", new BigInteger("18446744073709551615"));
    c.put("dbl", 0.1);
    c.put("flt", 1.5f);
    c.put("dec", new BigDecimal("12345678901234567890.123456789"));
    c.put("dec_exp", new BigDecimal("1E+3"));
    c.put("flag", true);
    c.put("bin", new byte[] {0, 1, 2, (byte) 0xff, (byte) 0xfe});
    c.put("doc", new JsonText("{\"a\": [1, 2.50, \"x\"], \"n\": null}"));
    c.put("day", LocalDate.of(2024, 5, 1));
    c.put("at", LocalDateTime.of(2024, 5, 1, 12, 30, 0, 123_000_000));
    c.put("ts", Instant.parse("2024-05-01T10:30:00.000001Z"));
    c.put("span", Duration.ofHours(-1).minusMinutes(30));
    c.put("txt", "héllo \"quoted\"\n");
    c.put("nothing", null);
    return c;
  }

  @Test
  void jsonBodyMapsEveryColumnKind() throws Exception {
    OutboundMessage m = kafka(null, null, null).toMessage(delivery("acme", everyKind()));
    String text = new String(m.body(), StandardCharsets.UTF_8);
    JsonNode n = MAPPER.readTree(m.body());
    assertThat(n.isObject()).isTrue();
    assertThat(n.fieldNames()).toIterable().containsExactlyElementsOf(everyKind().keySet());
    assertThat(n.get("big").isIntegralNumber()).isTrue();
    assertThat(n.get("big").longValue()).isEqualTo(9_007_199_254_740_993L);
    assertThat(n.get("small").intValue()).isEqualTo(7);
    assertThat(n.get("unsigned").bigIntegerValue())
        .isEqualTo(new BigInteger("18446744073709551615"));
    assertThat(n.get("dbl").decimalValue()).isEqualByComparingTo("0.1");
    assertThat(n.get("flt").decimalValue()).isEqualByComparingTo("1.5");
    assertThat(n.get("dec").decimalValue())
        .isEqualTo(new BigDecimal("12345678901234567890.123456789"));
    assertThat(text).contains("\"dec_exp\":1000"); // plain, not 1E+3
    assertThat(n.get("flag").booleanValue()).isTrue();
    assertThat(n.get("bin").isTextual()).isTrue();
    assertThat(Base64.getDecoder().decode(n.get("bin").textValue()))
        .containsExactly(0, 1, 2, 0xff, 0xfe);
    assertThat(n.get("doc")).isEqualTo(MAPPER.readTree("{\"a\": [1, 2.50, \"x\"], \"n\": null}"));
    assertThat(text).contains("\"doc\":{\"a\": [1, 2.50, \"x\"], \"n\": null}"); // as it was
    assertThat(n.get("day").textValue()).isEqualTo("2024-05-01");
    assertThat(n.get("at").textValue()).isEqualTo("2024-05-01T12:30:00.123");
    assertThat(n.get("ts").textValue()).isEqualTo("2024-05-01T10:30:00.000001Z");
    assertThat(Instant.parse(n.get("ts").textValue()))
        .isEqualTo(Instant.parse("2024-05-01T10:30:00.000001Z"));
    assertThat(n.get("span").textValue()).isEqualTo("PT-1H-30M");
    assertThat(Duration.parse(n.get("span").textValue()))
        .isEqualTo(Duration.ofHours(-1).minusMinutes(30));
    assertThat(n.get("txt").textValue()).isEqualTo("héllo \"quoted\"\n");
    assertThat(n.get("nothing").isNull()).isTrue();
  }

  @Test
  void aRowWithNoUserColumnsIsAnEmptyObject() throws Exception {
    OutboundMessage m = kafka(null, null, null).toMessage(delivery("acme", Map.of()));
    assertThat(new String(m.body(), StandardCharsets.UTF_8)).isEqualTo("{}");
  }

  @Test
  void aJsonColumnThatHoldsNoJsonFailsTheEventNotTheBody() {
    Map<String, Object> c = new LinkedHashMap<>();
    c.put("doc", new JsonText("{\"a\": 1"));
    assertThatThrownBy(() -> kafka(null, null, null).toMessage(delivery("acme", c)))
        .isInstanceOf(ChannelMessageException.class)
        .hasMessageStartingWith("queue orders, shard s1, event 42 (attempt 3): JSON column doc")
        .hasMessageContaining("holds no valid JSON");
    c.put("doc", new JsonText("1 2"));
    assertThatThrownBy(() -> kafka(null, null, null).toMessage(delivery("acme", c)))
        .hasMessageContaining("JSON column doc holds more than one JSON value");
  }

  @Test
  void rawBodyIsTheColumnsValue() throws Exception {
    Map<String, Object> c = everyKind();
    assertThat(kafka(null, null, "bin").toMessage(delivery("a", c)).body())
        .containsExactly(0, 1, 2, 0xff, 0xfe);
    assertThat(kafka(null, null, "txt").toMessage(delivery("a", c)).body())
        .isEqualTo("héllo \"quoted\"\n".getBytes(StandardCharsets.UTF_8));
    assertThat(kafka(null, null, "doc").toMessage(delivery("a", c)).body())
        .isEqualTo("{\"a\": [1, 2.50, \"x\"], \"n\": null}".getBytes(StandardCharsets.UTF_8));
    assertThat(body(kafka(null, null, "big").toMessage(delivery("a", c))))
        .isEqualTo("9007199254740993");
    assertThat(body(kafka(null, null, "dec").toMessage(delivery("a", c))))
        .isEqualTo("12345678901234567890.123456789");
    assertThat(body(kafka(null, null, "flag").toMessage(delivery("a", c)))).isEqualTo("true");
    assertThat(body(kafka(null, null, "day").toMessage(delivery("a", c))))
        .isEqualTo("\"2024-05-01\"");
    assertThat(kafka(null, null, "nothing").toMessage(delivery("a", c)).body()).isEmpty();
  }

  @Test
  void aMissingBodyOrKeyColumnFailsTheEventNamingIt() {
    Map<String, Object> c = Map.of("order_id", 5L);
    assertThatThrownBy(() -> kafka(null, null, "payload").toMessage(delivery("acme", c)))
        .isInstanceOf(ChannelMessageException.class)
        .hasMessage(
            "queue orders, shard s1, event 42 (attempt 3): channel_body names column payload,"
                + " which the row does not have (its columns: order_id)");
    assertThatThrownBy(() -> kafka(null, "customer", null).toMessage(delivery("acme", c)))
        .isInstanceOf(ChannelMessageException.class)
        .hasMessageContaining("channel_key_column names column customer, which the row does not");
  }

  @Test
  void theKeyIsTheTenantUnlessAColumnIsNamed() {
    Map<String, Object> c = new LinkedHashMap<>();
    c.put("order_id", 1234L);
    c.put("customer", "cüst-9");
    c.put("raw", new byte[] {9, 8});
    c.put("none", null);
    assertThat(kafka(null, null, null).toMessage(delivery("acme", c)).key())
        .isEqualTo("acme".getBytes(StandardCharsets.UTF_8));
    assertThat(kafka(null, null, null).toMessage(delivery("", c)).key()).isNull();
    assertThat(kafka(null, "order_id", null).toMessage(delivery("acme", c)).key())
        .isEqualTo("1234".getBytes(StandardCharsets.UTF_8));
    assertThat(kafka(null, "customer", null).toMessage(delivery("acme", c)).key())
        .isEqualTo("cüst-9".getBytes(StandardCharsets.UTF_8));
    assertThat(kafka(null, "raw", null).toMessage(delivery("acme", c)).key()).containsExactly(9, 8);
    assertThat(kafka(null, "none", null).toMessage(delivery("acme", c)).key()).isNull();
    assertThat(rabbit("ex", "rk", null).toMessage(delivery("acme", c)).key()).isNull();
  }

  /** {@link #delivery} of an ordered queue's event with {@code orderingKey}. */
  static Delivery ordered(String orderingKey, Map<String, Object> columns) {
    Delivery d = delivery("acme", columns);
    return new Delivery(
        d.shard(),
        d.queue(),
        d.id(),
        d.epoch(),
        d.tenant(),
        d.priority(),
        d.dueNs(),
        d.createdNs(),
        d.firedNs(),
        d.workClass(),
        d.actorPath(),
        d.columns(),
        orderingKey);
  }

  @Test
  void anOrderedQueuesKeyIsTheOrderingKeyUnlessAColumnIsNamedAndTravelsAsAHeader() {
    Map<String, Object> c = new LinkedHashMap<>();
    c.put("order_id", 1234L);
    assertThat(kafka(null, null, null).toMessage(ordered("acct-7", c)).key())
        .isEqualTo("acct-7".getBytes(StandardCharsets.UTF_8));
    assertThat(kafka(null, null, null).toMessage(ordered("", c)).key())
        .as("ordering=queue: one key, so one partition")
        .isEmpty();
    assertThat(kafka(null, "order_id", null).toMessage(ordered("acct-7", c)).key())
        .isEqualTo("1234".getBytes(StandardCharsets.UTF_8));
    assertThat(kafka(null, null, null).toMessage(ordered(null, c)).key())
        .as("a NULL key is no key: the tenant, as unordered")
        .isEqualTo("acme".getBytes(StandardCharsets.UTF_8));
    assertThat(rabbit("ex", "rk", null).toMessage(ordered("acct-7", c)).headers())
        .containsEntry(ChannelHeaders.ORDERING_KEY, "acct-7");
    assertThat(kafka(null, null, null).toMessage(ordered("", c)).headers())
        .containsEntry(ChannelHeaders.ORDERING_KEY, "");
    assertThat(rabbit("ex", "rk", null).toMessage(ordered(null, c)).headers())
        .doesNotContainKey(ChannelHeaders.ORDERING_KEY);
  }

  @Test
  void aGroupsCompletionEventCarriesTheGroupsCountsAsHeaders() {
    Delivery d = delivery("acme", Map.of());
    Delivery completion =
        new Delivery(
            d.shard(),
            d.queue(),
            d.id(),
            d.epoch(),
            d.tenant(),
            d.priority(),
            d.dueNs(),
            d.createdNs(),
            d.firedNs(),
            d.workClass(),
            d.actorPath(),
            d.columns(),
            null,
            new dev.sluice.core.outlet.GroupOutcome("run-7", 98, 2, 1),
            false);
    assertThat(rabbit("ex", "rk", null).toMessage(completion).headers())
        .containsEntry(ChannelHeaders.GROUP_KEY, "run-7")
        .containsEntry(ChannelHeaders.GROUP_ACKED, "98")
        .containsEntry(ChannelHeaders.GROUP_DEAD, "2")
        .containsEntry(ChannelHeaders.GROUP_CANCELLED, "1");
    assertThat(kafka(null, null, null).toMessage(d).headers())
        .doesNotContainKey(ChannelHeaders.GROUP_KEY);
  }

  @Test
  void headersAndMessageIdIdentifyTheAttempt() {
    OutboundMessage m = kafka(null, null, null).toMessage(delivery("acme", Map.of()));
    assertThat(m.messageId()).isEqualTo("s1/orders/42/3");
    assertThat(m.headers())
        .containsExactly(
            Map.entry(ChannelHeaders.SHARD, "s1"),
            Map.entry(ChannelHeaders.QUEUE, "orders"),
            Map.entry(ChannelHeaders.ID, "42"),
            Map.entry(ChannelHeaders.ATTEMPT, "3"),
            Map.entry(ChannelHeaders.TENANT, "acme"),
            Map.entry(ChannelHeaders.DUE_NS, "1700000000123456789"));
    assertThatThrownBy(() -> m.headers().put("x", "y"))
        .isInstanceOf(UnsupportedOperationException.class);
    // A repeated publish of the same attempt carries the same id.
    assertThat(kafka(null, null, null).toMessage(delivery("acme", Map.of())).messageId())
        .isEqualTo(m.messageId());
  }

  @Test
  void kafkaTopicIsTheBindingsOrTheRowsAllowedOne() {
    Map<String, Object> c = new LinkedHashMap<>();
    c.put("dest", "payments.timeout");
    OutboundMessage fixed = kafka(null, null, null).toMessage(delivery("acme", c));
    assertThat(fixed.target()).isEqualTo("orders");
    assertThat(fixed.routingKey()).isNull();
    OutboundMessage routed = kafka("dest", null, null).toMessage(delivery("acme", c));
    assertThat(routed.target()).isEqualTo("payments.timeout");
    assertThat(routed.routingKey()).isNull();
  }

  @Test
  void aTargetTheChannelDoesNotAllowFailsTheEventNamingEverything() {
    Map<String, Object> c = new LinkedHashMap<>();
    c.put("dest", "__consumer_offsets");
    assertThatThrownBy(() -> kafka("dest", null, null).toMessage(delivery("acme", c)))
        .isInstanceOf(ChannelMessageException.class)
        .hasMessage(
            "queue orders, shard s1, event 42 (attempt 3): channel_target_column dest holds"
                + " '__consumer_offsets', which kafka channel events-kafka does not allow as topic"
                + " (allowed_targets: reminders.due, payments.timeout)");
    c.put("dest", null);
    assertThatThrownBy(() -> kafka("dest", null, null).toMessage(delivery("acme", c)))
        .hasMessageContaining("channel_target_column dest holds NULL, which kafka channel");
    c.put("dest", "x".repeat(5000));
    assertThatThrownBy(() -> kafka("dest", null, null).toMessage(delivery("acme", c)))
        .hasMessageContaining("'" + "x".repeat(200) + "...'");
    assertThatThrownBy(() -> kafka("dest", null, null).toMessage(delivery("acme", Map.of())))
        .hasMessageContaining("channel_target_column names column dest, which the row does not");
  }

  @Test
  void rabbitRoutesByTheBindingOrTheRowsAllowedKey() {
    Map<String, Object> c = new LinkedHashMap<>();
    c.put("region", "us.orders");
    OutboundMessage fixed = rabbit("", "orders", null).toMessage(delivery("acme", c));
    assertThat(fixed.target()).isEmpty();
    assertThat(fixed.routingKey()).isEqualTo("orders");
    assertThat(fixed.describe()).startsWith("exchange '', routing key 'orders' (s1/orders/42/3");
    OutboundMessage routed = rabbit("orders-x", "orders", "region").toMessage(delivery("acme", c));
    assertThat(routed.target()).isEqualTo("orders-x");
    assertThat(routed.routingKey()).isEqualTo("us.orders");
    c.put("region", "cn.orders");
    assertThatThrownBy(() -> rabbit("orders-x", "orders", "region").toMessage(delivery("a", c)))
        .isInstanceOf(ChannelMessageException.class)
        .hasMessage(
            "queue orders, shard s1, event 42 (attempt 3): channel_target_column region holds"
                + " 'cn.orders', which rabbitmq channel events-rabbit does not allow as routing key"
                + " (allowed_targets: eu.orders, us.orders)");
  }

  static String body(OutboundMessage m) {
    return new String(m.body(), StandardCharsets.UTF_8);
  }
}
