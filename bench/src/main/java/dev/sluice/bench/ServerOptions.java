package dev.sluice.bench;

import picocli.CommandLine.Option;

/** Where the benchmark's database server is. Shared by every workload. */
public final class ServerOptions {
  @Option(
      names = "--jdbc-url",
      description =
          "An existing server to run on, e.g. jdbc:mysql://127.0.0.1:3306/ (default: start an"
              + " embedded server for the run, see --server)")
  String jdbcUrl;

  @Option(
      names = "--server",
      defaultValue = "mariadb",
      description =
          "The embedded server to start when no --jdbc-url is given: mariadb (MariaDB 10.11) or"
              + " mysql8 (MySQL 8.0). Default: ${DEFAULT-VALUE}")
  String server;

  @Option(names = "--user", defaultValue = "root", description = "Default: ${DEFAULT-VALUE}")
  String user;

  @Option(names = "--password", defaultValue = "", description = "Default: empty")
  String password;

  @Option(
      names = "--keep",
      description = "Keep the databases the run creates on an existing server (default: drop)")
  boolean keep;

  @Option(
      names = "--set-global",
      description =
          "A server variable to set for the run, e.g. innodb_flush_log_at_trx_commit=2"
              + " (repeatable; a diagnostic: stated in the output, and restored at the end)")
  java.util.List<String> setGlobal = new java.util.ArrayList<>();
}
