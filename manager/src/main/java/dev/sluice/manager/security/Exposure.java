package dev.sluice.manager.security;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;

/**
 * The safe-default rule: a manager listening beyond loopback must have TLS and authentication, or
 * be told {@code allow_insecure: true}.
 */
public final class Exposure {
  private Exposure() {}

  /** Whether {@code host} is a loopback address (an unresolvable name counts as exposed). */
  public static boolean loopback(String host) {
    try {
      return InetAddress.getByName(host).isLoopbackAddress();
    } catch (UnknownHostException e) {
      return false;
    }
  }

  /**
   * What is insecure about listening on these addresses with this configuration, one line per
   * server; empty when nothing is.
   */
  public static List<String> problems(String grpcHost, String httpHost, SecurityConfig s) {
    List<String> out = new ArrayList<>();
    String missing =
        !s.tlsEnabled() && !s.authEnabled()
            ? "without TLS and without authentication"
            : !s.tlsEnabled() ? "without TLS" : !s.authEnabled() ? "without authentication" : null;
    if (missing == null) {
      return out;
    }
    if (!loopback(grpcHost)) {
      out.add("gRPC listens on " + grpcHost + " (beyond loopback) " + missing);
    }
    if (!loopback(httpHost)) {
      out.add("HTTP listens on " + httpHost + " (beyond loopback) " + missing);
    }
    return out;
  }

  /** The message a refused start gives. */
  public static String refusal(List<String> problems) {
    return "refusing to start: "
        + String.join("; ", problems)
        + ". Configure tls and auth in sluice.yaml, bind to 127.0.0.1 (grpc_bind, http_bind), or"
        + " set allow_insecure: true to accept the risk";
  }
}
