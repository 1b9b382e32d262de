package dev.sluice.receiver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ManagedChannelBuilder;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The builder's TLS and token settings are checked, and the token never shows. */
class ChannelSecurityTest {
  private static SluiceReceiverBuilder base() {
    return SluiceReceiver.builder().target("localhost:1").queue("q").handler(e -> {});
  }

  @Test
  void aClientCertificateNeedsItsKeyAndACa() {
    assertThatThrownBy(
            () -> base().clientCertificate(Path.of("c.pem"), null).tls(Path.of("ca.pem")).build())
        .hasMessageContaining("clientCertificate needs both");
    assertThatThrownBy(() -> base().clientCertificate(Path.of("c.pem"), Path.of("k.pem")).build())
        .hasMessageContaining("needs tls(caFile)");
    assertThatThrownBy(() -> base().token(" ").build())
        .hasMessageContaining("token must not be blank");
  }

  @Test
  void securityIsForTargetsNotForTheCallersChannel() {
    assertThatThrownBy(
            () ->
                SluiceReceiver.builder()
                    .channel(ManagedChannelBuilder.forTarget("localhost:1").usePlaintext().build())
                    .queue("q")
                    .handler(e -> {})
                    .token("t")
                    .build())
        .hasMessageContaining("set them on your own channel");
  }

  @Test
  void theTokenNeverShows() {
    ChannelSecurity s = new ChannelSecurity(Path.of("ca.pem"), null, null, "s3cret-token");
    assertThat(s.toString()).doesNotContain("s3cret-token").contains("(hidden)");
  }
}
