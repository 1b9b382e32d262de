package dev.sluice.manager.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.manager.Harness;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code sluice check} reports a configuration that exposes an unprotected manager. */
class SecurityCheckCommandTest {
  static Harness h;
  @TempDir Path dir;

  @BeforeAll
  static void start() {
    h = new Harness(SecurityCheckCommandTest.class);
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  @Test
  void anExposedUnprotectedManagerIsAProblemAndAllowInsecureAWarning() throws Exception {
    Path config = Cli.config(dir, h);
    Cli.Result safe = Cli.run("check", "-c", config.toString());
    assertThat(safe.out()).doesNotContain("insecure");

    Files.writeString(config, "grpc_bind: 0.0.0.0:7470\n" + Files.readString(config));
    Cli.Result r = Cli.run("check", "-c", config.toString());
    assertThat(r.code()).as(r.toString()).isEqualTo(1);
    assertThat(r.out())
        .contains("insecure: gRPC listens on 0.0.0.0 (beyond loopback) without TLS and without")
        .contains("allow_insecure");

    Files.writeString(config, "allow_insecure: true\n" + Files.readString(config));
    Cli.Result allowed = Cli.run("check", "-c", config.toString());
    assertThat(allowed.code()).as(allowed.toString()).isZero();
    assertThat(allowed.out()).contains("INSECURE (allow_insecure: true): gRPC listens on 0.0.0.0");
  }
}
