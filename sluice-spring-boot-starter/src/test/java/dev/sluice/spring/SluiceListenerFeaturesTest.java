package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sluice.client.EventProducer.EventOptions;
import dev.sluice.client.InsertOutcome;
import dev.sluice.receiver.ReceivedEvent;
import dev.sluice.test.EventSnapshot;
import dev.sluice.test.SluiceExtension;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.actuate.health.CompositeHealth;
import org.springframework.boot.actuate.health.HealthComponent;
import org.springframework.boot.actuate.health.HealthEndpoint;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.dao.DataAccessException;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The listener features against a real database and a real in-process manager: several listeners of
 * one queue, the registry (auto-startup off, start, pause, resume, stop), the error handler and the
 * dead-letter callback, Micrometer observations of listeners and producer, and the health indicator
 * in the readiness group only.
 */
@SpringBootTest(
    classes = SluiceListenerFeaturesTest.App.class,
    properties = {
      "sluice.receiver.shutdown-timeout=3s",
      "sluice.receiver.reconnect-max=500ms",
      "management.endpoint.health.probes.enabled=true",
      "management.endpoint.health.show-details=always",
      // Flyway is on this test's class path (the test kit's manager); the app does not use it.
      "spring.flyway.enabled=false"
    })
class SluiceListenerFeaturesTest {
  @RegisterExtension
  static SluiceExtension sluice =
      SluiceExtension.builder().migrations("classpath:db/features").build();

  @DynamicPropertySource
  static void properties(DynamicPropertyRegistry r) {
    r.add("spring.datasource.url", sluice::jdbcUrl);
    r.add("spring.datasource.username", () -> sluice.database().user());
    r.add("spring.datasource.password", () -> sluice.database().password());
    r.add("sluice.receiver.targets", sluice::target);
  }

  @Autowired SluiceListenerRegistry registry;
  @Autowired SluiceProducer producer;
  @Autowired TransactionTemplate tx;
  @Autowired TestObservationRegistry observations;
  @Autowired HealthEndpoint health;

