package dev.sluice.manager.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.config.TenantLimit;
import dev.sluice.db.KeyRange;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigLoaderTest {
  @TempDir Path dir;

  ManagerConfig load(String yaml, Map<String, String> env) throws Exception {
    Path f = dir.resolve("sluice.yaml");
    Files.writeString(f, yaml);
    return new ConfigLoader(env::get).load(f);
  }

  @Test
  void readsSettingsAndSecretsFromTheEnvironment() throws Exception {
    ManagerConfig c =
        load(
            "manager_id: m1\ngrpc_port: 9000\ndiscovery_interval: 2s\nshards:\n"
                + "  - name: main\n    url: jdbc:mysql://db:3306/app\n    user: sluice\n"
                + "    password: ${DB_PASSWORD}\n    pool_size: ${POOL:-6}\n",
            Map.of("DB_PASSWORD", "s3cret"));
    assertThat(c.managerId()).isEqualTo("m1");
    assertThat(c.grpcPort()).isEqualTo(9000);
    assertThat(c.discoveryInterval()).isEqualTo(Duration.ofSeconds(2));
    assertThat(c.shards()).hasSize(1);
    assertThat(c.shards().get(0).password()).isEqualTo("s3cret");
    assertThat(c.shards().get(0).poolSize()).isEqualTo(6);
    assertThat(c.shards().get(0).toString()).doesNotContain("s3cret").contains("****");
  }

  @Test
  void readsLeaseSettingsAndKeyRanges() throws Exception {
    ManagerConfig c =
        load(
            "lease_ttl: 3s\nlease_renew: 750ms\nforget_delay: 10s\nshards:\n"
                + "  - {name: lo, url: 'jdbc:mysql://a/q', key_range: -80}\n"
                + "  - {name: hi, url: 'jdbc:mysql://b/q', key_range: '80-'}\n"
                + "  - {name: all, url: 'jdbc:mysql://c/q'}\n",
            Map.of());
    assertThat(c.leaseTtl()).isEqualTo(Duration.ofSeconds(3));
    assertThat(c.leaseRenew()).isEqualTo(Duration.ofMillis(750));
    assertThat(c.forgetDelay()).isEqualTo(Duration.ofSeconds(10));
    assertThat(c.shards().get(0).keyRange()).isEqualTo(KeyRange.parse("-80"));
    assertThat(c.shards().get(1).keyRange()).isEqualTo(KeyRange.parse("80-"));
    assertThat(c.shards().get(2).keyRange()).isEqualTo(KeyRange.ALL);
    assertThatThrownBy(
            () ->
                load(
                    "shards:\n  - {name: x, url: 'jdbc:mysql://a/q', key_range: '8-'}\n", Map.of()))
        .hasMessageContaining("shards[x].key_range")
        .hasMessageContaining("'8-' is not valid");
    assertThatThrownBy(
            () ->
                load(
                    "lease_ttl: 2s\nlease_renew: 1500ms\nshards:\n"
                        + "  - {name: x, url: 'jdbc:mysql://a/q'}\n",
                    Map.of()))
        .hasMessageContaining("lease_renew must be positive and at most half of lease_ttl");
  }

  @Test
  void readsPerTenantLimits() throws Exception {
    ManagerConfig c =
        load(
            "shards:\n  - {name: a, url: 'jdbc:mysql://a/q'}\ntenant_limits:\n"
                + "  - {tenant: acme, cache_share: 60%, max_in_flight: 200}\n"
                + "  - {tenant: noisy, queue: orders, max_rate: 5, burst: 2}\n"
                + "  - {tenant: acme, queue: orders, max_in_flight: 0}\n"
                + "  - {tenant: tiny, queue: orders, cache_share: '5'}\n",
            Map.of());
    assertThat(c.tenantLimits())
        .containsExactly(
            new TenantLimit("*", "acme", 60, 200),
            new TenantLimit("orders", "noisy", null, null, 5, 2),
            new TenantLimit("orders", "acme", null, 0),
            new TenantLimit("orders", "tiny", 5, null));
    assertThat(c.tenantLimitsFor("orders")).hasSize(4);
    assertThat(c.tenantLimitsFor("payments"))
        .containsExactly(new TenantLimit("*", "acme", 60, 200));
  }

  @Test
  void refusesBadTenantLimits() {
    String shards = "shards:\n  - {name: a, url: 'jdbc:mysql://a/q'}\n";
    assertThatThrownBy(() -> load(shards + "tenant_limits:\n  - {cache_share: 10%}\n", Map.of()))
        .hasMessageContaining("tenant_limits[]: 'tenant' is required");
    assertThatThrownBy(() -> load(shards + "tenant_limits:\n  - {tenant: a}\n", Map.of()))
        .hasMessageContaining(
            "tenant_limits[tenant=a]: give cache_share, max_in_flight, max_rate or burst");
    assertThatThrownBy(
            () -> load(shards + "tenant_limits:\n  - {tenant: a, max_rate: -5}\n", Map.of()))
        .hasMessageContaining("tenant_limits[tenant=a]: max_rate must be 0 (no limit) or more");
    assertThatThrownBy(
            () -> load(shards + "tenant_limits:\n  - {tenant: a, max_rate: fast}\n", Map.of()))
        .hasMessageContaining("max_rate");
    assertThatThrownBy(
            () ->
                load(shards + "tenant_limits:\n  - {tenant: a, max_rate: 5, burst: 0}\n", Map.of()))
        .hasMessageContaining("tenant_limits[tenant=a]: burst must be at least 1 event, was 0");
    assertThatThrownBy(
            () -> load(shards + "tenant_limits:\n  - {tenant: a, cache_share: 150%}\n", Map.of()))
        .hasMessageContaining("cache_share must be 1% to 100%, was 150%");
    assertThatThrownBy(
            () -> load(shards + "tenant_limits:\n  - {tenant: a, cache_share: lots}\n", Map.of()))
        .hasMessageContaining("cache_share must be a percentage such as 50%, was 'lots'");
    assertThatThrownBy(
            () -> load(shards + "tenant_limits:\n  - {tenant: a, max_in_flight: -1}\n", Map.of()))
        .hasMessageContaining("max_in_flight must be 0 (no cap) or more, was -1");
    assertThatThrownBy(
            () -> load(shards + "tenant_limits:\n  - {tenant: a, max_inflight: 3}\n", Map.of()))
        .hasMessageContaining("unknown setting 'tenant_limits[].max_inflight'");
    assertThatThrownBy(
            () ->
                load(
                    shards
                        + "tenant_limits:\n  - {tenant: a, queue: q, max_in_flight: 3}\n"
                        + "  - {tenant: a, queue: q, cache_share: 3%}\n",
                    Map.of()))
        .hasMessageContaining("tenant_limits: tenant 'a' is given twice for queue q");
    assertThatThrownBy(() -> load(shards + "tenant_limits: {a: 1}\n", Map.of()))
        .hasMessageContaining("'tenant_limits' must be a list");
  }

  @Test
  void errorsNameTheSetting() {
    assertThatThrownBy(
            () ->
                load(
                    "shards:\n  - name: a\n    url: jdbc:mysql://x/y\n    password: ${NOPE}\n",
                    Map.of()))
        .hasMessageContaining("password refers to environment variable NOPE, which is not set");
    assertThatThrownBy(() -> load("grpc_prot: 1\nshards: []\n", Map.of()))
        .hasMessageContaining("unknown setting 'grpc_prot'");
    assertThatThrownBy(() -> load("shards: []\n", Map.of()))
        .hasMessageContaining("at least one shard");
    assertThatThrownBy(() -> load("shards:\n  - name: a\n    url: mysql://x\n", Map.of()))
        .hasMessageContaining("shards[a].url must be a JDBC URL");
    assertThatThrownBy(
            () ->
                load(
                    "shards:\n  - {name: a, url: 'jdbc:mysql://x/y'}\n  - {name: a, url: 'jdbc:mysql://x/z'}\n",
                    Map.of()))
        .hasMessageContaining("'a' is used twice");
    assertThatThrownBy(
            () ->
                load(
                    "discovery_interval: soon\nshards:\n  - {name: a, url: 'jdbc:mysql://x/y'}\n",
                    Map.of()))
        .hasMessageContaining("'soon' is not a duration");
    assertThatThrownBy(() -> load(": : :\n", Map.of())).hasMessageContaining("not valid YAML");
  }

  @Test
  void environmentVariablesOverrideTheFile() throws Exception {
    ManagerConfig c =
        load(
            "grpc_port: 9000\nlease_ttl: 3s\nshards:\n"
                + "  - {name: main-eu, url: 'jdbc:mysql://a/q', password: file, pool_size: 4}\n",
            Map.of(
                "SLUICE_GRPC_PORT", "9100",
                "SLUICE_LEASE_TTL", "5s",
                "SLUICE_HTTP_HOST", "0.0.0.0",
                "SLUICE_SHARDS_MAIN_EU_PASSWORD", "from-env",
                "SLUICE_SHARDS_0_POOL_SIZE", "3",
                "SLUICE_SHARDS_1_NAME", "second",
                "SLUICE_SHARDS_1_URL", "jdbc:mysql://b/q",
                "SLUICE_SHARDS_1_KEY_RANGE", "80-"));
    assertThat(c.grpcPort()).isEqualTo(9100);
    assertThat(c.leaseTtl()).isEqualTo(Duration.ofSeconds(5));
    assertThat(c.httpHost()).isEqualTo("0.0.0.0");
    assertThat(c.shards()).hasSize(2);
    assertThat(c.shards().get(0).password()).isEqualTo("from-env");
    assertThat(c.shards().get(0).poolSize()).isEqualTo(3);
    assertThat(c.shards().get(1).name()).isEqualTo("second");
    assertThat(c.shards().get(1).jdbcUrl()).isEqualTo("jdbc:mysql://b/q");
    assertThat(c.shards().get(1).keyRange()).isEqualTo(KeyRange.parse("80-"));
  }

  @Test
  void everyTopLevelSettingHasItsVariable() throws Exception {
    Map<String, String> env =
        Map.ofEntries(
            Map.entry("SLUICE_MANAGER_ID", "m9"),
            Map.entry("SLUICE_GRPC_HOST", "127.0.0.2"),
            Map.entry("SLUICE_GRPC_PORT", "7000"),
            Map.entry("SLUICE_DISCOVERY_INTERVAL", "7s"),
            Map.entry("SLUICE_SHUTDOWN_TIMEOUT", "17s"),
            Map.entry("SLUICE_HTTP_HOST", "127.0.0.3"),
            Map.entry("SLUICE_HTTP_PORT", "7001"),
            Map.entry("SLUICE_MIGRATIONS", "/srv/migrations"),
            Map.entry("SLUICE_LEASE_TTL", "4s"),
            Map.entry("SLUICE_LEASE_RENEW", "1s"),
            Map.entry("SLUICE_FORGET_DELAY", "30s"));
    ManagerConfig c = load("shards:\n  - {name: a, url: 'jdbc:mysql://a/q'}\n", env);
    assertThat(c.managerId()).isEqualTo("m9");
    assertThat(c.grpcHost()).isEqualTo("127.0.0.2");
    assertThat(c.grpcPort()).isEqualTo(7000);
    assertThat(c.discoveryInterval()).isEqualTo(Duration.ofSeconds(7));
    assertThat(c.shutdownTimeout()).isEqualTo(Duration.ofSeconds(17));
    assertThat(c.httpHost()).isEqualTo("127.0.0.3");
    assertThat(c.httpPort()).isEqualTo(7001);
    assertThat(c.migrations()).isEqualTo(Path.of("/srv/migrations"));
    assertThat(c.leaseTtl()).isEqualTo(Duration.ofSeconds(4));
    assertThat(c.leaseRenew()).isEqualTo(Duration.ofSeconds(1));
    assertThat(c.forgetDelay()).isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void theEnvironmentAloneDescribesADeployment() {
    ConfigLoader loader =
        new ConfigLoader(
            Map.of(
                    "SLUICE_GRPC_PORT", "7480",
                    "SLUICE_SHARDS_0_NAME", "main",
                    "SLUICE_SHARDS_0_URL", "jdbc:mysql://db:3306/app",
                    "SLUICE_SHARDS_0_USER", "sluice",
                    "SLUICE_SHARDS_0_PASSWORD", "${DB_PASSWORD}",
                    "DB_PASSWORD", "s3cret")
                ::get);
    assertThat(loader.environmentHasShards()).isTrue();
    ManagerConfig c = loader.loadEnvironment();
    assertThat(c.grpcPort()).isEqualTo(7480);
    assertThat(c.shards()).singleElement().satisfies(s -> assertThat(s.name()).isEqualTo("main"));
    assertThat(c.shards().get(0).password()).isEqualTo("s3cret");
    assertThat(new ConfigLoader(Map.<String, String>of()::get).environmentHasShards()).isFalse();
    assertThatThrownBy(() -> new ConfigLoader(Map.<String, String>of()::get).loadEnvironment())
        .hasMessageContaining("shards");
  }

  @Test
  void aBadVariableIsReportedByItsSetting() {
    assertThatThrownBy(
            () ->
                load(
                    "shards:\n  - {name: a, url: 'jdbc:mysql://a/q'}\n",
                    Map.of("SLUICE_GRPC_PORT", "seventy")))
        .hasMessageContaining("grpc_port")
        .hasMessageContaining("seventy");
  }
}
