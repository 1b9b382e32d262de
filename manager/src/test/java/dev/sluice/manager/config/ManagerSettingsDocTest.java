package dev.sluice.manager.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.ReadmeTables;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The manager settings reference (docs/reference/manager-settings.md) is what they render. */
class ManagerSettingsDocTest {

  @Test
  void theReadmeTableIsRenderedFromTheDefinitions() {
    Path page = ReadmeTables.page("docs/reference/manager-settings.md");
    String rendered = ReadmeTables.placed(page, ManagerSettings.markdown());
    assertThat(ReadmeTables.between(page, ManagerSettings.BEGIN, ManagerSettings.END, rendered))
        .as(
            "docs/reference/manager-settings.md's table differs from ManagerSettings.ALL; regenerate it"
                + " with ./mvnw -o -q -B test -pl manager -am -Dtest=ManagerSettingsDocTest"
                + " -Dsurefire.failIfNoSpecifiedTests=false -Dsluice.docs.write=true (then review"
                + " the diff)")
        .isEqualTo(rendered);
  }

  @Test
  void everySettingIsReadFromItsEnvironmentVariable() {
    ConfigLoader loader =
        new ConfigLoader(
            Map.of(
                    "SLUICE_SHARDS_0_NAME",
                    "a",
                    "SLUICE_SHARDS_0_URL",
                    "jdbc:mysql://a/q",
                    ManagerSettings.FORGET_DELAY.env(),
                    "7s",
                    ManagerSettings.GRPC_KEEPALIVE_TIMEOUT.env(),
                    "3s",
                    ManagerSettings.HTTP_PORT.env(),
                    "9000")
                ::get);
    ManagerConfig c = loader.loadEnvironment();
    assertThat(c.forgetDelay()).hasSeconds(7);
    assertThat(c.grpcKeepaliveTimeout()).hasSeconds(3);
    assertThat(c.httpPort()).isEqualTo(9000);
    assertThat(ManagerSettings.FORGET_DELAY.env()).isEqualTo("SLUICE_FORGET_DELAY");
  }

  @Test
  void everyBoundIsChecked() {
    for (ManagerSetting<?> s : ManagerSettings.ALL) {
      assertThat(s.doc()).as(s.name()).isNotBlank();
    }
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () ->
                ManagerConfig.builder()
                    .shard("a", "jdbc:mysql://a/q", null, null)
                    .forgetDelay(java.time.Duration.ofSeconds(-1))
                    .build())
        .hasMessage("forget_delay must be 0 or more, was -1000ms");
  }
}
