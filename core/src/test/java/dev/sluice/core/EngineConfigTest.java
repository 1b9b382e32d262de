package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.config.ShardConfig;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class EngineConfigTest {
  static final ShardConfig SHARD = new ShardConfig("s1", "jdbc:mysql://h/db", "u", "p", 4);

  @Test
  void unsetFieldsTakeTheirDefaults() {
    EngineConfig c = EngineConfig.builder().managerId("m").shard(SHARD).build();
    assertThat(c.discoveryInterval()).isEqualTo(EngineConfig.DEFAULT_DISCOVERY_INTERVAL);
    assertThat(c.shutdownTimeout()).isEqualTo(EngineConfig.DEFAULT_SHUTDOWN_TIMEOUT);
    assertThat(c.leaseTtl()).isEqualTo(EngineConfig.DEFAULT_LEASE_TTL);
    assertThat(c.leaseRenew()).isEqualTo(EngineConfig.DEFAULT_LEASE_RENEW);
    assertThat(c.forgetDelay()).isEqualTo(EngineConfig.DEFAULT_FORGET_DELAY);
    assertThat(c.tenantLimits()).isEmpty();
    assertThat(c.toString()).doesNotContain("password=p");
  }

  @Test
  void buildNamesTheFieldThatIsWrong() {
    assertThatThrownBy(() -> EngineConfig.builder().shard(SHARD).build())
        .hasMessageStartingWith("managerId:");
    assertThatThrownBy(() -> EngineConfig.builder().managerId("m").build())
        .hasMessageStartingWith("shards:");
    assertThatThrownBy(
            () ->
                EngineConfig.builder()
                    .managerId("m")
                    .shard(SHARD)
                    .discoveryInterval(Duration.ZERO)
                    .build())
        .hasMessageStartingWith("discoveryInterval:");
    assertThatThrownBy(
            () ->
                EngineConfig.builder()
                    .managerId("m")
                    .shard(SHARD)
                    .leaseTtl(Duration.ofSeconds(1))
                    .leaseRenew(Duration.ofMillis(600))
                    .build())
        .hasMessageStartingWith("leaseRenew: must be at most half of leaseTtl");
    assertThatThrownBy(
            () ->
                EngineConfig.builder()
                    .managerId("m")
                    .shard(SHARD)
                    .forgetDelay(Duration.ofSeconds(-1))
                    .build())
        .hasMessageStartingWith("forgetDelay:");
  }
}
