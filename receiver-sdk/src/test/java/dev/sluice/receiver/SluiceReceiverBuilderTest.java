package dev.sluice.receiver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

class SluiceReceiverBuilderTest {

  private static SluiceReceiverBuilder valid() {
    return SluiceReceiver.builder().target("localhost:1").queue("q").handler(e -> {});
  }

  private static void rejects(UnaryOperator<SluiceReceiverBuilder> tweak, String message) {
    assertThatThrownBy(() -> tweak.apply(valid()).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(message);
  }

  @Test
  void namesTheFieldThatIsWrong() {
    rejects(b -> b.queue(null), "queue is required");
    rejects(b -> b.queue(" "), "queue is required");
    rejects(b -> b.handler(null), "handler is required");
    rejects(b -> b.target(null), "target or channel is required");
    rejects(b -> b.concurrency(0), "concurrency must be >= 1, was 0");
    rejects(b -> b.maxInFlight(0), "maxInFlight must be >= 1, was 0");
    rejects(b -> b.receiverId(""), "receiverId must not be blank");
    rejects(
        b -> b.reconnectBackoff(Duration.ZERO, Duration.ofSeconds(1)),
        "reconnectBackoff min must be > 0, was PT0S");
    rejects(
        b -> b.reconnectBackoff(Duration.ofSeconds(2), Duration.ofSeconds(1)),
        "reconnectBackoff max must be >= min, was PT1S < PT2S");
    rejects(
        b -> b.shutdownTimeout(Duration.ofSeconds(-1)), "shutdownTimeout must be >= 0, was PT-1S");
  }

  @Test
  void checksTheTargets() {
    rejects(b -> b.target(" "), "target must not be blank");
    rejects(b -> b.targets(List.of()), "targets must not be empty");
    rejects(b -> b.targets(Arrays.asList("localhost:1", null)), "targets[1] is blank");
    rejects(b -> b.targets(List.of("localhost:1", "")), "targets[1] is blank");
    rejects(
        b -> b.targets(List.of("localhost:1", "localhost:2", "localhost:1")),
        "targets lists localhost:1 twice");
    rejects(b -> b.targets(null), "target or channel is required");
    // The last of target/targets wins.
    assertThat(valid().targets(List.of("a:1", "b:1")).target("c:1").build()).isNotNull();
    assertThat(valid().target("c:1").targets(List.of("a:1", "b:1")).build()).isNotNull();
  }

  @Test
  void refusesBadKeyRanges() {
    // Every rule is in KeyRangeTest; here: the builder applies them.
    for (String bad : List.of("80", "-8", "40-C0", "c0-40", "40-4000")) {
      assertThatThrownBy(() -> valid().keyRange(bad).build())
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("keyRange must be \"\" (every shard) or Vitess style")
          .hasMessageContaining("was \"" + bad + "\"");
    }
  }

  @Test
  void acceptsVitessKeyRanges() {
    for (String ok : List.of("", "-", "-80", "80-", "40-c0")) {
      assertThat(valid().keyRange(ok).build()).as(ok).isNotNull();
    }
    assertThat(valid().keyRange(null).build()).isNotNull();
  }

  @Test
  void rejectsBothTargetAndChannel() {
    ManagedChannel channel = ManagedChannelBuilder.forTarget("localhost:1").usePlaintext().build();
    try {
      rejects(b -> b.channel(channel), "only one of target and channel may be set");
    } finally {
      channel.shutdownNow();
    }
  }

  @Test
  void appliesDefaults() {
    SluiceReceiver receiver = valid().concurrency(3).build();
    assertThat(receiver.receiverId()).isNotBlank();
    assertThat(receiver.stats()).isEqualTo(new ReceiverStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
    assertThat(receiver.awaitSubscribed(Duration.ZERO)).isFalse();
    receiver.close(); // never started: nothing to do, and no error
  }
}
