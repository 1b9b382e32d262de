package dev.sluice.manager.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sluice.db.QueueConvention;
import dev.sluice.manager.Harness;
import dev.sluice.proto.v1.ListQueuesRequest;
import dev.sluice.proto.v1.QueueInfo;
import dev.sluice.receiver.ReceivedEvent;
import dev.sluice.receiver.SluiceReceiver;
import dev.sluice.testkit.TypedColumns;
import dev.sluice.testkit.TypedColumns.Column;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * Every MySQL/MariaDB column type ({@link TypedColumns}), through a real table, a real manager and
 * the real SDK: each value arrives exactly (extremes, fractions, time zones), NULL arrives as NULL,
 * and a type that cannot travel exactly is refused when the queue is validated, naming the column
 * and its type. The manager's pool runs with a session time zone of -07:00 and the JVM in
 * Asia/Kolkata, so a value that passed through either zone would show.
 */
class TypedPayloadTest {

  /** A record mapped from the columns with {@link ReceivedEvent#as}. */
  record Payload(
      long cTinyint,
      boolean cBool,
      BigInteger cUbigint,
      BigDecimal cDecimal,
      double cDouble,
      String cVarchar,
      byte[] cBlob,
      LocalDate cDate,
      LocalDateTime cDatetime,
      Instant cTimestamp,
      Duration cTime,
      String cJson,
      Long missingColumn) {}

