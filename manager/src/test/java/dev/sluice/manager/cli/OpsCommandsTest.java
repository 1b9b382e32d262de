package dev.sluice.manager.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The alert rules tell an operator which {@code sluice} command to run at 3 a.m.: every such
 * command must parse against the real command line (no flag it does not have), so a renamed option
 * cannot leave the alert text wrong.
 */
class OpsCommandsTest {
  private static final Pattern COMMAND = Pattern.compile("`sluice ([^`]+)`");
  private static final Pattern LABEL = Pattern.compile("\\{\\{\\s*\\$labels\\.([a-z_]+)\\s*}}");

  @Test
  void everySluiceCommandInTheAlertRulesParses() throws Exception {
    String alerts = Files.readString(Path.of("..", "ops", "prometheus", "sluice-alerts.yml"));
    List<String> commands = new ArrayList<>();
    Matcher m = COMMAND.matcher(alerts);
    while (m.find()) {
      commands.add(LABEL.matcher(m.group(1)).replaceAll("$1"));
    }
    assertThat(commands).as("commands named in the alert rules").isNotEmpty();
    for (String command : commands) {
      String[] args = command.trim().split("\\s+");
      assertThatCode(() -> SluiceCli.commandLine().parseArgs(args))
          .as("`sluice %s` from ops/prometheus/sluice-alerts.yml", command)
          .doesNotThrowAnyException();
    }
  }
}
