package dev.sluice.manager.cli;

import dev.sluice.manager.security.AuthInterceptor;
import dev.sluice.proto.v1.AdminGrpc;
import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.stub.MetadataUtils;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import picocli.CommandLine.Option;

/**
 * {@code --manager HOST:PORT} with {@code --ca} and a token: the commands that can act through a
 * manager's Admin API instead of the database. The token comes from {@code --token-file} or the
 * variable {@code SLUICE_TOKEN}, never from the command line; it is sent only over TLS, or in clear
 * to a loopback address.
 */
public final class ManagerOption {
  static final String TOKEN_ENV = "SLUICE_TOKEN";

  private static final Set<String> LOOPBACK = Set.of("localhost", "127.0.0.1", "::1", "[::1]");

  @Option(
      names = "--manager",
      paramLabel = "HOST:PORT",
      description =
          "Act through this manager's Admin API (gRPC) instead of the database: no database"
              + " credentials needed; the manager checks the grant and audits the call.")
  String manager;

  @Option(
      names = "--ca",
      paramLabel = "FILE",
      description = "With --manager: use TLS, trusting this CA certificate (PEM).")
  Path ca;

  @Option(
      names = "--token-file",
      paramLabel = "FILE",
      description = "With --manager: the bearer token, read from this file (else $SLUICE_TOKEN).")
  Path tokenFile;

  boolean given() {
    return manager != null;
  }

  /**
   * Runs {@code body} with a stub of the manager's Admin service; gRPC errors become exit codes.
   */
  <T> T call(Function<AdminGrpc.AdminBlockingStub, T> body) {
    int colon = manager.lastIndexOf(':');
    int port;
    try {
      port = Integer.parseInt(manager.substring(colon + 1));
    } catch (RuntimeException e) {
      throw CliException.badInput("--manager must be HOST:PORT, was '" + manager + "'");
    }
    String host = colon > 0 ? manager.substring(0, colon) : "";
    if (host.isEmpty() || port < 1 || port > 65535) {
      throw CliException.badInput("--manager must be HOST:PORT, was '" + manager + "'");
    }
    String token = token();
    if (token != null && ca == null && !LOOPBACK.contains(host)) {
      throw CliException.badInput(
          "--manager "
              + manager
              + ": give --ca to use TLS; a token is sent in clear only to a"
              + " loopback address");
    }
    ChannelCredentials creds;
    try {
      creds =
          ca == null
              ? InsecureChannelCredentials.create()
              : TlsChannelCredentials.newBuilder().trustManager(ca.toFile()).build();
    } catch (IOException e) {
      throw CliException.badInput("--ca " + ca + ": " + e.getMessage());
    }
    ManagedChannel ch = Grpc.newChannelBuilderForAddress(host, port, creds).build();
    try {
      AdminGrpc.AdminBlockingStub stub =
          AdminGrpc.newBlockingStub(ch).withDeadlineAfter(5, TimeUnit.MINUTES);
      if (token != null) {
        Metadata md = new Metadata();
        md.put(AuthInterceptor.AUTHORIZATION, "Bearer " + token);
        stub = stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
      }
      return body.apply(stub);
    } catch (StatusRuntimeException e) {
      String what =
          "manager "
              + manager
              + ": "
              + e.getStatus().getCode()
              + ": "
              + e.getStatus().getDescription();
      throw switch (e.getStatus().getCode()) {
        case INVALID_ARGUMENT, NOT_FOUND, PERMISSION_DENIED, UNAUTHENTICATED, FAILED_PRECONDITION ->
            CliException.badInput(what);
        default -> CliException.failed(what);
      };
    } finally {
      ch.shutdownNow();
    }
  }

  private String token() {
    if (tokenFile != null) {
      try {
        return Files.readString(tokenFile, StandardCharsets.UTF_8).strip();
      } catch (IOException e) {
        throw CliException.badInput("--token-file " + tokenFile + ": " + e.getMessage());
      }
    }
    String env = System.getenv(TOKEN_ENV);
    return env == null || env.isBlank() ? null : env.strip();
  }
}
