package dev.sluice.manager.cli;

import dev.sluice.manager.Harness;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import picocli.CommandLine;

/** Runs the sluice command line in-process, as a script would, and captures what it prints. */
final class Cli {
  private Cli() {}

  /** What a run printed and its exit code. */
  record Result(int code, String out, String err) {
    @Override
    public String toString() {
      return "exit " + code + "\n--- stdout\n" + out + "--- stderr\n" + err;
    }
  }

  static Result run(String... args) {
    CommandLine cl = SluiceCli.commandLine();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    int code = cl.execute(args);
    return new Result(code, out.toString(), err.toString());
  }

  /** Writes a config file with the harness's database as shard s1 (and more shards, if given). */
  static Path config(Path dir, Harness h, String... moreShardUrls) {
    StringBuilder y =
        new StringBuilder("manager_id: cli-test\nmigrations: db/migration\nshards:\n");
    shard(y, "s1", h.url(), h.db.user(), h.db.password());
    for (int i = 0; i < moreShardUrls.length; i++) {
      shard(y, "s" + (i + 2), moreShardUrls[i], h.db.user(), h.db.password());
    }
    Path f = dir.resolve("sluice.yaml");
    try {
      Files.createDirectories(dir);
      Files.writeString(f, y.toString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return f;
  }

  private static void shard(StringBuilder y, String name, String url, String user, String pw) {
    y.append("  - name: ").append(name).append('\n');
    y.append("    url: \"").append(url).append("\"\n");
    if (user != null) {
      y.append("    user: \"").append(user).append("\"\n");
      y.append("    password: \"").append(pw == null ? "" : pw).append("\"\n");
    }
  }

  /** The files under a directory, sorted by name (empty when it does not exist). */
  static List<String> files(Path dir) {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
