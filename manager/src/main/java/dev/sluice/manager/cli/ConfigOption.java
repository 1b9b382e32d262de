package dev.sluice.manager.cli;

import dev.sluice.manager.config.ConfigLoader;
import dev.sluice.manager.config.ManagerConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --config FILE}, shared by every command that reaches the shards. */
public final class ConfigOption {
  public static final Path DEFAULT = Path.of("sluice.yaml");

  @Option(
      names = {"-c", "--config"},
      paramLabel = "FILE",
      description =
          "YAML config with the shards (as for serve). Default: sluice.yaml in the current"
              + " directory. $${VAR} is read from the environment, and any setting can be"
              + " overridden by a variable SLUICE_<SETTING> (SLUICE_GRPC_PORT,"
              + " SLUICE_SHARDS_0_URL); without a file, the shards come from the environment.")
  Path file;

  /** The configuration; a missing or invalid file is bad input. */
  ManagerConfig load() {
    Path f = file == null ? DEFAULT : file;
    ConfigLoader loader = ConfigLoader.fromEnvironment();
    if (file == null && !Files.isRegularFile(f) && loader.environmentHasShards()) {
      try {
        return loader.loadEnvironment();
      } catch (IllegalArgumentException e) {
        throw CliException.badInput(e.getMessage());
      }
    }
    if (!Files.isRegularFile(f)) {
      throw CliException.badInput(
          "no config file "
              + f
              + (file == null
                  ? " in the current directory; give one with --config FILE, or describe the"
                      + " shards with SLUICE_SHARDS_0_NAME, SLUICE_SHARDS_0_URL, ..."
                  : ""));
    }
    try {
      return loader.load(f);
    } catch (IllegalArgumentException e) {
      throw CliException.badInput(e.getMessage());
    }
  }

  /** The configuration if a file was given or the default exists; null otherwise. */
  ManagerConfig loadIfPresent() {
    if (file == null
        && !Files.isRegularFile(DEFAULT)
        && !ConfigLoader.fromEnvironment().environmentHasShards()) {
      return null;
    }
    return load();
  }
}
