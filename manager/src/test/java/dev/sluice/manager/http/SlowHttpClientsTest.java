package dev.sluice.manager.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Clients that open connections and send a request slowly (here: never finish its headers) must not
 * hang the status port for everyone else.
 */
class SlowHttpClientsTest {
  StatusHttpServer http;
  final List<Socket> idle = new ArrayList<>();

  @BeforeEach
  void start() {
    http =
        new StatusHttpServer(
            "127.0.0.1",
            0,
            new SimpleMeterRegistry(),
            () -> null,
            new StatusHttpServer.Readiness() {
              @Override
              public boolean ready() {
                return true;
              }

              @Override
              public String state() {
                return "serving";
              }
            });
    http.start();
  }

  @AfterEach
  void stop() throws Exception {
    for (Socket s : idle) {
      s.close();
    }
    http.stop();
  }

  Socket idleClient() throws Exception {
    Socket s = new Socket();
    s.connect(new InetSocketAddress("127.0.0.1", http.port()), 2000);
    // A slow client: the start of a request, then nothing (a client that sends nothing at all holds
    // no thread: the server waits for its first byte on its selector).
    s.getOutputStream().write("GET /healthz HTTP/1.1\r\nHost: x\r\n".getBytes());
    s.getOutputStream().flush();
    idle.add(s);
    return s;
  }

  int healthz() throws Exception {
    HttpClient c = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    HttpRequest req =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http.port() + "/healthz"))
            .timeout(Duration.ofSeconds(3))
            .build();
    return c.send(req, HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  @Test
  void healthzAnswersWhileSlowClientsHoldConnections() throws Exception {
    Socket first = idleClient();
    idleClient();
    assertThat(healthz()).isEqualTo(200);
    // Many more than the pool's threads: the read timeout frees them.
    for (int i = 0; i < StatusHttpServer.THREADS + 4; i++) {
      idleClient();
    }
    await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> healthz() == 200);
    first.setSoTimeout(20_000);
    try (InputStream in = first.getInputStream()) {
      assertThat(in.read()).as("the server closed the idle connection").isEqualTo(-1);
    }
  }
}
