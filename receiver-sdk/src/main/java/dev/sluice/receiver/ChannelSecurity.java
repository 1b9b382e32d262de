package dev.sluice.receiver;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ChannelCredentials;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.TlsChannelCredentials;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * How the receiver reaches its managers: plain text, or TLS trusting a CA file, optionally with a
 * client certificate and key (mutual TLS); and optionally a bearer token sent with every call. The
 * token is never logged ({@link #toString()} hides it).
 *
 * @param ca PEM CA certificates to trust; null = plain text
 * @param cert PEM client certificate chain for mutual TLS, or null
 * @param key PEM (PKCS#8) key of {@code cert}, or null
 * @param token bearer token, or null
 */
record ChannelSecurity(Path ca, Path cert, Path key, String token) {
  static final ChannelSecurity PLAINTEXT = new ChannelSecurity(null, null, null, null);

  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  ChannelSecurity {
    if ((cert == null) != (key == null)) {
      throw new IllegalArgumentException(
          "clientCertificate needs both the certificate and the key");
    }
    if (cert != null && ca == null) {
      throw new IllegalArgumentException("clientCertificate needs tls(caFile) too");
    }
    if (token != null && token.isBlank()) {
      throw new IllegalArgumentException("token must not be blank");
    }
  }

  ManagedChannel open(String target) {
    ChannelCredentials creds;
    if (ca == null) {
      creds = InsecureChannelCredentials.create();
    } else {
      try {
        TlsChannelCredentials.Builder b =
            TlsChannelCredentials.newBuilder().trustManager(ca.toFile());
        if (cert != null) {
          b.keyManager(cert.toFile(), key.toFile());
        }
        creds = b.build();
      } catch (IOException e) {
        throw new UncheckedIOException(
            "cannot read the TLS files (ca " + ca + (cert == null ? "" : ", cert " + cert) + ")",
            e);
      }
    }
    ManagedChannelBuilder<?> b = ChannelSettings.apply(Grpc.newChannelBuilder(target, creds));
    if (token != null) {
      b.intercept(new BearerToken("Bearer " + token));
    }
    return b.build();
  }

  @Override
  public String toString() {
    return "ChannelSecurity[ca="
        + ca
        + ", cert="
        + cert
        + ", token="
        + (token == null ? "none" : "(hidden)")
        + "]";
  }

  /** Adds {@code authorization} to every call. */
  private record BearerToken(String header) implements ClientInterceptor {
    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(
        MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
      return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
        @Override
        public void start(Listener<R> listener, Metadata headers) {
          headers.put(AUTHORIZATION, header);
          super.start(listener, headers);
        }
      };
    }

    @Override
    public String toString() {
      return "BearerToken[(hidden)]";
    }
  }
}
