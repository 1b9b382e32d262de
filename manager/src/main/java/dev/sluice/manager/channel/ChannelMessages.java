package dev.sluice.manager.channel;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamWriteFeature;
import dev.sluice.core.outlet.Delivery;
import dev.sluice.db.store.JsonText;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Turns a queue's {@link Delivery deliveries} into {@link OutboundMessage messages} for its
 * channel, as its {@link ChannelBinding} says.
 *
 * <ul>
 *   <li><b>Where</b>: Kafka, the binding's topic, or the row's target column; RabbitMQ, the
 *       binding's exchange with its routing key, or the row's target column as routing key. A
 *       target column's value (its text) must be one of the channel's {@code allowed_targets}.
 *   <li><b>Key</b> (Kafka): the key column's text in UTF-8 (a binary column's bytes as they are);
 *       without a key column, an ordered queue's event's ordering key in UTF-8 ("" for {@code
 *       ordering=queue}: one partition), else the tenant; none when the tenant is "" or the column
 *       is NULL.
 *   <li><b>Headers</b>: {@link ChannelHeaders}: shard, queue, id, attempt (the epoch), tenant, due
 *       time in ns, and an ordered queue's ordering key. <b>Message id</b>: {@code
 *       shard/queue/id/attempt}, the same for a repeated publish of one attempt.
 *   <li><b>Body</b>: a JSON object of the user columns in table order: numbers as JSON numbers
 *       (unsigned BIGINT and DECIMAL exact), booleans, text as strings, binary as base64 strings,
 *       JSON columns embedded as JSON, dates, date-times and timestamps as ISO-8601 strings ({@code
 *       2024-05-01}, {@code 2024-05-01T12:30:00}, {@code 2024-05-01T10:30:00Z}), TIME as an
 *       ISO-8601 duration ({@code PT1H30M}), NULL as null. Or one column's value as it is: binary
 *       as its bytes, text and JSON as UTF-8, any other kind as its JSON text, NULL as an empty
 *       body.
 * </ul>
 *
 * <p>Stateless past construction: any thread may use one at once.
 */
public final class ChannelMessages {
  private static final JsonFactory JSON =
      JsonFactory.builder().enable(StreamWriteFeature.WRITE_BIGDECIMAL_AS_PLAIN).build();

  /** How much of a bad value an error message quotes. */
  private static final int QUOTE_CHARS = 200;

  private final ChannelBinding binding;

  public ChannelMessages(ChannelBinding binding) {
    this.binding = binding;
  }

  public ChannelBinding binding() {
    return binding;
  }

  /**
   * The message for {@code d}.
   *
   * @throws ChannelMessageException when the row cannot become a message: its target is not
   *     allowed, a key or body column is missing from it, a JSON column holds no JSON
   */
  public OutboundMessage toMessage(Delivery d) {
    String target = binding.target();
    String routingKey = binding.routingKey();
    if (binding.targetColumn() != null) {
      String named = allowedTarget(d);
      if (binding.kafka()) {
        target = named;
      } else {
        routingKey = named;
      }
    }
    byte[] key = binding.kafka() ? key(d) : null;
    byte[] body = binding.jsonBody() ? jsonBody(d) : rawBody(d);
    return new OutboundMessage(target, routingKey, key, headers(d), body, messageId(d));
  }

  /** {@code shard/queue/id/attempt}. */
  public static String messageId(Delivery d) {
    return d.shard() + "/" + d.queue() + "/" + d.id() + "/" + d.epoch();
  }

  /** The {@link ChannelHeaders} of {@code d}, in that order. */
  public static Map<String, String> headers(Delivery d) {
    Map<String, String> h = new LinkedHashMap<>();
    h.put(ChannelHeaders.SHARD, d.shard());
    h.put(ChannelHeaders.QUEUE, d.queue());
    h.put(ChannelHeaders.ID, Long.toString(d.id()));
    h.put(ChannelHeaders.ATTEMPT, Long.toString(d.epoch()));
    h.put(ChannelHeaders.TENANT, d.tenant() == null ? "" : d.tenant());
    h.put(ChannelHeaders.DUE_NS, Long.toString(d.dueNs()));
    if (d.orderingKey() != null) {
      h.put(ChannelHeaders.ORDERING_KEY, d.orderingKey());
    }
    if (d.group() != null) {
      h.put(ChannelHeaders.GROUP_KEY, d.group().key());
      h.put(ChannelHeaders.GROUP_ACKED, Long.toString(d.group().acked()));
      h.put(ChannelHeaders.GROUP_DEAD, Long.toString(d.group().dead()));
      h.put(ChannelHeaders.GROUP_CANCELLED, Long.toString(d.group().cancelled()));
    }
    return Collections.unmodifiableMap(h);
  }

  private String allowedTarget(Delivery d) {
    String column = binding.targetColumn();
    Object v = value(d, column, "channel_target_column");
    String text = v == null ? null : text(v);
    if (text == null || !binding.channel().allows(text)) {
      throw new ChannelMessageException(
          d,
          "channel_target_column "
              + column
              + " holds "
              + (text == null ? "NULL" : "'" + quote(text) + "'")
              + ", which "
              + binding.channel().kind()
              + " channel "
              + binding.channel().name()
              + " does not allow as "
              + (binding.kafka() ? "topic" : "routing key")
              + " (allowed_targets: "
              + String.join(", ", binding.channel().allowedTargets())
              + ")");
    }
    return text;
  }

