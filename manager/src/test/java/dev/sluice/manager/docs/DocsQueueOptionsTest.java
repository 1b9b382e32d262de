package dev.sluice.manager.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.db.QueueOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every queue option the README and the docs set — in a table comment ({@code COMMENT='sluice_queue
 * ack_wait=30s'}) or on the command line ({@code --option max_attempts=10}) — is one the options'
 * definitions know.
 */
class DocsQueueOptionsTest {
  private static final Pattern COMMENT = Pattern.compile("sluice_queue((?: [a-z_]+=[^\\s'\"]+)+)");
  private static final Pattern OPTION = Pattern.compile("--option[ =]([a-z_]+)=");

  @Test
  void everyOptionNamedExists() throws IOException {
    Path root = Docs.root();
    List<String> unknown = new ArrayList<>();
    int found = 0;
    for (Path file : Docs.files(root)) {
      String text = Files.readString(file);
      List<String> names = new ArrayList<>();
      Matcher c = COMMENT.matcher(text);
      while (c.find()) {
        for (String kv : c.group(1).trim().split(" ")) {
          names.add(kv.substring(0, kv.indexOf('=')));
        }
      }
      Matcher o = OPTION.matcher(text);
      while (o.find()) {
        names.add(o.group(1));
      }
      for (String name : names) {
        found++;
        if (!QueueOptions.NAMES.contains(name) && !name.equals("k")) {
          unknown.add(root.relativize(file) + ": " + name);
        }
      }
    }
    assertThat(found).as("queue options set in the docs").isGreaterThan(5);
    assertThat(unknown).as("queue options the definitions do not know").isEmpty();
  }
}
