package dev.sluice.examples.demo;

import dev.sluice.manager.security.Action;
import dev.sluice.manager.security.Authenticator;
import dev.sluice.manager.security.Grant;
import dev.sluice.manager.security.Limits;
import dev.sluice.manager.security.Principal;
import dev.sluice.manager.security.SecurityConfig;
import dev.sluice.manager.security.TlsConfig;
import dev.sluice.receiver.SluiceReceiverBuilder;
import dev.sluice.testkit.TestPki;
import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.TlsChannelCredentials;
import io.grpc.stub.AbstractStub;
import io.grpc.stub.MetadataUtils;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;

/**
 * The secure demo's PKI and principals, made at start in a temp directory: a CA, the manager's
 * certificate, client certificates (mutual TLS is required of every caller), and random tokens.
 *
 * <ul>
 *   <li>{@code demo-receivers} may subscribe to the demo queue (the legitimate receivers);
 *   <li>{@code demo-app} may cancel its events (the producer's canceller);
 *   <li>{@code ops} may read stats everywhere (the status page);
 *   <li>{@code intruder} holds a valid certificate and token with grants on another queue only;
 *   <li>{@code snoop} may subscribe to the demo queue but only for a tenant that never occurs, so
 *       it receives nothing: it is there to forge acks for others' deliveries.
 * </ul>
 */
final class DemoSecurity {
  static final String OTHER_QUEUE = "other_events";
  static final String NO_TENANT = "no-such-tenant";

  final Path dir;
  final TestPki ca;
  final TestPki otherCa;
  final TestPki.Issued server;
  final TestPki.Issued receiversCert;
  final TestPki.Issued attackerCert;
  final TestPki.Issued expiredCert;
  final TestPki.Issued foreignCert;
  final String receiversToken = token();
  final String appToken = token();
  final String opsToken = token();
  final String intruderToken = token();
  final String snoopToken = token();

  DemoSecurity() throws IOException {
    dir = Files.createTempDirectory("sluice-demo-pki-");
    ca = TestPki.create(dir, "demo");
    otherCa = TestPki.create(dir, "rogue");
    server = ca.server("manager");
    receiversCert = ca.client("receivers", "demo-receivers");
    attackerCert = ca.client("attacker", "attacker-host");
    expiredCert = ca.expiredClient("expired", "demo-receivers");
    foreignCert = otherCa.client("foreign", "demo-receivers");
  }

  SecurityConfig config(String queue) {
    return new SecurityConfig(
        new TlsConfig(
            server.cert(), server.key(), ca.caFile(), true, TlsConfig.DEFAULT_RELOAD_INTERVAL),
        List.of(
            principal("demo-receivers", receiversToken, grant(queue, List.of(), Action.SUBSCRIBE)),
            principal("demo-app", appToken, grant(queue, List.of(), Action.CANCEL, Action.STATS)),
            principal("ops", opsToken, grant("*", List.of(), Action.STATS, Action.ADMIN)),
            principal(
                "intruder",
                intruderToken,
                grant(OTHER_QUEUE, List.of(), Action.SUBSCRIBE, Action.CANCEL, Action.STATS)),
            principal("snoop", snoopToken, grant(queue, List.of(NO_TENANT), Action.SUBSCRIBE))),
        true,
        true,
        false);
  }

  /** Mutual TLS and the legitimate receivers' token on an SDK receiver. */
  SluiceReceiverBuilder receiver(SluiceReceiverBuilder b) {
    return b.tls(ca.caFile())
        .clientCertificate(receiversCert.cert(), receiversCert.key())
        .token(receiversToken);
  }

  /** A channel presenting {@code cert} (null = none) and trusting the demo CA. */
  static ManagedChannel channel(String target, Path trusted, TestPki.Issued cert) {
    try {
      TlsChannelCredentials.Builder b =
          TlsChannelCredentials.newBuilder().trustManager(trusted.toFile());
      if (cert != null) {
        b.keyManager(cert.cert().toFile(), cert.key().toFile());
      }
      ChannelCredentials c = b.build();
      return Grpc.newChannelBuilder(target.replace("127.0.0.1", "localhost"), c).build();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The app's channel for cancels: mutual TLS with the receivers' certificate's host. */
  ManagedChannel appChannel(String target) {
    return channel(target, ca.caFile(), receiversCert);
  }

  static <S extends AbstractStub<S>> S withToken(S stub, String token) {
    if (token == null) {
      return stub;
    }
    Metadata md = new Metadata();
    md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
    return stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
  }

  private static Principal principal(String name, String token, Grant grant) {
    return new Principal(name, Authenticator.sha256(token), null, List.of(grant), Limits.NONE);
  }

  private static Grant grant(String queue, List<String> tenants, Action... actions) {
    return new Grant(List.of(queue), EnumSet.of(actions[0], actions), tenants);
  }

  private static String token() {
    byte[] b = new byte[24];
    new SecureRandom().nextBytes(b);
    return HexFormat.of().formatHex(b);
  }
}