  @Test
  void twoListenersShareAQueue() throws Exception {
    assertThat(registry.listenerIds()).contains("left", "right");
    assertThat(registry.queue("left")).isEqualTo("shared_events");
    for (int i = 0; i < 6; i++) {
      sluice.insert("shared_events", Map.of("label", "s" + i));
    }
    // "left" holds its first event until "right" handled one: the manager must give "right" some.
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> Listeners.shared.stream().filter(l -> l.startsWith("left:")).count() > 0);
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> Listeners.shared.stream().filter(l -> l.contains(":s")).distinct().count() == 6);
    assertThat(Listeners.shared).anyMatch(l -> l.startsWith("right:"));
    assertThat(Listeners.shared).anyMatch(l -> l.startsWith("left:"));
  }

  @Test
  void theRegistryStartsPausesResumesAndStopsOneListener() {
    assertThat(registry.state("late")).isEqualTo(SluiceListenerRegistry.State.STOPPED);
    long first = sluice.insert("late_events", Map.of("label", "first"));
    await()
        .during(Duration.ofMillis(800))
        .atMost(Duration.ofSeconds(2))
        .until(() -> Listeners.late.isEmpty());

    registry.start("late");
    assertThat(registry.state("late")).isEqualTo(SluiceListenerRegistry.State.RUNNING);
    sluice.awaitAcked("late_events", first);

    registry.pause("late");
    assertThat(registry.state("late")).isEqualTo(SluiceListenerRegistry.State.PAUSED);
    long second = sluice.insert("late_events", Map.of("label", "second"));
    await()
        .during(Duration.ofMillis(800))
        .atMost(Duration.ofSeconds(2))
        .until(() -> Listeners.late.equals(List.of("first")));
    assertThat(health.health().getStatus().getCode()).isEqualTo("UP"); // paused is not down

    registry.resume("late");
    sluice.awaitAcked("late_events", second);
    assertThat(Listeners.late).containsExactly("first", "second");

    registry.stop("late");
    assertThat(registry.state("late")).isEqualTo(SluiceListenerRegistry.State.STOPPED);
    assertThat(registry.stats()).doesNotContainKey("late");
  }

  @Test
  void theLastFailedAttemptGoesToTheDeadLetterHandler() {
    long id = sluice.insert("doomed_events", Map.of("label", "doomed"));

    EventSnapshot dead = sluice.awaitDead("doomed_events", id);
    assertThat(dead.attempts()).isEqualTo(2);
    await().atMost(Duration.ofSeconds(10)).until(() -> Listeners.deadLetters.size() == 1);
    assertThat(Listeners.deadLetters.get(0)).isEqualTo("doomed_events:" + id + "@2:boom doomed");
    assertThat(Listeners.errors).containsExactly("doomed@1", "doomed@2");
  }

  @Test
  void aListenerOfAnOrderedQueueSeesTheOrderingKeyInItsMetadata() {
    long first = sluice.insert("ordered_events", Map.of("account", "acct-9", "label", "one"));
    long second = sluice.insert("ordered_events", Map.of("account", "acct-9", "label", "two"));
    Map<String, Object> unkeyed = new java.util.HashMap<>();
    unkeyed.put("account", null);
    unkeyed.put("label", "three");
    long third = sluice.insert("ordered_events", unkeyed);

    sluice.awaitAcked("ordered_events", first);
    sluice.awaitAcked("ordered_events", second);
    sluice.awaitAcked("ordered_events", third);
    assertThat(Listeners.ordered)
        .as("the key's events in id order; a NULL key is no key")
        .containsSubsequence("one:acct-9", "two:acct-9")
        .contains("three:null")
        .hasSize(3);
  }

  @Test
  void listenersAndTheProducerAreObserved() {
    // Only this test's observations: the context (and its registry) is shared with the others.
    observations.clear();
    long id = tx.execute(s -> producer.to("shared_events").column("label", "observed").send());
    await().atMost(Duration.ofSeconds(20)).until(() -> Listeners.shared.contains("observed"));

    TestObservationRegistryAssert.assertThat(observations)
        .hasObservationWithNameEqualTo(SluiceObservations.PRODUCER)
        .that()
        .hasLowCardinalityKeyValue("messaging.system", "sluice")
        .hasLowCardinalityKeyValue("messaging.destination.name", "shared_events")
        .hasLowCardinalityKeyValue("messaging.operation", "publish")
        .hasHighCardinalityKeyValue("messaging.message.id", Long.toString(id));
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                TestObservationRegistryAssert.assertThat(observations)
                    .hasHandledContextsThatSatisfy(
                        contexts ->
                            assertThat(contexts)
                                .anySatisfy(
                                    c -> {
                                      assertThat(c.getName())
                                          .isEqualTo(SluiceObservations.LISTENER);
                                      assertThat(c.getLowCardinalityKeyValues())
                                          .contains(
                                              KeyValue.of("messaging.system", "sluice"),
                                              KeyValue.of(
                                                  "messaging.destination.name", "shared_events"),
                                              KeyValue.of("messaging.operation", "process"));
                                      assertThat(c.getHighCardinalityKeyValues())
                                          .contains(
                                              KeyValue.of(
                                                  "messaging.message.id", Long.toString(id)));
                                    })));
  }

  @Test
  void aDuplicateSendIsInsertedOnceAndDeliveredOnce() {
    InsertOutcome first =
        tx.execute(s -> producer.to("dedup_events").column("label", "first").sendUnique("k-7"));
    InsertOutcome again =
        tx.execute(s -> producer.to("dedup_events").column("label", "second").sendUnique("k-7"));
    assertThat(first.duplicate()).isFalse();
    assertThat(again).isEqualTo(new InsertOutcome(first.id(), true));

    sluice.awaitAcked("dedup_events", first.id());
    // Acked, not yet purged: the key is still taken, and nothing new is delivered.
    InsertOutcome afterAck =
        tx.execute(
            s ->
                producer.sendUnique(
                    "dedup_events", "k-7", Map.of("label", "third"), EventOptions.DEFAULTS));
    assertThat(afterAck).isEqualTo(new InsertOutcome(first.id(), true));
    await()
        .during(Duration.ofSeconds(1))
        .atMost(Duration.ofSeconds(3))
        .until(() -> Listeners.deduplicated.equals(List.of("first:k-7")));

    assertThatThrownBy(() -> producer.to("dedup_events").column("label", "x").sendUnique("k-8"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("no Spring transaction");
    assertThatThrownBy(
            () -> tx.execute(s -> producer.to("dedup_events").column("nope", 1).sendUnique("k-9")))
        .isInstanceOf(DataAccessException.class);
  }

  @Test
  void aDebouncedSendReplacesThePendingEventOfItsKey() throws Exception {
    // An hour ahead: pending throughout the test, never delivered by it.
    EventOptions later = EventOptions.builder().delay(Duration.ofHours(1)).build();
    dev.sluice.client.DebounceOutcome first =
        tx.execute(s -> producer.sendDebounced("dedup_events", "d-1", Map.of("label", "a"), later));
    dev.sluice.client.DebounceOutcome again =
        tx.execute(s -> producer.sendDebounced("dedup_events", "d-1", Map.of("label", "b"), later));
    assertThat(first.result()).isEqualTo(dev.sluice.client.DebounceOutcome.Result.INSERTED);
    assertThat(again)
        .isEqualTo(
            new dev.sluice.client.DebounceOutcome(
                first.id(), dev.sluice.client.DebounceOutcome.Result.REPLACED));
    try (var c = sluice.connect();
        var st = c.createStatement();
        var r =
            st.executeQuery(
                "SELECT label, state FROM dedup_events WHERE dedup_key = 'd-1' AND id = "
                    + first.id())) {
      assertThat(r.next()).isTrue();
      assertThat(r.getString(1)).isEqualTo("b");
      assertThat(r.getInt(2)).isZero();
      assertThat(r.next()).isFalse();
    }
  }

  static long rows(String table) throws java.sql.SQLException {
    try (var c = sluice.connect();
        var st = c.createStatement();
        var r = st.executeQuery("SELECT COUNT(*) FROM " + table)) {
      r.next();
      return r.getLong(1);
    }
  }

  @Test
  void aGroupsCompletionEventIsDeliveredAfterItsChildrenWithTheirCounts() throws Exception {
    // The completion event first, in the same transaction as the children: it waits for them.
    long[] ids =
        tx.execute(
            s -> {
              long done =
                  producer.sendGroupCompletion(
                      "group_done_events", "batch-1", Map.of("label", "all done"));
              long a = producer.sendInGroup("grouped_events", "batch-1", Map.of("label", "a"));
              long b = producer.to("grouped_events").column("label", "b").sendInGroup("batch-1");
              return new long[] {done, a, b};
            });
    sluice.awaitAcked("group_done_events", ids[0]);
    assertThat(Listeners.groups)
        .containsExactlyInAnyOrder("a:batch-1", "b:batch-1", "all done:batch-1 acked=2 dead=0");
    assertThat(Listeners.groups.get(2)).startsWith("all done");

    // A rolled-back transaction inserts neither; a bad key is refused before any statement.
    assertThatThrownBy(
            () ->
                tx.execute(
                    s -> {
                      producer.sendInGroup("grouped_events", "batch-2", Map.of("label", "c"));
                      producer
                          .to("group_done_events")
                          .column("label", "never")
                          .sendGroupCompletion("batch-2");
                      throw new IllegalStateException("roll back");
                    }))
        .hasMessage("roll back");
    assertThat(rows("grouped_events")).isEqualTo(2);
    assertThat(rows("group_done_events")).isEqualTo(1);
    assertThatThrownBy(
            () -> tx.execute(s -> producer.sendInGroup("grouped_events", "", Map.of("label", "x"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("queue grouped_events: a group key must be 1 to 191 characters");
    assertThatThrownBy(() -> producer.sendGroupCompletion("group_done_events", "k", Map.of()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("no Spring transaction");
    assertThatThrownBy(
            () -> tx.execute(s -> producer.sendInGroup("shared_events", "k", Map.of("label", "x"))))
        .isInstanceOf(DataAccessException.class)
        .satisfies(
            e ->
                assertThat(e.getCause())
                    .hasMessageContaining("queue shared_events has no group_key column"));
  }

  @Test
  void healthIsInTheReadinessGroupAndNotInLiveness() {
    HealthComponent readiness = health.healthForPath("readiness");
    HealthComponent liveness = health.healthForPath("liveness");
    assertThat(((CompositeHealth) readiness).getComponents()).containsKey("sluice");
    assertThat(((CompositeHealth) liveness).getComponents()).doesNotContainKey("sluice");
    assertThat(((CompositeHealth) health.health()).getComponents()).containsKey("sluice");
  }

  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class App {
    @Bean
    TestObservationRegistry observationRegistry() {
      return TestObservationRegistry.create();
    }

    @Bean
    Listeners listeners() {
      return new Listeners();
    }

    @Bean
    SluiceErrorHandler errors() {
      return (listenerId, event, failure) -> {
        Listeners.errors.add(event.getString("label") + "@" + event.attempt());
        throw failure;
      };
    }

    @Bean
    SluiceDeadLetterHandler parking() {
      return (listenerId, event, meta, failure) ->
          Listeners.deadLetters.add(
              meta.queue() + ":" + meta.id() + "@" + meta.attempt() + ":" + failure.getMessage());
    }
  }

  static class Listeners {
    static final List<String> shared = new CopyOnWriteArrayList<>();
    static final List<String> late = new CopyOnWriteArrayList<>();
    static final List<String> errors = new CopyOnWriteArrayList<>();
    static final List<String> deadLetters = new CopyOnWriteArrayList<>();
    static final List<String> ordered = new CopyOnWriteArrayList<>();
    static final List<String> deduplicated = new CopyOnWriteArrayList<>();
    static final List<String> groups = new CopyOnWriteArrayList<>();
    static final CountDownLatch rightHandledOne = new CountDownLatch(1);
    static final Set<String> labelsOfObserved = Set.of("observed");

    @SluiceListener(id = "left", queue = "shared_events", concurrency = 1)
    public void left(Map<String, Object> columns) throws InterruptedException {
      String label = (String) columns.get("label");
      if (labelsOfObserved.contains(label)) {
        shared.add(label);
        return;
      }
      shared.add("left:" + label);
      rightHandledOne.await(20, TimeUnit.SECONDS);
    }

    @SluiceListener(id = "right", queue = "shared_events", concurrency = 1)
    public void right(ReceivedEvent event) {
      String label = event.getString("label");
      shared.add(labelsOfObserved.contains(label) ? label : "right:" + label);
      rightHandledOne.countDown();
    }

    @SluiceListener(id = "late", queue = "late_events", autoStartup = "false")
    public void late(Map<String, Object> columns) {
      late.add((String) columns.get("label"));
    }

    @SluiceListener(queue = "ordered_events", concurrency = 4)
    public void ordered(Map<String, Object> columns, EventMetadata meta) {
      ordered.add(columns.get("label") + ":" + meta.orderingKey());
    }

    @SluiceListener(queue = "dedup_events")
    public void deduplicated(Map<String, Object> columns) {
      deduplicated.add(columns.get("label") + ":" + columns.get("dedup_key"));
    }

    @SluiceListener(queue = "grouped_events")
    public void grouped(Map<String, Object> columns) {
      groups.add(columns.get("label") + ":" + columns.get("group_key"));
    }

    @SluiceListener(queue = "group_done_events")
    public void groupDone(ReceivedEvent event) {
      groups.add(
          event.getString("label")
              + ":"
              + event
                  .group()
                  .map(g -> g.key() + " acked=" + g.acked() + " dead=" + g.dead())
                  .orElse("none"));
    }

    @SluiceListener(queue = "doomed_events", deadLetterHandler = "parking")
    public void doomed(Map<String, Object> columns) {
      throw new IllegalStateException("boom " + columns.get("label"));
    }
  }
}