  @Test
  void everyColumnTypeArrivesExactly() throws Exception {
    try (Harness h = new Harness(TypedPayloadTest.class)) {
      boolean mariadb;
      try (Connection c = h.connect()) {
        mariadb = TypedColumns.isMariaDb(c);
      }
      List<Column> cols = TypedColumns.of(mariadb);
      h.exec(
          QueueConvention.createTableSql(
              "typed_q", TypedColumns.definitions(cols), "sluice_queue"));
      // The producer writes in yet another session time zone.
      try (Connection c = h.connect();
          Statement s = c.createStatement()) {
        s.execute("SET time_zone = '+05:30'");
        s.execute(TypedColumns.insertSql("typed_q", cols, 1, 2));
      }

      h.startManager();
      Map<Long, ReceivedEvent> got = new ConcurrentHashMap<>();
      h.closeLater(
          SluiceReceiver.builder()
              .target(h.target())
              .queue("typed_q")
              .receiverId("typed")
              .handler(e -> got.put(e.id(), e))
              .build()
              .start());
      await().until(() -> h.queryLong("SELECT COUNT(*) FROM typed_q WHERE state = 2") == 2);

      ReceivedEvent e = got.get(1L);
      assertThat(e.getLong("c_tinyint")).isEqualTo(-128);
      assertThat(e.getBoolean("c_bool")).isTrue();
      assertThat(e.getLong("c_bool_odd")).as("TINYINT(1) keeps any value").isEqualTo(5);
      assertThatThrownBy(() -> e.getBoolean("c_bool_odd")).hasMessageContaining("c_bool_odd");
      assertThat(e.getInt("c_smallint")).isEqualTo(65535);
      assertThat(e.getLong("c_mediumint")).isEqualTo(-8388608);
      assertThat(e.getLong("c_int")).isEqualTo(4294967295L);
      assertThat(e.getLong("c_bigint")).isEqualTo(Long.MIN_VALUE);
      assertThat(e.getBigInteger("c_ubigint")).isEqualTo(new BigInteger("18446744073709551615"));
      assertThatThrownBy(() -> e.getLong("c_ubigint")).hasMessageContaining("c_ubigint");
      assertThat(e.getBigDecimal("c_decimal"))
          .isEqualTo(new BigDecimal("12345678901234567890.0123456789"));
      assertThat(e.getBigDecimal("c_numeric")).isEqualTo(new BigDecimal("-0.50"));
      assertThat(e.getDouble("c_float")).isEqualTo((double) 1.1f);
      assertThat(e.getDouble("c_double")).isEqualTo(0.1);
      assertThat(e.getString("c_char")).isEqualTo("abc");
      assertThat(e.getString("c_varchar")).isEqualTo("h\u00e9llo \u2603 \ud83d\ude00");
      assertThat(e.getString("c_text")).isEqualTo("line1\nline2");
      assertThat(e.getString("c_enum")).isEqualTo("green");
      assertThat(e.getString("c_set")).isEqualTo("a,c");
      assertThat(e.getBytes("c_binary")).containsExactly(0x00, 0xFF, 0x10);
      assertThat(e.getBytes("c_varbinary")).containsExactly(0xDE, 0xAD, 0xBE, 0xEF);
      assertThat(e.getBytes("c_blob")).containsExactly(0x00, 0x01, 0xFE, 0xFF);
      assertThat(e.getBoolean("c_bit1")).isTrue();
      assertThat(e.getBytes("c_bits")).containsExactly(0b10, 0b00000001);
      assertThat(e.getLocalDate("c_date")).isEqualTo(LocalDate.of(2024, 2, 29));
      // 02:30 on 2024-03-31 does not exist in Central Europe (DST): DATETIME has no zone, so it
      // must arrive as stored.
      assertThat(e.getLocalDateTime("c_datetime"))
          .isEqualTo(LocalDateTime.of(2024, 3, 31, 2, 30, 0, 123_456_000));
      assertThatThrownBy(() -> e.getInstant("c_datetime")).hasMessageContaining("no time zone");
      assertThat(e.getInstant("c_timestamp"))
          .isEqualTo(Instant.ofEpochSecond(1700000000, 654_321_000));
      assertThat(e.getDuration("c_time"))
          .isEqualTo(Duration.ofHours(838).plusMinutes(59).plusSeconds(59).negated());
      assertThat(e.getDuration("c_time_long")).isEqualTo(Duration.ofMillis(25 * 3_600_000L + 500));
      assertThat(e.getLong("c_year")).isEqualTo(2155);
      assertThat(e.getJson("c_json")).isEqualTo("{\"a\": 1, \"b\": [true, null]}");
      if (mariadb) {
        assertThat(e.getString("c_inet6")).isEqualTo("2001:db8::1");
        assertThat(e.getString("c_uuid")).isEqualTo("123e4567-e89b-12d3-a456-426655440000");
      }
      assertThat(e.columns()).hasSize(cols.size());
      // Each value's wire kind is the one the shared table names (the conformance suite's too).
      for (Column c : cols) {
        String kind =
            e.raw().getColumnsMap().get(c.name()).getKindCase().name().toLowerCase(Locale.ROOT);
        assertThat(kind).as(c.name()).isEqualTo(c.kind() + "_value");
      }

      Payload p = e.as(Payload.class);
      assertThat(p.cTinyint()).isEqualTo(-128);
      assertThat(p.cBool()).isTrue();
      assertThat(p.cUbigint()).isEqualTo(new BigInteger("18446744073709551615"));
      assertThat(p.cDecimal()).isEqualTo(new BigDecimal("12345678901234567890.0123456789"));
      assertThat(p.cDouble()).isEqualTo(0.1);
      assertThat(p.cVarchar()).isEqualTo("h\u00e9llo \u2603 \ud83d\ude00");
      assertThat(p.cBlob()).containsExactly(0x00, 0x01, 0xFE, 0xFF);
      assertThat(p.cDate()).isEqualTo(LocalDate.of(2024, 2, 29));
      assertThat(p.cDatetime()).isEqualTo(LocalDateTime.of(2024, 3, 31, 2, 30, 0, 123_456_000));
      assertThat(p.cTimestamp()).isEqualTo(Instant.ofEpochSecond(1700000000, 654_321_000));
      assertThat(p.cTime()).isNegative();
      assertThat(p.cJson()).contains("\"a\"");
      assertThat(p.missingColumn()).isNull();

      ReceivedEvent n = got.get(2L);
      for (Column c : cols) {
        assertThat(n.isNull(c.name())).as(c.name()).isTrue();
      }
      assertThatThrownBy(() -> n.getLong("c_bigint"))
          .hasMessageContaining("c_bigint")
          .hasMessageContaining("null");
      assertThatThrownBy(() -> n.as(Payload.class)).hasMessageContaining("NULL in 'c_tinyint'");
      String text = new String(e.getBytes("c_varbinary"), StandardCharsets.ISO_8859_1);
      assertThat(text).hasSize(4);
    }
  }

  @Test
  void aTypeThatCannotTravelExactlyIsRefusedNamingTheColumn() throws Exception {
    try (Harness h = new Harness(TypedPayloadTest.class)) {
      h.exec(
          QueueConvention.createTableSql(
              "geo_q", List.of("`order_id` BIGINT NULL", "`place` POINT NULL"), "sluice_queue"));
      h.createQueue("fine_q", "");
      h.startManager();
      await()
          .until(
              () ->
                  h
                      .blocking()
                      .listQueues(ListQueuesRequest.getDefaultInstance())
                      .getQueuesList()
                      .stream()
                      .anyMatch(q -> q.getName().equals("geo_q")));
      QueueInfo geo =
          h.blocking().listQueues(ListQueuesRequest.getDefaultInstance()).getQueuesList().stream()
              .filter(q -> q.getName().equals("geo_q"))
              .findFirst()
              .orElseThrow();
      assertThat(geo.getStatus()).isEqualTo("DISABLED");
      assertThat(geo.getProblem()).contains("place").contains("point");
      QueueInfo fine =
          h.blocking().listQueues(ListQueuesRequest.getDefaultInstance()).getQueuesList().stream()
              .filter(q -> q.getName().equals("fine_q"))
              .findFirst()
              .orElseThrow();
      assertThat(fine.getStatus()).isEqualTo("SERVING");
    }
  }
}
