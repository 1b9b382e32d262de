package dev.sluice.manager.security;

import dev.sluice.proto.v1.SluiceGrpc;
import dev.sluice.testkit.TestPki;
import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.TlsChannelCredentials;
import io.grpc.stub.AbstractStub;
import io.grpc.stub.MetadataUtils;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Channels to a secured manager as different callers would open them; closes them all. */
final class SecureClients implements AutoCloseable {
  private final List<ManagedChannel> channels = new ArrayList<>();

  /** A TLS channel trusting {@code ca}, presenting {@code cert} when not null. */
  ManagedChannel tls(int port, Path ca, TestPki.Issued cert) {
    try {
      TlsChannelCredentials.Builder b =
          TlsChannelCredentials.newBuilder().trustManager(ca.toFile());
      if (cert != null) {
        b.keyManager(cert.cert().toFile(), cert.key().toFile());
      }
      return add(b.build(), port);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A plain-text channel. */
  ManagedChannel plain(int port) {
    return add(InsecureChannelCredentials.create(), port);
  }

  private ManagedChannel add(ChannelCredentials c, int port) {
    ManagedChannel ch = Grpc.newChannelBuilderForAddress("localhost", port, c).build();
    channels.add(ch);
    return ch;
  }

  /** {@code stub} sending {@code Authorization: Bearer token}. */
  static <S extends AbstractStub<S>> S withToken(S stub, String token) {
    Metadata md = new Metadata();
    md.put(AuthInterceptor.AUTHORIZATION, "Bearer " + token);
    return stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
  }

  static SluiceGrpc.SluiceBlockingStub blocking(ManagedChannel ch, String token) {
    SluiceGrpc.SluiceBlockingStub s =
        SluiceGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS);
    return token == null ? s : withToken(s, token);
  }

  static SluiceGrpc.SluiceStub async(ManagedChannel ch, String token) {
    SluiceGrpc.SluiceStub s = SluiceGrpc.newStub(ch);
    return token == null ? s : withToken(s, token);
  }

  @Override
  public void close() {
    channels.forEach(ManagedChannel::shutdownNow);
  }
}
