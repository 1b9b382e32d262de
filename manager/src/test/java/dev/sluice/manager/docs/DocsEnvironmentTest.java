package dev.sluice.manager.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.manager.config.ManagerSetting;
import dev.sluice.manager.config.ManagerSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every {@code SLUICE_*} environment variable the README and the docs name is one something reads:
 * a manager setting's variable, a shard's or channel's ({@code SLUICE_SHARDS_0_URL}), or a name the
 * project's code or scripts use (the test kit's, the launcher's, CI's). The few names the docs give
 * as a user's own (in {@code ${VAR}} of a configuration file) are listed here.
 */
class DocsEnvironmentTest {
  private static final Pattern VARIABLE = Pattern.compile("SLUICE_[A-Z0-9_]*[A-Z0-9]");

  /** Names the docs use as the user's own variables, read by ${VAR} in sluice.yaml. */
  private static final Set<String> USERS_OWN =
      Set.of("SLUICE_DB_PASSWORD", "SLUICE_RECEIVER_TOKEN", "SLUICE_TLS_CERT");

  private static final Pattern ENTRY =
      Pattern.compile(
          "SLUICE_(SHARDS|CHANNELS)_[A-Z0-9_]+_(NAME|URL|USER|PASSWORD|POOL_SIZE|KIND"
              + "|URI|BOOTSTRAP_SERVERS|PUBLISH_TIMEOUT|MAX_IN_FLIGHT)");

  @Test
  void everyVariableNamedIsRead() throws IOException {
    Path root = Docs.root();
    Set<String> known = new HashSet<>(USERS_OWN);
    for (ManagerSetting<?> s : ManagerSettings.ALL) {
      known.add(s.env());
    }
    known.addAll(inCode(root));
    Set<String> unknown = new TreeSet<>();
    int found = 0;
    for (Path file : Docs.files(root)) {
      Matcher m = VARIABLE.matcher(Files.readString(file));
      while (m.find()) {
        found++;
        String v = m.group();
        if (!known.contains(v) && !ENTRY.matcher(v).matches()) {
          unknown.add(root.relativize(file) + ": " + v);
        }
      }
    }
    assertThat(found).as("variables named in the docs").isGreaterThan(10);
    assertThat(unknown).as("variables nothing reads").isEmpty();
  }

  /** The SLUICE_ names that the project's sources and scripts spell out. */
  private static Set<String> inCode(Path root) throws IOException {
    List<Path> files = new ArrayList<>();
    try (Stream<Path> s = Files.walk(root)) {
      s.filter(Files::isRegularFile)
          .filter(p -> !p.toString().contains("/target/") && !p.toString().contains("/.git/"))
          .filter(p -> !p.toString().contains("/docs/") && !p.toString().endsWith(".md"))
          .filter(
              p ->
                  p.toString().endsWith(".java")
                      || p.startsWith(root.resolve("scripts"))
                      || p.startsWith(root.resolve(".ci"))
                      || p.equals(root.resolve("sluice"))
                      || p.equals(root.resolve("bench/run")))
          .forEach(files::add);
    }
    Set<String> out = new HashSet<>();
    for (Path f : files) {
      Matcher m = VARIABLE.matcher(Files.readString(f));
      while (m.find()) {
        out.add(m.group());
      }
    }
    return out;
  }
}
