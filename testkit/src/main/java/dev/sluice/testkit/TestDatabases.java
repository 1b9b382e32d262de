package dev.sluice.testkit;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fresh databases for tests: one per test class, on the server named by {@code
 * SLUICE_TEST_JDBC_URL} when it is set (for example {@code
 * jdbc:mysql://127.0.0.1:3306/?user=root}), else on one embedded server shared by the whole JVM:
 * MariaDB 10.11 ({@link EmbeddedMariaDb}), or MySQL 8.0 ({@link EmbeddedMySql}) when {@code
 * SLUICE_TEST_SERVER=mysql8}.
 */
public final class TestDatabases {
  private static final Logger log = LoggerFactory.getLogger(TestDatabases.class);

  /** Environment variable naming an existing server to test against. */
  public static final String ENV_URL = "SLUICE_TEST_JDBC_URL";

  /**
   * Environment variable choosing the embedded server: {@value #MARIADB} (the default) or {@value
   * #MYSQL8}. {@link #ENV_URL} wins over it.
   */
  public static final String ENV_SERVER = "SLUICE_TEST_SERVER";

  public static final String MARIADB = "mariadb";
  public static final String MYSQL8 = "mysql8";

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_]{1,64}");
  private static EmbeddedServer embedded;
  private static boolean externalLogged;

  private TestDatabases() {}

  /** A new, empty database named after the test class, with a random suffix. */
  public static TestDatabase fresh(Class<?> testClass) {
    String base = testClass.getSimpleName().toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]", "_");
    if (base.length() > 40) {
      base = base.substring(0, 40);
    }
    String name = "t_" + base + "_" + Integer.toHexString(ThreadLocalRandom.current().nextInt());
    return create(name);
  }

  /** Creates the named database (it must not exist yet) and returns how to reach it. */
  public static synchronized TestDatabase create(String name) {
    requireName(name);
    String external = System.getenv(ENV_URL);
    if (external != null && !external.isBlank()) {
      String serverUrl = external.trim();
      try (Connection c = DriverManager.getConnection(serverUrl);
          Statement s = c.createStatement()) {
        if (!externalLogged) {
          externalLogged = true;
          try (ResultSet rs = s.executeQuery("SELECT VERSION()")) {
            log.info(
                "tests run on {}={}, server version {}",
                ENV_URL,
                serverUrl.replaceAll("password=[^&]*", "password=***"),
                rs.next() ? rs.getString(1) : "?");
          }
        }
        s.execute("CREATE DATABASE `" + name + "`");
      } catch (SQLException e) {
        throw new IllegalStateException(
            "could not create database " + name + " on " + ENV_URL + "=" + serverUrl, e);
      }
      return new TestDatabase(name, withDatabase(serverUrl, name), null, null);
    }
    if (embedded == null) {
      String kind = serverKind();
      embedded = startEmbedded(kind);
      EmbeddedServer db = embedded;
      relaxDurability(db);
      Runtime.getRuntime().addShutdownHook(new Thread(db::close, "sluice-embedded-server-stop"));
      log.info(
          "tests run on an embedded {} at 127.0.0.1:{} ({}={})",
          db.describe(),
          db.port(),
          ENV_SERVER,
          kind);
    }
    String url = embedded.createDatabase(name);
    return new TestDatabase(name, url, "root", "");
  }

  /**
   * Tests need no durability across a power loss: the redo log is written at each commit and
   * flushed once a second instead of at each commit ({@code innodb_flush_log_at_trx_commit=2}),
   * which takes minutes off the suite on a slow disk. A server restart (the restart tests) keeps
   * every commit, and sets it back to the default, which only slows what follows. The demo and the
   * benchmarks start their servers without it.
   */
  private static void relaxDurability(EmbeddedServer db) {
    try (Connection c = DriverManager.getConnection(db.serverUrl(), "root", "");
        Statement s = c.createStatement()) {
      s.execute("SET GLOBAL innodb_flush_log_at_trx_commit = 2");
    } catch (SQLException e) {
      log.warn("tests: innodb_flush_log_at_trx_commit stays 1: {}", e.getMessage());
    }
  }

  /** The shared embedded server, or null when tests run against {@link #ENV_URL}. */
  public static synchronized EmbeddedServer embedded() {
    return embedded;
  }

  /** The embedded server {@link #ENV_SERVER} asks for: {@value #MARIADB} when it is not set. */
  public static String serverKind() {
    String v = System.getenv(ENV_SERVER);
    if (v == null || v.isBlank()) {
      return MARIADB;
    }
    String kind = v.trim().toLowerCase(Locale.ROOT);
    if (!kind.equals(MARIADB) && !kind.equals(MYSQL8)) {
      throw new IllegalArgumentException(
          ENV_SERVER + " must be " + MARIADB + " or " + MYSQL8 + ", not '" + v + "'");
    }
    return kind;
  }

  /** Starts a new embedded server of the given kind ({@value #MARIADB} or {@value #MYSQL8}). */
  public static EmbeddedServer startEmbedded(String kind) {
    return switch (kind) {
      case MARIADB -> EmbeddedMariaDb.start();
      case MYSQL8 -> EmbeddedMySql.start();
      default -> throw new IllegalArgumentException("unknown embedded server " + kind);
    };
  }

  static void requireName(String name) {
    if (!NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "database name must be 1-64 letters, digits or underscores: '" + name + "'");
    }
  }

  /** Puts a database name into a server URL such as jdbc:mysql://host:3306/?opts. */
  static String withDatabase(String serverUrl, String database) {
    int schemeEnd = serverUrl.indexOf("//");
    int slash = serverUrl.indexOf('/', schemeEnd + 2);
    int query = serverUrl.indexOf('?');
    String hostPart =
        slash < 0
            ? (query < 0 ? serverUrl : serverUrl.substring(0, query))
            : serverUrl.substring(0, slash);
    String options = query < 0 ? "" : serverUrl.substring(query);
    return hostPart + "/" + database + options;
  }
}
