package dev.sluice.manager.security;

import io.grpc.InsecureServerCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything a manager process needs to serve securely, built from its {@link SecurityConfig}: the
 * TLS files (shared by both servers), the gRPC interceptor, the stream guard with delivery tokens,
 * the HTTP access rule, and the safe-default check. {@link #close()} stops the TLS reloader.
 */
public final class ServerSecurity implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ServerSecurity.class);

  private final SecurityConfig config;
  private final AuthDenials denials;
  private final TlsFiles tls;
  private final AuthInterceptor interceptor;
  private final StreamGuard guard;
  private final HttpAccess http;

  /**
   * @param shardKeys each shard's delivery-token key by shard name (null while unknown)
   */
  public ServerSecurity(
      SecurityConfig config, MeterRegistry registry, Function<String, byte[]> shardKeys) {
    this.config = config;
    this.denials = new AuthDenials(registry, System::nanoTime);
    this.tls = config.tlsEnabled() ? new TlsFiles(config.tls()) : null;
    this.interceptor = new AuthInterceptor(config, denials);
    this.guard =
        new StreamGuard(
            config.authEnabled(), denials, new DeliveryTokens(shardKeys), System::nanoTime);
    this.http = new HttpAccess(config, new Authenticator(config.principals()), denials);
  }

  /**
   * Applies the safe-default rule to these addresses. Returns the warnings to show (empty when the
   * configuration is safe).
   *
   * @throws IllegalStateException naming {@code allow_insecure} when listening beyond loopback
   *     without TLS and authentication, and not allowed to
   */
  public List<String> checkExposure(String grpcHost, String httpHost) {
    List<String> problems = Exposure.problems(grpcHost, httpHost, config);
    if (problems.isEmpty()) {
      return List.of();
    }
    if (!config.allowInsecure()) {
      throw new IllegalStateException(Exposure.refusal(problems));
    }
    List<String> warnings =
        problems.stream().map(p -> "INSECURE (allow_insecure: true): " + p).toList();
    warnings.forEach(log::warn);
    return warnings;
  }

  /** A Netty server builder on {@code addr}, with TLS when configured and the auth interceptor. */
  public NettyServerBuilder grpcServer(InetSocketAddress addr) {
    NettyServerBuilder b =
        NettyServerBuilder.forAddress(
            addr, tls != null ? tls.grpcCredentials() : InsecureServerCredentials.create());
    b.intercept(interceptor);
    return b;
  }

  public StreamGuard guard() {
    return guard;
  }

  public HttpAccess http() {
    return http;
  }

  /** The TLS files, or null for plain text. */
  public TlsFiles tls() {
    return tls;
  }

  public AuthDenials denials() {
    return denials;
  }

  public SecurityConfig config() {
    return config;
  }

  @Override
  public void close() {
    if (tls != null) {
      tls.close();
    }
  }
}
