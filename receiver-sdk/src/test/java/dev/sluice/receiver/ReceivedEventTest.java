package dev.sluice.receiver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.Value;
import org.junit.jupiter.api.Test;

class ReceivedEventTest {
  private final Event raw =
      Event.newBuilder()
          .setId(42)
          .setEpoch(3)
          .setQueue("q")
          .setShard("s1")
          .setTenant("acme")
          .setPriority(5)
          .setTimeDueNs(10)
          .setTimeCreatedNs(9)
          .setTimeFiredNs(11)
          .putColumns("name", Value.newBuilder().setStringValue("x").build())
          .putColumns("count", Value.newBuilder().setIntValue(7).build())
          .putColumns("ratio", Value.newBuilder().setDoubleValue(0.5).build())
          .putColumns(
              "blob", Value.newBuilder().setBytesValue(ByteString.copyFromUtf8("ab")).build())
          .putColumns("gone", Value.newBuilder().setNullValue(true).build())
          .build();
  private final ReceivedEvent event = new ReceivedEvent(raw);

  @Test
  void exposesSystemFields() {
    assertThat(event.id()).isEqualTo(42);
    assertThat(event.epoch()).isEqualTo(3);
    assertThat(event.attempt()).isEqualTo(3);
    assertThat(event.queue()).isEqualTo("q");
    assertThat(event.shard()).isEqualTo("s1");
    assertThat(event.tenant()).isEqualTo("acme");
    assertThat(event.priority()).isEqualTo(5);
    assertThat(event.dueTimeNanos()).isEqualTo(10);
    assertThat(event.createdTimeNanos()).isEqualTo(9);
    assertThat(event.firedTimeNanos()).isEqualTo(11);
    assertThat(event.raw()).isSameAs(raw);
  }

  @Test
  void theOrderingKeyIsNullUnlessSetAndTheEmptyKeyIsAKey() {
    assertThat(event.orderingKey()).as("an unordered queue's event").isNull();
    assertThat(new ReceivedEvent(raw.toBuilder().setOrderingKey("acct-7").build()).orderingKey())
        .isEqualTo("acct-7");
    assertThat(new ReceivedEvent(raw.toBuilder().setOrderingKey("").build()).orderingKey())
        .as("a queue ordered as one key")
        .isEmpty();
  }

  @Test
  void convertsColumnsToJavaValues() {
    assertThat(event.columns())
        .containsEntry("name", "x")
        .containsEntry("count", 7L)
        .containsEntry("ratio", 0.5)
        .containsEntry("gone", null)
        .hasSize(5);
    assertThat((byte[]) event.columns().get("blob")).containsExactly('a', 'b');
    assertThat(event.getString("name")).isEqualTo("x");
    assertThat(event.getLong("count")).isEqualTo(7L);
    assertThatThrownBy(() -> event.columns().put("k", "v"))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void typedGettersNameTheColumnAndEvent() {
    assertThatThrownBy(() -> event.getString("missing"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("event 42 has no column 'missing'");
    assertThatThrownBy(() -> event.getLong("name"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("column 'name' of event 42 is String, not Long");
    assertThatThrownBy(() -> event.getString("gone"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("column 'gone' of event 42 is null, not String");
  }
}
