package dev.sluice.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free loopback ports for the embedded servers, chosen below Linux's ephemeral range (32768 and
 * up). A server binds its port a second or more after the check (after an install, an unpack, a
 * copy of its data), and a port the kernel handed out, as port 0 does, could meanwhile become the
 * local end of another process's outgoing connection (Maven's downloads, a JDBC pool), which the
 * kernel picks from that same range. Below it, only another server choosing the same port at random
 * could take it, and the callers retry on another port then.
 */
public final class FreePorts {
  private FreePorts() {}

  /** A port in 20000–31999 that was free a moment ago; an ephemeral one if none was found. */
  public static int belowEphemeralRange() {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    for (int i = 0; i < 50; i++) {
      int port = 20_000 + random.nextInt(12_000);
      try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
        return s.getLocalPort();
      } catch (IOException taken) {
        // Try another.
      }
    }
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("no free loopback port", e);
    }
  }
}
