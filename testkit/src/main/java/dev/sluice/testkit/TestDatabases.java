package dev.sluice.testkit;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

/**
 * Fresh databases for tests: one per test class, on the server named by {@code
 * SLUICE_TEST_JDBC_URL} when it is set (for example {@code
 * jdbc:mysql://127.0.0.1:3306/?user=root}), else on one embedded MariaDB shared by the whole JVM.
 */
public final class TestDatabases {
  /** Environment variable naming an existing server to test against. */
  public static final String ENV_URL = "SLUICE_TEST_JDBC_URL";

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_]{1,64}");
  private static EmbeddedMariaDb embedded;

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
        s.execute("CREATE DATABASE `" + name + "`");
      } catch (SQLException e) {
        throw new IllegalStateException(
            "could not create database " + name + " on " + ENV_URL + "=" + serverUrl, e);
      }
      return new TestDatabase(name, withDatabase(serverUrl, name), null, null);
    }
    if (embedded == null) {
      embedded = EmbeddedMariaDb.start();
      EmbeddedMariaDb db = embedded;
      Runtime.getRuntime()
          .addShutdownHook(new Thread(db::stopServer, "sluice-embedded-mariadb-stop"));
    }
    String url = embedded.createDatabase(name);
    return new TestDatabase(name, url, "root", "");
  }

  /** The shared embedded server, or null when tests run against {@link #ENV_URL}. */
  public static synchronized EmbeddedMariaDb embedded() {
    return embedded;
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
