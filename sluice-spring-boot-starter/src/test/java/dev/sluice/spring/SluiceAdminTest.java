package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sluice.proto.v1.AdminQueue;
import dev.sluice.proto.v1.DeadEvent;
import dev.sluice.proto.v1.ListDeadRequest;
import dev.sluice.test.SluiceExtension;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The {@link SluiceAdmin} bean against a real manager and database: an application finds a dead
 * event with its reason, replays it and sees it handled; pauses and resumes the queue; an unknown
 * queue is an error naming the queue.
 */
@SpringBootTest(
    classes = SluiceAdminTest.App.class,
    properties = {
      "sluice.admin.enabled=true",
      "sluice.receiver.shutdown-timeout=3s",
      "sluice.receiver.reconnect-max=500ms",
      "spring.flyway.enabled=false"
    })
class SluiceAdminTest {
  @RegisterExtension
  static SluiceExtension sluice =
      SluiceExtension.builder().migrations("classpath:db/admin").build();

  @DynamicPropertySource
  static void properties(DynamicPropertyRegistry r) {
    r.add("spring.datasource.url", sluice::jdbcUrl);
    r.add("spring.datasource.username", () -> sluice.database().user());
    r.add("spring.datasource.password", () -> sluice.database().password());
    r.add("sluice.receiver.targets", sluice::target);
  }

  @Autowired SluiceAdmin admin;

  @Test
  void aDeadEventIsFoundWithItsReasonAndReplayed() {
    long id = sluice.insert("fragile_events", Map.of("label", "first"));
    sluice.awaitDead("fragile_events", id);

    List<DeadEvent> dead =
        admin
            .listDead(ListDeadRequest.newBuilder().setQueue("fragile_events").build())
            .getEventsList();
    assertThat(dead).extracting(DeadEvent::getId).containsExactly(id);
    assertThat(dead.get(0).getReason()).contains("not yet: first");
    assertThat(dead.get(0).getAttempts()).isEqualTo(1);

    Fragile.healed = true;
    assertThat(admin.replay("fragile_events", dead.get(0).getShard(), List.of(id)).getChanged())
        .isEqualTo(1);
    sluice.awaitAcked("fragile_events", id);
    assertThat(Fragile.handled).containsExactly("first");
  }

  @Test
  void theQueueIsPausedAndResumedOnEveryShard() {
    List<String> shards = admin.pause("fragile_events", null);
    assertThat(shards).isNotEmpty();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> admin.listQueues().stream().anyMatch(q -> paused(q, "fragile_events")));
    assertThat(admin.resume("fragile_events", null)).isEqualTo(shards);
    assertThat(admin.listQueues()).noneMatch(q -> paused(q, "fragile_events"));
  }

  @Test
  void anErrorNamesTheQueueAndTheStatus() {
    assertThatThrownBy(() -> admin.pause("no_such_events", null))
        .isInstanceOf(SluiceAdminException.class)
        .hasMessageContaining("no_such_events")
        .hasMessageContaining("NOT_FOUND");
  }

  private static boolean paused(AdminQueue q, String queue) {
    return q.getName().equals(queue) && q.getPaused();
  }

  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class App {
    @Bean
    Fragile fragile() {
      return new Fragile();
    }
  }

  static class Fragile {
    static volatile boolean healed;
    static final List<String> handled = new CopyOnWriteArrayList<>();

    @SluiceListener(queue = "fragile_events")
    public void on(Map<String, Object> columns) {
      String label = (String) columns.get("label");
      if (!healed) {
        throw new IllegalStateException("not yet: " + label);
      }
      handled.add(label);
    }
  }
}
