package dev.sluice.bench;

import picocli.CommandLine.Option;

/** Where the benchmark's database server is. Shared by every workload. */
public final class ServerOptions {
  @Option(
      names = "--jdbc-url",
      description =
          "An existing server to run on, e.g. jdbc:mysql://127.0.0.1:3306/ (default: start an"
              + " embedded MariaDB for the run)")
  String jdbcUrl;

  @Option(names = "--user", defaultValue = "root", description = "Default: ${DEFAULT-VALUE}")
  String user;

  @Option(names = "--password", defaultValue = "", description = "Default: empty")
  String password;

  @Option(
      names = "--keep",
      description = "Keep the databases the run creates on an existing server (default: drop)")
  boolean keep;
}
