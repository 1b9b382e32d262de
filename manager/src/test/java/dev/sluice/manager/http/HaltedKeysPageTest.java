package dev.sluice.manager.http;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.db.QueueConvention;
import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.proto.v1.Event;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The status page's halted keys, over plain HTTP (the endpoints the page's script calls): an
 * ordered queue with {@code ordering_on_dead=halt} lists the key stopped at its dead event; Skip
 * through the page's endpoint (with its cross-site guard) cancels that event and the key's next
 * event is delivered; Replay retries a halted key's dead event itself. The gauge {@code
 * sluice_ordering_halted_keys} counts them.
 */
class HaltedKeysPageTest {
  static final ObjectMapper JSON = new ObjectMapper();
  static Harness h;
  static RawReceiver receiver;

  @BeforeAll
  static void start() throws Exception {
    h = new Harness(HaltedKeysPageTest.class);
    h.exec(
        QueueConvention.createTableSql(
            "ledger",
            List.of(
                "`ordering_key` VARCHAR(255) NULL",
                "KEY `sluice_ordering` (`ordering_key`, `state`, `id`)"),
            "sluice_queue ordering=key ordering_on_dead=halt max_attempts=1 min_backoff=0s"));
    h.createQueue("plain", "");
    h.exec(
        "INSERT INTO ledger (ordering_key) VALUES ('acct-1'), ('acct-1'), ('acct-1'),"
            + " ('acct-2'), ('acct-2')");
    h.startManager();
    receiver = h.rawReceiver("ledger", "ledger-worker", 8);
  }

  @AfterAll
  static void stop() {
    if (h != null) {
      h.close();
    }
  }

  static JsonNode halted() throws Exception {
    Http.Response r = Http.get(h.httpBase() + "/api/queues/ledger/halted?shard=s1");
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return JSON.readTree(r.body());
  }

  static Http.Response post(String action, String body) {
    return Http.post(
        h.httpBase() + "/api/queues/ledger/" + action,
        body,
        "Content-Type",
        "application/json",
        "X-Sluice-Action",
        "1");
  }

