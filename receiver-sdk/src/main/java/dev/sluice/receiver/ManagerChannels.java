package dev.sluice.receiver;

import io.grpc.ManagedChannel;
import java.nio.file.Path;

/**
 * Opens a gRPC channel to a manager the way the receiver opens its own (same TLS, client
 * certificate, bearer token and channel settings), for other clients of the manager's services,
 * e.g. {@code sluice.v1.Admin}. The caller owns the channel and shuts it down.
 */
public final class ManagerChannels {
  private ManagerChannels() {}

  /**
   * A channel to {@code target} ({@code host:port}).
   *
   * @param ca PEM CA certificates to trust; null = plain text
   * @param cert PEM client certificate chain for mutual TLS, or null (with {@code key})
   * @param key PEM (PKCS#8) key of {@code cert}, or null
   * @param token bearer token sent with every call, or null
   * @throws IllegalArgumentException for settings that do not go together
   */
  public static ManagedChannel open(String target, Path ca, Path cert, Path key, String token) {
    return new ChannelSecurity(ca, cert, key, token).open(target);
  }
}
