package dev.sluice.test;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * How a container is told ready, by image, checked on the log lines the images write (no Docker
 * needed): the wait must not end on the entry point's first server.
 */
class DockerDatabaseTest {
  static final List<String> MYSQL_84_LOG =
      List.of(
          "2026-01-01T10:00:01.000000Z 0 [System] [MY-011323] [Server] X Plugin ready for"
              + " connections. Socket: /var/run/mysqld/mysqlx.sock\n",
          "2026-01-01T10:00:01.100000Z 0 [System] [MY-010931] [Server] /usr/sbin/mysqld: ready for"
              + " connections. Version: '8.4.7'  socket: '/var/run/mysqld/mysqld.sock'  port: 0 "
              + " MySQL Community Server - GPL.\n",
          "2026-01-01T10:00:06.000000Z 0 [System] [MY-011323] [Server] X Plugin ready for"
              + " connections. Bind-address: '::' port: 33060, socket:"
              + " /var/run/mysqld/mysqlx.sock\n",
          "2026-01-01T10:00:06.100000Z 0 [System] [MY-010931] [Server] /usr/sbin/mysqld: ready for"
              + " connections. Version: '8.4.7'  socket: '/var/run/mysqld/mysqld.sock'  port: 3306 "
              + " MySQL Community Server - GPL.\n");

  @Test
  void aMySqlContainerIsReadyOnlyWhenMysqldListensOnItsPort() {
    for (String image : List.of("mysql:8.4", "mysql:8.0", "mysql/mysql-server:8.0")) {
      assertThat(DockerDatabase.isMySql(image)).as(image).isTrue();
      assertThat(DockerDatabase.readyLines(image)).isEqualTo(1);
      String regex = DockerDatabase.readyLine(image);
      assertThat(MYSQL_84_LOG.stream().filter(l -> l.matches(regex)))
          .as(image)
          .containsExactly(MYSQL_84_LOG.get(3));
      assertThat(DockerDatabase.command(image)).contains("--skip-log-bin");
    }
  }

  @Test
  void aMariaDbContainerIsReadyAtItsSecondServer() {
    String image = "mariadb:10.11";
    assertThat(DockerDatabase.isMySql(image)).isFalse();
    assertThat(DockerDatabase.readyLines(image)).isEqualTo(2);
    String line = "2026-01-01 10:00:06 0 [Note] mariadbd: ready for connections.\n";
    assertThat(line.matches(DockerDatabase.readyLine(image))).isTrue();
    assertThat(DockerDatabase.command(image))
        .containsExactly("--character-set-server=utf8mb4", "--collation-server=utf8mb4_unicode_ci");
  }
}
