package dev.sluice.manager.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The operators' settings: the HTTP port and the user's migration directory. */
class OpsSettingsTest {
  @TempDir Path dir;

  static final String SHARD = "shards:\n  - name: main\n    url: jdbc:mysql://db:3306/app\n";

  ManagerConfig load(Path file, String yaml) throws Exception {
    Files.createDirectories(file.getParent());
    Files.writeString(file, yaml);
    return new ConfigLoader(Map.<String, String>of()::get).load(file);
  }

  @Test
  void defaultsArePort7471OnLoopbackAndDbMigrationBesideTheConfigFile() throws Exception {
    ManagerConfig c = load(dir.resolve("conf/sluice.yaml"), SHARD);
    assertThat(c.httpPort()).isEqualTo(7471);
    assertThat(c.httpHost()).isEqualTo("127.0.0.1");
    assertThat(c.grpcHost()).isEqualTo("127.0.0.1");
    assertThat(c.migrations()).isEqualTo(dir.resolve("conf/db/migration"));
  }

  @Test
  void readsHttpAndMigrations() throws Exception {
    ManagerConfig c =
        load(
            dir.resolve("sluice.yaml"),
            "http_host: 127.0.0.1\nhttp_port: 0\nmigrations: sql/queues\n" + SHARD);
    assertThat(c.httpPort()).isZero();
    assertThat(c.httpHost()).isEqualTo("127.0.0.1");
    assertThat(c.migrations()).isEqualTo(dir.resolve("sql/queues"));
    Path abs = dir.resolve("elsewhere").toAbsolutePath();
    assertThat(load(dir.resolve("b.yaml"), "migrations: " + abs + "\n" + SHARD).migrations())
        .isEqualTo(abs);
  }

  @Test
  void aFreeGrpcPortMeansAFreeHttpPortUnlessOneIsGiven() {
    ManagerConfig.Builder b =
        ManagerConfig.builder().grpcPort(0).shard("s", "jdbc:mysql://x/y", null, null);
    assertThat(b.build().httpPort()).isZero();
    assertThat(b.httpPort(8080).build().httpPort()).isEqualTo(8080);
  }

  @Test
  void badValuesNameTheSetting() {
    assertThatThrownBy(() -> load(dir.resolve("c.yaml"), "http_port: 70000\n" + SHARD))
        .hasMessageContaining("http_port must be 0-65535");
    assertThatThrownBy(() -> load(dir.resolve("d.yaml"), "http_port: web\n" + SHARD))
        .hasMessageContaining("http_port must be a whole number");
    assertThatThrownBy(() -> load(dir.resolve("e.yaml"), "migrations: ''\n" + SHARD))
        .hasMessageContaining("migrations must name a directory");
  }
}
