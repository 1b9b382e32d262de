package dev.sluice.receiver;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * Starts a {@link TestSluiceServer} per test (more on demand) and cleans up the receivers and
 * servers a test made.
 */
abstract class ReceiverTestSupport {
  static final Duration WAIT = Duration.ofSeconds(10);

  TestSluiceServer server;
  private final List<SluiceReceiver> receivers = new ArrayList<>();
  private final List<TestSluiceServer> extraServers = new ArrayList<>();

  @BeforeEach
  void startServer() throws Exception {
    server = new TestSluiceServer();
  }

  @AfterEach
  void stopAll() throws Exception {
    receivers.forEach(SluiceReceiver::abort);
    server.close();
    for (TestSluiceServer s : extraServers) {
      s.close();
    }
  }

  /** Another manager on a free port, stopped after the test. */
  TestSluiceServer extraServer() throws Exception {
    return extraServer(0);
  }

  /** Another manager on {@code port} (e.g. one that was closed, coming back), stopped after. */
  TestSluiceServer extraServer(int port) throws Exception {
    TestSluiceServer s = new TestSluiceServer(port);
    extraServers.add(s);
    return s;
  }

  /** A started receiver on queue "q" whose stream is subscribed. */
  SluiceReceiver startReceiver(EventHandler handler, UnaryOperator<SluiceReceiverBuilder> tweak) {
    SluiceReceiverBuilder builder =
        SluiceReceiver.builder()
            .target(server.target())
            .queue("q")
            .handler(handler)
            .reconnectBackoff(Duration.ofMillis(10), Duration.ofMillis(50));
    SluiceReceiver receiver = tweak.apply(builder).build();
    receivers.add(receiver);
    receiver.start();
    assertThat(receiver.awaitSubscribed(WAIT)).isTrue();
    return receiver;
  }
}
