package dev.sluice.manager.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.manager.Harness;
import dev.sluice.manager.security.Action;
import dev.sluice.manager.security.Authenticator;
import dev.sluice.manager.security.Grant;
import dev.sluice.manager.security.Limits;
import dev.sluice.manager.security.Principal;
import dev.sluice.manager.security.SecurityConfig;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The queue view with authentication on: a principal with only {@code stats} sees the dead letters
 * but no button, and the endpoints refuse its actions with 403; a forged cross-site POST (without
 * the page's header, from a foreign origin, as a form) is refused with 403 and changes nothing,
 * even with the operator's credentials, which a browser would attach to it.
 */
class SecureDeadLetterPageBrowserTest {
  static final String OPS = "ops-token-7c1e";
  static final String VIEWER = "viewer-token-2a9f";
  static Harness h;

  @BeforeAll
  static void start() throws Exception {
    h = new Harness(SecureDeadLetterPageBrowserTest.class);
    h.createQueue("refunds", "max_attempts=1 min_backoff=0s");
    h.exec(
        "INSERT INTO refunds (id, order_id, state, epoch) VALUES (1, 501, 3, 1), (2, 502, 3, 1)");
    // Event 2 is the forged POSTs' target (and replayed at the end of that test); 1 stays dead.
    SecurityConfig sec =
        new SecurityConfig(
            null,
            List.of(
                new Principal(
                    "ops",
                    Authenticator.sha256(OPS),
                    null,
                    List.of(
                        new Grant(List.of("*"), EnumSet.of(Action.STATS, Action.ADMIN), List.of())),
                    Limits.NONE),
                new Principal(
                    "viewer",
                    Authenticator.sha256(VIEWER),
                    null,
                    List.of(new Grant(List.of("*"), EnumSet.of(Action.STATS), List.of())),
                    Limits.NONE)),
            true,
            true,
            false);
    h.startManager(h.configBuilder().security(sec).build(), java.time.Clock.systemUTC());
  }

  @AfterAll
  static void stop() {
    if (h != null) {
      h.close();
    }
  }

  long state(long id) throws Exception {
    return h.queryLong("SELECT state FROM refunds WHERE id = ?", id);
  }

  String replayUrl() {
    return h.httpBase() + "/api/queues/refunds/replay";
  }

  @Test
  void withoutTheGrantThePageShowsNoButtonsAndTheEndpointSays403() throws Exception {
    Chromium.assumeInstalled(); // skipped, with the install command, where it is missing
    try (Browser b = Browser.open(1400, 1000)) {
      b.header("Authorization", "Bearer " + VIEWER);
      b.navigate(h.httpBase() + "/#queue=refunds&shard=s1");
      b.waitFor("document.querySelector('#dead tr[data-dead-id=\"1\"]')");
      assertThat(b.eval("document.getElementById('queue-view').dataset.readonly").asText())
          .isEqualTo("true");
      assertThat(
              b.eval(
                      "[...document.querySelectorAll('#queue-view button[data-action]')]"
                          + ".filter(x => x.offsetParent !== null).length")
                  .asInt())
          .as("visible action buttons")
          .isZero();
      assertThat(b.eval("document.getElementById('qv-readonly').hidden").asBoolean()).isFalse();
      // The operator, on the same page, gets the buttons (so the check above can fail).
      b.header("Authorization", "Bearer " + OPS);
      b.navigate(h.httpBase() + "/?again#queue=refunds&shard=s1");
      b.waitFor("document.querySelector('#dead tr[data-dead-id=\"1\"]')");
      b.waitFor("document.getElementById('queue-view').dataset.readonly === 'false'");
      assertThat(b.eval("document.getElementById('qv-replay').offsetParent !== null").asBoolean())
          .isTrue();
    }
    Http.Response r =
        Http.post(
            replayUrl(),
            "{\"shard\":\"s1\",\"ids\":[1]}",
            "Authorization",
            "Bearer " + VIEWER,
            "Content-Type",
            "application/json",
            CrossSite.HEADER,
            "1");
    assertThat(r.status()).as(r.body()).isEqualTo(403);
    assertThat(r.body()).contains("viewer").contains("replay").contains("refunds");
    assertThat(state(1)).as("still dead").isEqualTo(3);
  }

  /**
   * A foreign page (another origin) opened in a browser that holds the operator's credentials (sent
   * with every request, as basic auth or a client certificate would be) tries both forgeries a page
   * can make: a fetch without the header (no-cors) and a form posted as text/plain whose body is
   * the JSON. Both are refused; the event stays dead.
   */
  @Test
  void aForeignPageInTheBrowserCannotReplay() throws Exception {
    Chromium.assumeInstalled();
    String target = h.httpBase() + "/api/queues/refunds/replay";
    String html =
        "<!doctype html><body><form id=f method=post enctype=text/plain action='"
            + target
            + "'><input name='{\"shard\":\"s1\",\"ids\":[1],\"x\":\"' value='\"}'></form>"
            + "<script>fetch('"
            + target
            + "', {method: 'POST', mode: 'no-cors', body: '{\"shard\":\"s1\",\"ids\":[1]}'})"
            + ".finally(() => { document.body.dataset.fetched = 1;"
            + " document.getElementById('f').submit(); });</script></body>";
    com.sun.net.httpserver.HttpServer evil =
        com.sun.net.httpserver.HttpServer.create(new java.net.InetSocketAddress("127.0.0.1", 0), 8);
    evil.createContext(
        "/",
        x -> {
          byte[] b = html.getBytes(java.nio.charset.StandardCharsets.UTF_8);
          x.getResponseHeaders().set("Content-Type", "text/html; charset=utf-8");
          x.sendResponseHeaders(200, b.length);
          x.getResponseBody().write(b);
          x.close();
        });
    evil.start();
    try (Browser b = Browser.open(800, 600)) {
      b.header("Authorization", "Bearer " + OPS);
      b.navigate("http://127.0.0.1:" + evil.getAddress().getPort() + "/");
      // The form's answer replaces the foreign page: the manager's refusal.
      b.waitFor("location.pathname === '/api/queues/refunds/replay'");
      b.waitFor("document.body && document.body.innerText.includes('an action needs')");
    } finally {
      evil.stop(0);
    }
    assertThat(state(1)).as("still dead").isEqualTo(3);
  }

  /** No browser needed: runs also where Chromium is missing. */
  @Test
  void aForgedCrossSitePostIsRefusedAndChangesNothing() throws Exception {
    String body = "{\"shard\":\"s1\",\"ids\":[2]}";
    String auth = "Bearer " + OPS;
    // What a foreign page can make a browser send: a form (no custom header, not JSON)...
    Http.Response form =
        Http.post(
            replayUrl(),
            "ids=2",
            "Authorization",
            auth,
            "Content-Type",
            "application/x-www-form-urlencoded",
            "Origin",
            "http://evil.example",
            "Sec-Fetch-Site",
            "cross-site");
    // ...a JSON POST without the header...
    Http.Response noHeader =
        Http.post(replayUrl(), body, "Authorization", auth, "Content-Type", "application/json");
    // ...or, were a header to get through, one from another origin or site.
    Http.Response foreignOrigin =
        Http.post(
            replayUrl(),
            body,
            "Authorization",
            auth,
            "Content-Type",
            "application/json",
            CrossSite.HEADER,
            "1",
            "Origin",
            "http://evil.example");
    Http.Response crossSite =
        Http.post(
            replayUrl(),
            body,
            "Authorization",
            auth,
            "Content-Type",
            "application/json",
            CrossSite.HEADER,
            "1",
            "Sec-Fetch-Site",
            "cross-site");
    for (Http.Response r : List.of(form, noHeader, foreignOrigin, crossSite)) {
      assertThat(r.status()).as(r.body()).isEqualTo(403);
    }
    assertThat(state(2)).as("still dead").isEqualTo(3);

    // The page's own request, same origin, is accepted: the refusals above are not for the token.
    String origin = h.httpBase();
    Http.Response page =
        Http.post(
            replayUrl(),
            body,
            "Authorization",
            auth,
            "Content-Type",
            "application/json",
            CrossSite.HEADER,
            "1",
            "Origin",
            origin,
            "Sec-Fetch-Site",
            "same-origin");
    assertThat(page.status()).as(page.body()).isEqualTo(200);
    assertThat(page.body()).contains("\"changed\":1");
    assertThat(state(2)).as("replayed: pending or already fired").isIn(0L, 1L, 2L);
  }
}
