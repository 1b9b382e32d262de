package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sluice.core.config.ShardConfig;
import dev.sluice.db.DataSources;
import dev.sluice.db.SluiceMigrations;
import dev.sluice.manager.SluiceServer;
import dev.sluice.manager.config.ManagerConfig;
import dev.sluice.manager.security.Action;
import dev.sluice.manager.security.Authenticator;
import dev.sluice.manager.security.Grant;
import dev.sluice.manager.security.Limits;
import dev.sluice.manager.security.Principal;
import dev.sluice.manager.security.SecurityConfig;
import dev.sluice.manager.security.TlsConfig;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import dev.sluice.testkit.TestPki;
import io.grpc.Status;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The {@link SluiceAdmin} bean against a manager with TLS and tokens: it sends its token over TLS,
 * a principal with only {@code stats} lists the queues but may not pause them (PERMISSION_DENIED,
 * naming the queue), and {@code sluice.admin.token} overrides the receivers' token.
 */
class SluiceAdminGrantsTest {
  static TestDatabase db;
  static SluiceServer server;
  static TestPki pki;

  @BeforeAll
  static void start() throws Exception {
    db = TestDatabases.fresh(SluiceAdminGrantsTest.class);
    try (var pool = DataSources.pool("grants-migrate", db.url(), db.user(), db.password(), 2)) {
      SluiceMigrations.migrate(pool, List.of("classpath:db/admin"));
    }
    pki = TestPki.create(Files.createTempDirectory("sluice-admin-grants"), "grants");
    TestPki.Issued cert = pki.server("server");
    SecurityConfig security =
        new SecurityConfig(
            new TlsConfig(
                cert.cert(), cert.key(), pki.caFile(), false, TlsConfig.DEFAULT_RELOAD_INTERVAL),
            List.of(principal("ops", Action.ADMIN), principal("viewer", Action.STATS)),
            true,
            true,
            false);
    ManagerConfig config =
        ManagerConfig.builder()
            .managerId("grants")
            .grpcHost("127.0.0.1")
            .grpcPort(0)
            .httpHost("127.0.0.1")
            .httpPort(0)
            .shard(new ShardConfig("test", db.url(), db.user(), db.password(), 4))
            .discoveryInterval(Duration.ofMillis(200))
            .shutdownTimeout(Duration.ofSeconds(3))
            .security(security)
            .build();
    server = new SluiceServer(config, Clock.systemUTC(), new SimpleMeterRegistry()).start();
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
  }

  static Principal principal(String name, Action action) {
    return new Principal(
        name,
        Authenticator.sha256(name + "-token"),
        null,
        List.of(new Grant(List.of("*"), EnumSet.of(action), List.of())),
        Limits.NONE);
  }

  private ApplicationContextRunner app(String... properties) {
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
        .withPropertyValues(
            "sluice.admin.enabled=true",
            "sluice.receiver.targets=127.0.0.1:" + server.port(),
            "sluice.receiver.tls.ca-file=" + pki.caFile())
        .withPropertyValues(properties);
  }

  @Test
  void aStatsPrincipalListsButMayNotPause() {
    app("sluice.receiver.token=viewer-token")
        .run(
            ctx -> {
              SluiceAdmin admin = ctx.getBean(SluiceAdmin.class);
              await()
                  .atMost(Duration.ofSeconds(20))
                  .until(
                      () ->
                          admin.listQueues().stream()
                              .anyMatch(q -> q.getName().equals("fragile_events")));
              assertThatThrownBy(() -> admin.pause("fragile_events", null))
                  .isInstanceOfSatisfying(
                      SluiceAdminException.class,
                      e -> assertThat(e.code()).isEqualTo(Status.Code.PERMISSION_DENIED))
                  .hasMessageContaining("fragile_events");
            });
  }

  @Test
  void theAdminTokenWinsOverTheReceiversToken() {
    app("sluice.receiver.token=viewer-token", "sluice.admin.token=ops-token")
        .run(
            ctx -> {
              SluiceAdmin admin = ctx.getBean(SluiceAdmin.class);
              assertThat(admin.pause("fragile_events", null)).containsExactly("test");
              assertThat(admin.resume("fragile_events", null)).containsExactly("test");
            });
  }

  @Test
  void withoutATokenTheManagerRefuses() {
    app()
        .run(
            ctx ->
                assertThatThrownBy(() -> ctx.getBean(SluiceAdmin.class).listQueues())
                    .isInstanceOfSatisfying(
                        SluiceAdminException.class,
                        e -> assertThat(e.code()).isEqualTo(Status.Code.UNAUTHENTICATED)));
  }
}