  /**
   * The record key. An ordered queue's key goes to one partition, so its records stay in the order
   * they were published, which is id order: the dispatcher never has two events of a key in flight,
   * so the publisher never has two of a key outstanding.
   */
  private byte[] key(Delivery d) {
    if (binding.keyColumn() == null) {
      if (d.orderingKey() != null) {
        return d.orderingKey().getBytes(StandardCharsets.UTF_8);
      }
      return d.tenant() == null || d.tenant().isEmpty()
          ? null
          : d.tenant().getBytes(StandardCharsets.UTF_8);
    }
    Object v = value(d, binding.keyColumn(), "channel_key_column");
    if (v == null) {
      return null;
    }
    return v instanceof byte[] b ? b.clone() : text(v).getBytes(StandardCharsets.UTF_8);
  }

  private byte[] rawBody(Delivery d) {
    Object v = value(d, binding.bodyColumn(), "channel_body");
    if (v == null) {
      return new byte[0];
    }
    if (v instanceof byte[] b) {
      return b.clone();
    }
    if (v instanceof String s) {
      return s.getBytes(StandardCharsets.UTF_8);
    }
    if (v instanceof JsonText j) {
      checkJson(d, binding.bodyColumn(), j);
      return j.json().getBytes(StandardCharsets.UTF_8);
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (JsonGenerator g = JSON.createGenerator(out)) {
      write(g, d, binding.bodyColumn(), v);
    } catch (IOException e) {
      throw new UncheckedIOException(e); // NOPMD: writing to memory does not fail
    }
    return out.toByteArray();
  }

  private byte[] jsonBody(Delivery d) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(256);
    try (JsonGenerator g = JSON.createGenerator(out)) {
      g.writeStartObject();
      for (Map.Entry<String, Object> e : d.columns().entrySet()) {
        g.writeFieldName(e.getKey());
        write(g, d, e.getKey(), e.getValue());
      }
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException(e); // NOPMD: writing to memory does not fail
    }
    return out.toByteArray();
  }

  private static void write(JsonGenerator g, Delivery d, String column, Object v)
      throws IOException {
    if (v == null) {
      g.writeNull();
    } else if (v instanceof Long n) {
      g.writeNumber(n);
    } else if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
      g.writeNumber(((Number) v).intValue());
    } else if (v instanceof BigInteger n) {
      g.writeNumber(n);
    } else if (v instanceof BigDecimal n) {
      g.writeNumber(n);
    } else if (v instanceof Double n) {
      g.writeNumber(n);
    } else if (v instanceof Float n) {
      g.writeNumber(n);
    } else if (v instanceof Boolean b) {
      g.writeBoolean(b);
    } else if (v instanceof byte[] b) {
      g.writeBinary(b);
    } else if (v instanceof JsonText j) {
      checkJson(d, column, j);
      g.writeRawValue(j.json());
    } else if (v instanceof String s) {
      g.writeString(s);
    } else {
      g.writeString(text(v));
    }
  }

  /** A JSON column is embedded as it is, so it must be one JSON value. */
  private static void checkJson(Delivery d, String column, JsonText j) {
    try (JsonParser p = JSON.createParser(j.json())) {
      if (p.nextToken() == null) {
        throw new ChannelMessageException(d, "JSON column " + column + " is empty");
      }
      p.skipChildren();
      if (p.nextToken() != null) {
        throw new ChannelMessageException(
            d, "JSON column " + column + " holds more than one JSON value");
      }
    } catch (JsonProcessingException e) {
      throw new ChannelMessageException(
          d, "JSON column " + column + " holds no valid JSON: " + e.getOriginalMessage());
    } catch (IOException e) {
      throw new UncheckedIOException(e); // NOPMD: reading from memory does not fail
    }
  }

  /** A column of the row; the row must have it. */
  private static Object value(Delivery d, String column, String option) {
    Map<String, Object> columns = d.columns();
    if (columns.containsKey(column)) {
      return columns.get(column);
    }
    for (Map.Entry<String, Object> e : columns.entrySet()) {
      if (e.getKey().equalsIgnoreCase(column)) {
        return e.getValue();
      }
    }
    throw new ChannelMessageException(
        d,
        option
            + " names column "
            + column
            + ", which the row does not have (its columns: "
            + String.join(", ", columns.keySet())
            + ")");
  }

  /** A value's text: a key, a target. */
  static String text(Object v) {
    if (v instanceof String s) {
      return s;
    }
    if (v instanceof byte[] b) {
      return new String(b, StandardCharsets.UTF_8);
    }
    if (v instanceof BigDecimal n) {
      return n.toPlainString();
    }
    if (v instanceof LocalDate t) {
      return t.format(DateTimeFormatter.ISO_LOCAL_DATE);
    }
    if (v instanceof LocalDateTime t) {
      return t.format(DateTimeFormatter.ISO_LOCAL_DATE_TIME);
    }
    if (v instanceof Instant || v instanceof Duration || v instanceof JsonText) {
      return v.toString();
    }
    return String.valueOf(v);
  }

  private static String quote(String s) {
    return s.length() <= QUOTE_CHARS ? s : s.substring(0, QUOTE_CHARS) + "...";
  }
}
