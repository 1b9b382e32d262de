package dev.sluice.conformance.receiver;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * What the suite tells a receiver process, from its environment ({@code conformance/CONTRACT.md},
 * "Starting the process").
 *
 * @param targets every manager, {@code host:port}
 * @param queue the queue to receive from
 * @param receiverId the receiver id to subscribe with
 * @param maxInFlight the credits to ask for on each stream
 * @param mode what the handler does
 * @param tlsCa the CA to trust over TLS, or null for plain text
 * @param token the bearer token to send, or null
 */
record ReceiverEnv(
    List<String> targets,
    String queue,
    String receiverId,
    int maxInFlight,
    Mode mode,
    Path tlsCa,
    String token) {

  /** Handler threads: the credits, at most 8 (the contract's bound). */
  int concurrency() {
    return Math.min(maxInFlight, 8);
  }

  /** Reads the settings; throws IllegalArgumentException naming the variable that is wrong. */
  static ReceiverEnv from(Map<String, String> env) {
    List<String> targets =
        Arrays.stream(required(env, "SLUICE_TARGETS").split(","))
            .map(String::strip)
            .filter(t -> !t.isEmpty())
            .toList();
    String inFlight = required(env, "SLUICE_MAX_IN_FLIGHT");
    int maxInFlight;
    try {
      maxInFlight = Integer.parseInt(inFlight.strip());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("SLUICE_MAX_IN_FLIGHT is not a number: " + inFlight);
    }
    String ca = env.get("SLUICE_TLS_CA");
    String token = env.get("SLUICE_TOKEN");
    return new ReceiverEnv(
        targets,
        required(env, "SLUICE_QUEUE"),
        required(env, "SLUICE_RECEIVER_ID"),
        maxInFlight,
        Mode.parse(required(env, "SLUICE_MODE")),
        ca == null || ca.isBlank() ? null : Path.of(ca),
        token == null || token.isEmpty() ? null : token);
  }

  private static String required(Map<String, String> env, String name) {
    String v = env.get(name);
    if (v == null || v.isBlank()) {
      throw new IllegalArgumentException(name + " is not set");
    }
    return v;
  }
}
