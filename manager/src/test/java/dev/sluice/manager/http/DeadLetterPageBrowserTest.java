package dev.sluice.manager.http;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.proto.v1.Event;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The status page's queue view in a real (headless) browser, clicked through over the DevTools
 * protocol: an operator finds a dead event by its reason, reads it, replays it with the
 * confirmation, and sees it delivered (a receiver acks it). The tables stay inside their cards at
 * 1,400 px and at a phone's 390 px. Takes the screenshots the README shows (see {@link #docs}).
 */
class DeadLetterPageBrowserTest {
  static final String DECLINED = "card declined by the bank (code 51)";
  static final String TIMEOUT = "payment gateway timed out after 30 s";
  static Harness h;
  static RawReceiver receiver;

  @BeforeAll
  static void start() throws Exception {
    if (!Chromium.installed()) {
      return; // each test reports itself skipped, with the install command
    }
    h = new Harness(DeadLetterPageBrowserTest.class);
    h.createQueue("payments", "max_attempts=1 min_backoff=0s");
    h.exec(
        "INSERT INTO payments (order_id, tenant) VALUES (1001, 'acme'), (1002, 'globex'),"
            + " (1003, 'acme')");
    h.startManager();
    receiver = h.rawReceiver("payments", "payments-worker", 8);
    for (int i = 0; i < 3; i++) {
      Event e = receiver.events.poll(20, SECONDS);
      assertThat(e).isNotNull();
      // max_attempts=1: a nack makes the event dead with the receiver's reason.
      receiver.nack(e, 0, e.getId() % 2 == 0 ? DECLINED : TIMEOUT);
    }
    await()
        .atMost(20, SECONDS)
        .until(() -> h.queryLong("SELECT COUNT(*) FROM payments WHERE state = 3") == 3);
  }

  @BeforeEach
  void needsChromium() {
    Chromium.assumeInstalled();
  }

  @AfterAll
  static void stop() {
    if (h != null) {
      h.close();
    }
  }

  @Test
  void operatorFindsADeadEventReadsItsReasonReplaysItAndSeesItDelivered() throws Exception {
    long declined = h.queryLong("SELECT MIN(id) FROM payments WHERE MOD(id, 2) = 0");
    try (Browser b = Browser.open(1400, 1000)) {
      b.navigate(h.httpBase() + "/");
      b.waitFor("document.querySelector('a[data-open=\"payments\"]')");
      b.eval("document.querySelector('a[data-open=\"payments\"]').click()");
      b.waitFor("document.querySelectorAll('#dead tr[data-dead-id]').length === 3");

      // Filter by reason: only the declined payment is left.
      b.eval("document.getElementById('f-reason').value = 'declined'");
      b.eval("document.querySelector('#qv-filters button[type=submit]').click()");
      b.waitFor("document.querySelectorAll('#dead tr[data-dead-id]').length === 1");
      assertThat(b.eval("document.querySelector('#dead tr[data-dead-id]').dataset.deadId").asLong())
          .isEqualTo(declined);

      // One event: its columns and its reason.
      b.eval("document.querySelector('#dead tr[data-dead-id] td.reason').click()");
      b.waitFor("!document.getElementById('event').hidden");
      assertThat(
              b.eval("document.querySelector('#ev-fields tr[data-field=reason] td').textContent")
                  .asText())
          .contains(DECLINED);
      assertThat(
              b.eval("document.querySelector('#ev-fields tr[data-field=order_id] td').textContent")
                  .asText())
          .isEqualTo(String.valueOf(declined + 1000));
      b.waitFor("document.getElementById('queue-view').dataset.dead === '3'");
      b.screenshot(docs("status-dead-letters.png"));

      // Replay it: the confirmation says how many, then the row leaves the dead list.
      b.eval("document.querySelector('#dead tr[data-dead-id] input[type=checkbox]').click()");
      b.eval("document.getElementById('qv-replay').click()");
      b.waitFor("document.getElementById('confirm').open");
      assertThat(b.eval("document.getElementById('confirm-text').textContent").asText())
          .contains("Replay")
          .contains("1 dead event");
      b.eval("document.getElementById('confirm-yes').click()");
      b.waitFor("document.getElementById('qv-result').dataset.changed === '1'");
      b.waitFor("document.querySelectorAll('#dead tr[data-dead-id]').length === 0");

      // Delivered again; acked, the page's counts say so.
      Event again = receiver.events.poll(20, SECONDS);
      assertThat(again).as("the replayed event is delivered").isNotNull();
      assertThat(again.getId()).isEqualTo(declined);
      receiver.ack(again);
      b.waitFor("document.getElementById('queue-view').dataset.acked === '1'");
      b.waitFor("document.getElementById('queue-view').dataset.dead === '2'");
      // The event shown below the list follows it: acked, after a second attempt.
      b.waitFor("document.getElementById('event').dataset.state === 'acked'");
      assertThat(h.queryLong("SELECT state FROM payments WHERE id = ?", declined))
          .as("acked")
          .isEqualTo(2);
      b.eval("document.getElementById('f-reason').value = ''");
      b.eval("document.querySelector('#qv-filters button[type=submit]').click()");
      b.waitFor("document.querySelectorAll('#dead tr[data-dead-id]').length === 2");
      b.screenshot(docs("status-queue.png"));
    }
  }

