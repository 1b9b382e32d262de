package dev.sluice.manager.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.manager.Harness;
import dev.sluice.manager.SluiceServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A manager does not listen beyond loopback unprotected unless told allow_insecure. */
class SafeDefaultTest {
  static Harness h;

  @BeforeAll
  static void start() {
    h = new Harness(SafeDefaultTest.class);
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  @Test
  void refusesAllInterfacesWithoutTlsAndAuthAndNamesAllowInsecure() {
    SluiceServer s =
        new SluiceServer(
            h.configBuilder().grpcHost("0.0.0.0").build(),
            Clock.systemUTC(),
            new SimpleMeterRegistry());
    assertThatThrownBy(s::start)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("gRPC listens on 0.0.0.0")
        .hasMessageContaining("without TLS and without authentication")
        .hasMessageContaining("allow_insecure");
    s.stop();
  }

  @Test
  void loopbackNeedsNothing() {
    assertThat(Exposure.problems("127.0.0.1", "localhost", SecurityConfig.NONE)).isEmpty();
    assertThat(Exposure.problems("::1", "127.0.0.1", SecurityConfig.NONE)).isEmpty();
  }

  @Test
  void allowInsecureStartsAndSaysSoOnTheStatusPage() throws Exception {
    SecurityConfig insecure = new SecurityConfig(null, List.of(), true, true, true);
    h.startManager(
        h.configBuilder().httpHost("0.0.0.0").security(insecure).build(), Clock.systemUTC());
    String body =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(h.httpBase() + "/api/status")).build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    assertThat(body).contains("INSECURE (allow_insecure: true): HTTP listens on 0.0.0.0");
    h.stopManager();
  }
}
