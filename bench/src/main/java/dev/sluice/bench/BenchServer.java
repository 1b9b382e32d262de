package dev.sluice.bench;

import dev.sluice.testkit.EmbeddedServer;
import dev.sluice.testkit.TestDatabases;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The one database server every peer of a run uses: an embedded MariaDB or MySQL started for the
 * run, or an existing server named by a JDBC URL. Hands out fresh databases and reads the server's
 * global status counters.
 */
public final class BenchServer implements AutoCloseable {
  private final EmbeddedServer embedded;
  private final String serverUrl;
  private final String user;
  private final String password;
  private final boolean keep;
  private final List<String> created = new ArrayList<>();

  private BenchServer(
      EmbeddedServer embedded, String serverUrl, String user, String password, boolean keep) {
    this.embedded = embedded;
    this.serverUrl = serverUrl;
    this.user = user;
    this.password = password;
    this.keep = keep;
  }

  /**
   * Starts an embedded server for this run, {@code mariadb} or {@code mysql8}; it and its data are
   * deleted on close.
   */
  public static BenchServer embedded(String kind) {
    String k = kind.trim().toLowerCase(Locale.ROOT);
    if (!k.equals(TestDatabases.MARIADB) && !k.equals(TestDatabases.MYSQL8)) {
      throw new IllegalArgumentException("--server: mariadb or mysql8, not " + kind);
    }
    Progress.note("starting the embedded " + k + " ...");
    EmbeddedServer db = TestDatabases.startEmbedded(k);
    return new BenchServer(db, db.serverUrl(), "root", "", false);
  }

  /**
   * An existing server, e.g. {@code jdbc:mysql://127.0.0.1:3306/}. The Connector/J options the
   * benchmark needs are added when the URL does not set them.
   */
  public static BenchServer external(String jdbcUrl, String user, String password, boolean keep) {
    return new BenchServer(null, withOptions(jdbcUrl), user, password, keep);
  }

  public static BenchServer of(ServerOptions o) throws SQLException {
    BenchServer s =
        o.jdbcUrl == null || o.jdbcUrl.isBlank()
            ? embedded(o.server == null ? TestDatabases.MARIADB : o.server)
            : external(o.jdbcUrl, o.user, o.password, o.keep);
    for (String kv : o.setGlobal) {
      s.setGlobal(kv);
    }
    return s;
  }

  private final java.util.Map<String, String> restore = new java.util.LinkedHashMap<>();

  /** {@code SET GLOBAL name = value}, remembering the old value to restore on close. */
  void setGlobal(String assignment) throws SQLException {
    int eq = assignment.indexOf('=');
    if (eq < 1 || !assignment.substring(0, eq).matches("[A-Za-z0-9_]+")) {
      throw new IllegalArgumentException("--set-global: expected name=value, got " + assignment);
    }
    String name = assignment.substring(0, eq);
    String value = assignment.substring(eq + 1);
    try (Connection c = connectServer();
        Statement s = c.createStatement()) {
      restore.putIfAbsent(name, global(s, name));
      setGlobal(s, name, value);
    }
    Progress.note("server: SET GLOBAL " + name + " = " + value + " for this run");
  }

  /** The server variable {@code name}'s global value. */
  static String global(Statement s, String name) throws SQLException {
    try (ResultSet rs = s.executeQuery("SELECT @@GLOBAL." + name)) {
      rs.next();
      return rs.getString(1);
    }
  }

  /** {@code SET GLOBAL name = value}: a number as it is, anything else as a quoted string. */
  static void setGlobal(Statement s, String name, String value) throws SQLException {
    s.execute(
        "SET GLOBAL "
            + name
            + " = "
            + (value.matches("-?[0-9.]+") ? value : "'" + value.replace("'", "''") + "'"));
  }

  /** The server's TCP port (for finding its process on this machine). */
  public int port() {
    if (embedded != null) {
      return embedded.port();
    }
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("//[^/:?]+:(\\d+)").matcher(serverUrl);
    return m.find() ? Integer.parseInt(m.group(1)) : 3306;
  }

  /** Where the server is, for the report. */
  public String describe() {
    String version;
    try (Connection c = connectServer();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT VERSION()")) {
      version = rs.next() ? rs.getString(1) : "?";
    } catch (SQLException e) {
      version = "? (" + e.getMessage() + ")";
    }
    return (embedded != null
            ? "embedded " + embedded.describe() + " on port " + embedded.port()
            : serverUrl)
        + ", version "
        + version;
  }

  /** Creates a new database named {@code prefix_<random>}. */
  public Database createDatabase(String prefix) throws SQLException {
    String name =
        prefix.toLowerCase(Locale.ROOT)
            + "_"
            + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x100000, 0xffffff));
    try (Connection c = connectServer();
        Statement s = c.createStatement()) {
      s.execute("CREATE DATABASE `" + name + "`");
    }
    synchronized (created) {
      created.add(name);
    }
    return new Database(name, withDatabase(serverUrl, name), user, password);
  }

  /** Drops a database made by {@link #createDatabase} (unless --keep). */
  public void drop(Database db) {
    if (keep) {
      return;
    }
    try (Connection c = connectServer();
        Statement s = c.createStatement()) {
      s.execute("DROP DATABASE IF EXISTS `" + db.name() + "`");
      synchronized (created) {
        created.remove(db.name());
      }
    } catch (SQLException e) {
      Progress.note("could not drop database " + db.name() + ": " + e.getMessage());
    }
  }

  /** A connection to the server without a database (for SHOW GLOBAL STATUS and DDL). */
  public Connection connectServer() throws SQLException {
    Properties p = new Properties();
    if (user != null) {
      p.setProperty("user", user);
      p.setProperty("password", password == null ? "" : password);
    }
    return DriverManager.getConnection(serverUrl, p);
  }

  @Override
  public void close() {
    restore.forEach(
        (name, old) -> {
          try (Connection c = connectServer();
              Statement s = c.createStatement()) {
            setGlobal(s, name, old);
          } catch (SQLException e) {
            Progress.note("could not restore " + name + " to " + old + ": " + e.getMessage());
          }
        });
    if (embedded != null) {
      embedded.close();
      return;
    }
    List<String> left;
    synchronized (created) {
      left = List.copyOf(created);
    }
    if (!keep) {
      for (String name : left) {
        drop(new Database(name, null, user, password));
      }
    }
  }

  static String withOptions(String url) {
    String out = url;
    for (String opt :
        List.of(
            "sslMode=DISABLED", "allowPublicKeyRetrieval=true", "rewriteBatchedStatements=true")) {
      String key = opt.substring(0, opt.indexOf('=') + 1);
      if (!out.contains(key)) {
        out += (out.contains("?") ? "&" : (hasPath(out) ? "?" : "/?")) + opt;
      }
    }
    return out;
  }

  private static boolean hasPath(String url) {
    int schemeEnd = url.indexOf("//");
    return url.indexOf('/', schemeEnd + 2) >= 0;
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