  @Test
  void deadLettersFilterByTenantAndTime() throws Exception {
    try (Browser b = Browser.open(1400, 1000)) {
      b.navigate(h.httpBase() + "/#queue=payments&shard=s1");
      b.waitFor("document.querySelectorAll('#dead tr[data-dead-id]').length >= 2");
      // Events 1 and 3 are acme's and stay dead whatever the other test replays.
      b.eval("document.getElementById('f-tenant').value = 'acme'");
      b.eval("document.querySelector('#qv-filters button[type=submit]').click()");
      b.waitFor(
          "[...document.querySelectorAll('#dead tr[data-dead-id]')].map(r => r.dataset.deadId)"
              + ".join() === '1,3'");
      // Created from a time in the future: none.
      b.eval("document.getElementById('f-from').value = '2099-01-01T00:00'");
      b.eval("document.querySelector('#qv-filters button[type=submit]').click()");
      b.waitFor("document.querySelector('#dead tr.empty')");
      // Created before then: both again.
      b.eval("document.getElementById('f-from').value = ''");
      b.eval("document.getElementById('f-before').value = '2099-01-01T00:00'");
      b.eval("document.querySelector('#qv-filters button[type=submit]').click()");
      b.waitFor("document.querySelectorAll('#dead tr[data-dead-id]').length === 2");
    }
  }

  @Test
  void tablesStayInsideTheirCardsOnAWideScreenAndOnAPhone() throws Exception {
    try (Browser b = Browser.open(1400, 1000)) {
      b.navigate(h.httpBase() + "/#queue=payments&shard=s1");
      b.waitFor("document.querySelectorAll('#dead tr[data-dead-id]').length >= 1");
      b.waitFor("document.querySelectorAll('#queues tr[data-queue]').length >= 1");
      for (int width : new int[] {1400, 390}) {
        b.resize(width, 900);
        // The window has the new width; the reads below force the layout at it.
        b.waitFor("window.innerWidth === " + width);
        // The page itself never scrolls sideways; every card is within the window; a table wider
        // than its card scrolls inside it (the card or its .scroll box clips it).
        assertThat(b.eval("document.documentElement.scrollWidth <= window.innerWidth").asBoolean())
            .as("the page is no wider than a %d px window", width)
            .isTrue();
        String overflowing =
            b.eval(
                    "[...document.querySelectorAll('.card')].filter(c => !c.hidden"
                        + " && c.getBoundingClientRect().right > window.innerWidth + 1)"
                        + ".map(c => c.id || c.className).join(',')")
                .asText();
        assertThat(overflowing).as("cards wider than a %d px window", width).isEmpty();
        String unclipped =
            b.eval(
                    "[...document.querySelectorAll('table')].filter(t => t.offsetParent !== null"
                        + " && t.getBoundingClientRect().right > window.innerWidth + 1"
                        + " && !['auto','scroll','hidden'].includes(getComputedStyle("
                        + "t.closest('.scroll, .card')).overflowX)).map(t => t.id).join(',')")
                .asText();
        assertThat(unclipped).as("tables overflowing their card at %d px", width).isEmpty();
      }
    }
  }

  /**
   * Where a screenshot goes: {@code target/screenshots/}, or the project's {@code docs/} (what the
   * README shows) when run with {@code -Dsluice.screenshots=docs}, so that an ordinary build does
   * not rewrite committed files.
   */
  static Path docs(String name) {
    Path dir = Path.of("").toAbsolutePath();
    if ("docs".equals(System.getProperty("sluice.screenshots"))) {
      while (dir != null && !Files.exists(dir.resolve("mvnw"))) {
        dir = dir.getParent();
      }
      if (dir != null) {
        return dir.resolve("docs").resolve(name);
      }
    }
    return Path.of("target", "screenshots", name);
  }
}
