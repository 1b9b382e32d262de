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
 * The status page in a real (headless) browser when authentication is on: without credentials the
 * browser gets the 401 and none of the page; with basic auth (the token as password) the page loads
 * and its script reads /api/status with the same credentials.
 */
class SecureStatusPageBrowserTest {
  static final String TOKEN = "page-token-4b1d";
  static Harness h;

  @BeforeAll
  static void start() throws Exception {
    if (!Chromium.installed()) {
      return; // each test reports itself skipped, with the install command
    }
    h = new Harness(SecureStatusPageBrowserTest.class);
    h.createQueue("secret_q", "");
    h.exec("INSERT INTO secret_q (order_id) VALUES (1), (2), (3)");
    SecurityConfig sec =
        new SecurityConfig(
            null,
            List.of(
                new Principal(
                    "ops",
                    Authenticator.sha256(TOKEN),
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

  @org.junit.jupiter.api.BeforeEach
  void browser() {
    Chromium.assumeInstalled();
  }

  @Test
  void withoutCredentialsThePageShowsNothing() throws Exception {
    String dom;
    try {
      dom = Chromium.dumpDom(h.httpBase() + "/", 3000);
    } catch (AssertionError e) {
      // The 401's Basic challenge: headless Chromium shows no page at all (an empty DOM).
      assertThat(e.getMessage()).contains("chromium exited with 0");
      dom = "";
    }
    assertThat(dom).doesNotContain("secret_q").doesNotContain("data-queue");
  }

  @Test
  void withCredentialsThePageLoadsItsStatus() throws Exception {
    String base = h.httpBase().replace("http://", "http://ops:" + TOKEN + "@");
    String dom = Chromium.dumpDom(base + "/", 5000);
    assertThat(dom).contains("data-queue=\"secret_q\"").contains("manager test");
    assertThat(Long.parseLong(StatusPageBrowserTest.attr(dom, "body", "", "data-updates")))
        .isGreaterThanOrEqualTo(1);
  }
}
