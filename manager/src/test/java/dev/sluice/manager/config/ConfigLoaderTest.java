package dev.sluice.manager.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
                + "  - {tenant: acme, queue: orders, max_in_flight: 0}\n"
                + "  - {tenant: tiny, queue: orders, cache_share: '5'}\n",
            Map.of());
    assertThat(c.tenantLimits())
        .containsExactly(
            new TenantLimit("*", "acme", 60, 200),
            new TenantLimit("orders", "acme", null, 0),
            new TenantLimit("orders", "tiny", 5, null));
    assertThat(c.tenantLimitsFor("orders")).hasSize(3);
    assertThat(c.tenantLimitsFor("payments"))
        .containsExactly(new TenantLimit("*", "acme", 60, 200));
  }

  @Test
  void refusesBadTenantLimits() {
    String shards = "shards:\n  - {name: a, url: 'jdbc:mysql://a/q'}\n";
    assertThatThrownBy(() -> load(shards + "tenant_limits:\n  - {cache_share: 10%}\n", Map.of()))
        .hasMessageContaining("tenant_limits[]: 'tenant' is required");
    assertThatThrownBy(() -> load(shards + "tenant_limits:\n  - {tenant: a}\n", Map.of()))
        .hasMessageContaining("tenant_limits[tenant=a]: give cache_share, max_in_flight or both");
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
}