  @Test
  void aHaltedKeyIsListedAndSkipOrReplayOnThePageLetsItGoOn() throws Exception {
    long a1 = h.queryLong("SELECT MIN(id) FROM ledger WHERE ordering_key = 'acct-1'");
    long b1 = h.queryLong("SELECT MIN(id) FROM ledger WHERE ordering_key = 'acct-2'");
    Map<Long, Event> first = new HashMap<>();
    for (int i = 0; i < 2; i++) {
      Event e = receiver.events.poll(20, SECONDS);
      assertThat(e).as("each key's first event").isNotNull();
      first.put(e.getId(), e);
    }
    assertThat(first).containsOnlyKeys(a1, b1);
    // max_attempts=1: each nack makes its event dead, and the key halts behind it.
    receiver.nack(first.get(a1), 0, "account frozen");
    receiver.nack(first.get(b1), 0, "account frozen");
    await()
        .atMost(20, SECONDS)
        .until(() -> h.queryLong("SELECT COUNT(*) FROM ledger WHERE state = 3") == 2);

    JsonNode list = halted();
    assertThat(list.get("halting").asBoolean()).isTrue();
    assertThat(list.get("may").get("replay").asBoolean()).isTrue();
    assertThat(list.get("keys")).hasSize(2);
    JsonNode k = list.get("keys").get(0);
    assertThat(k.get("key").asText()).isEqualTo("acct-1");
    assertThat(k.get("dead_id").asLong()).isEqualTo(a1);
    assertThat(k.get("waiting").asLong()).isEqualTo(2);
    assertThat(list.get("keys").get(1).get("dead_id").asLong()).isEqualTo(b1);
    assertThat(receiver.events.poll(1, SECONDS)).as("both keys are halted").isNull();
    // The page has the list to show them in, and the gauge counts them.
    assertThat(Http.get(h.httpBase() + "/").body()).contains("id=\"halted\"");
    await()
        .atMost(30, SECONDS)
        .until(
            () ->
                Double.valueOf(2)
                    .equals(
                        Http.sample(
                            Http.get(h.httpBase() + "/metrics").body(),
                            "sluice_ordering_halted_keys",
                            Map.of("queue", "ledger"))));

    // The page's guard: a POST without the page's header and JSON body changes nothing.
    Http.Response forged =
        Http.post(
            h.httpBase() + "/api/queues/ledger/skip",
            "ids=" + a1,
            "Content-Type",
            "application/x-www-form-urlencoded");
    assertThat(forged.status()).isEqualTo(403);
    assertThat(h.queryLong("SELECT state FROM ledger WHERE id = ?", a1)).isEqualTo(3);

    // Skip: the dead event is cancelled and acct-1's next event is delivered.
    Http.Response skip = post("skip", "{\"shard\": \"s1\", \"ids\": [" + a1 + "]}");
    assertThat(skip.status()).as(skip.body()).isEqualTo(200);
    assertThat(JSON.readTree(skip.body()).get("changed").asLong()).isEqualTo(1);
    assertThat(h.queryLong("SELECT state FROM ledger WHERE id = ?", a1)).isEqualTo(4);
    Event next = receiver.events.poll(20, SECONDS);
    assertThat(next).as("acct-1 goes on").isNotNull();
    assertThat(next.getId()).isEqualTo(a1 + 1);
    receiver.ack(next);
    Event last = receiver.events.poll(20, SECONDS);
    assertThat(last).as("acct-1's last event").isNotNull();
    assertThat(last.getId()).isEqualTo(a1 + 2);
    receiver.ack(last);

    // Replay: acct-2's dead event itself is delivered again, then the one behind it.
    JsonNode left = halted();
    assertThat(left.get("keys")).hasSize(1);
    assertThat(left.get("keys").get(0).get("key").asText()).isEqualTo("acct-2");
    Http.Response replay = post("replay", "{\"shard\": \"s1\", \"ids\": [" + b1 + "]}");
    assertThat(replay.status()).as(replay.body()).isEqualTo(200);
    Event again = receiver.events.poll(20, SECONDS);
    assertThat(again).as("the replayed event").isNotNull();
    assertThat(again.getId()).isEqualTo(b1);
    receiver.ack(again);
    Event behind = receiver.events.poll(20, SECONDS);
    assertThat(behind).as("acct-2's next event, after the replayed one").isNotNull();
    assertThat(behind.getColumnsMap().get("ordering_key").getStringValue()).isEqualTo("acct-2");
    receiver.ack(behind);
    assertThat(halted().get("keys")).isEmpty();

    // Skipping a dead event that is no longer dead is answered, not applied.
    Http.Response stale = post("skip", "{\"shard\": \"s1\", \"ids\": [" + a1 + "]}");
    assertThat(stale.status()).isEqualTo(200);
    assertThat(JSON.readTree(stale.body()).get("unchanged").get(0).get("why").asText())
        .isEqualTo("not dead");
  }

  @Test
  void anUnorderedQueueHasNoHaltedKeysAndNothingToSkip() throws Exception {
    Http.Response r = Http.get(h.httpBase() + "/api/queues/plain/halted?shard=s1");
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    JsonNode n = JSON.readTree(r.body());
    assertThat(n.get("halting").asBoolean()).isFalse();
    assertThat(n.get("keys")).isEmpty();
    Http.Response skip =
        Http.post(
            h.httpBase() + "/api/queues/plain/skip",
            "{\"shard\": \"s1\", \"ids\": [1]}",
            "Content-Type",
            "application/json",
            "X-Sluice-Action",
            "1");
    assertThat(skip.status()).isEqualTo(400);
    assertThat(skip.body()).contains("plain").contains("not ordered");
  }
}
