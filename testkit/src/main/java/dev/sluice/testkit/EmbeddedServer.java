package dev.sluice.testkit;

/**
 * A database server this JVM started for tests, the demo or the bench: {@link EmbeddedMariaDb} or
 * {@link EmbeddedMySql}. It listens on a loopback port, root has no password, and its files are
 * deleted when it is closed.
 */
public interface EmbeddedServer extends AutoCloseable {

  /** Which server, e.g. {@code MariaDB 10.11.5} or {@code MySQL 8.0.15}. */
  String describe();

  int port();

  /** The JDBC URL of the server without a database. */
  String serverUrl();

  /** The JDBC URL of one database on this server. */
  String url(String database);

  /** Creates (if missing) a database over JDBC and returns its URL. */
  String createDatabase(String database);

  /** Stops the server, keeping its data for {@link #restartServer()}. */
  void stopServer();

  /** (Re)starts the server on the same port with the same data (for failure tests). */
  void restartServer();

  /** Stops the server; its files are deleted. */
  @Override
  void close();
}
