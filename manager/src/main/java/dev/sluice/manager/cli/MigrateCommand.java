package dev.sluice.manager.cli;

import dev.sluice.db.SluiceMigrations;
import dev.sluice.manager.config.ManagerConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code sluice migrate}: applies Sluice's own migrations and the user's migration directory to
 * every shard, reporting each shard's result. A shard that fails does not stop the others; the exit
 * code is then 1.
 */
@Command(
    name = "migrate",
    mixinStandardHelpOptions = true,
    description =
        "Apply Sluice's own migrations and then yours (the migrations directory) to every shard,"
            + " with Flyway, and report each shard's result. Exit 1 if any shard failed.")
final class MigrateCommand extends BaseCommand {
  @Option(
      names = "--migrations",
      paramLabel = "DIR",
      description = "Your migration directory. Default: the config's migrations (db/migration).")
  Path migrations;

  @Mixin ConfigOption config;

  @Override
  public Integer call() {
    ManagerConfig cfg = config.load();
    Path dir = migrations != null ? migrations : cfg.migrations();
    if (!Files.isDirectory(dir)) {
      throw CliException.badInput(
          "migration directory "
              + dir
              + " does not exist (create a queue first: sluice queue create NAME)");
    }
    String location = "filesystem:" + dir.toAbsolutePath().normalize();
    int failed = 0;
    List<Object> results = new ArrayList<>();
    try (ShardPools pools = new ShardPools(cfg)) {
      for (ShardPools.Shard s : pools.all()) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("shard", s.name());
        try {
          SluiceMigrations.Result r = SluiceMigrations.migrate(s.dataSource(), List.of(location));
          m.put("ok", true);
          m.put("sluice_applied", r.sluiceApplied());
          m.put("applied", r.userApplied());
          m.put("version", r.userVersion());
          if (!json) {
            println(
                s.name()
                    + (r.userApplied() == 0
                        ? ": ok, up to date"
                        : ": ok, applied "
                            + r.userApplied()
                            + (r.userApplied() == 1 ? " migration" : " migrations")
                            + (r.userVersion() == null
                                ? ""
                                : ", now at version " + r.userVersion())));
          }
        } catch (RuntimeException e) {
          failed++;
          m.put("ok", false);
          m.put("error", e.getMessage());
          if (!json) {
            println(s.name() + ": FAILED: " + e.getMessage());
          }
        }
        results.add(m);
      }
    }
    if (json) {
      printJson(Map.of("migrations", dir.toString(), "shards", results));
    }
    return failed == 0 ? CliException.OK : CliException.FAILED;
  }
}
