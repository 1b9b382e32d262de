package dev.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

class FreePortsTest {
  @Test
  void portsAreFreeAndBelowTheEphemeralRange() throws Exception {
    for (int i = 0; i < 20; i++) {
      int port = FreePorts.belowEphemeralRange();
      assertThat(port).isBetween(20_000, 31_999);
      try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
        assertThat(s.getLocalPort()).isEqualTo(port);
      }
    }
  }
}
