package dev.sluice.examples;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The steps of docs/getting-started.md as a test runs them: each fenced block that follows a {@code
 * <!-- walkthrough:NAME -->} comment, read from the page itself so that the page and the test
 * cannot drift apart. A block of commands holds lines {@code $ ./sluice ARGS} (continued by a
 * trailing backslash) and, after each, the output the page shows; a block of SQL holds statements
 * ended by semicolons, with {@code --} comments.
 */
final class GettingStartedPage {
  static final Path PAGE = Path.of("docs", "getting-started.md");
  private static final Pattern TOKEN = Pattern.compile("\"([^\"]*)\"|'([^']*)'|(\\S+)");

  private final String text;

  private GettingStartedPage(String text) {
    this.text = text;
  }

  static GettingStartedPage read() throws IOException {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.exists(p.resolve("mvnw")) && Files.exists(p.resolve(PAGE))) {
        return new GettingStartedPage(Files.readString(p.resolve(PAGE)));
      }
    }
    throw new IllegalStateException("no " + PAGE + " above " + Path.of("").toAbsolutePath());
  }

  /** The text of the fenced block after the {@code walkthrough:NAME} marker. */
  String block(String name) {
    String marker = "<!-- walkthrough:" + name + " -->";
    int at = text.indexOf(marker);
    if (at < 0) {
      throw new IllegalStateException(PAGE + " has no " + marker);
    }
    int fence = text.indexOf("```", at + marker.length());
    if (!text.substring(at + marker.length(), fence).isBlank()) {
      throw new IllegalStateException(PAGE + ": " + marker + " is not right before a fenced block");
    }
    int start = text.indexOf('\n', fence) + 1;
    int end = text.indexOf("\n```", start);
    return text.substring(start, end + 1);
  }

  /** A command the page shows and the lines it shows as its output. */
  record Command(List<String> args, List<String> output) {}

  /** The {@code ./sluice} commands of a block, each with its arguments after {@code ./sluice}. */
  List<Command> commands(String name) {
    List<Command> out = new ArrayList<>();
    List<String> lines = block(name).lines().toList();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      if (!line.startsWith("./sluice") && !line.startsWith("$ ./sluice")) {
        continue;
      }
      StringBuilder cmd = new StringBuilder(line.replaceFirst("^\\$ ", ""));
      while (cmd.toString().endsWith("\\")) {
        cmd.setLength(cmd.length() - 1);
        cmd.append(' ').append(lines.get(++i).strip());
      }
      List<String> args = tokens(cmd.toString());
      args.remove(0); // ./sluice
      List<String> output = new ArrayList<>();
      while (i + 1 < lines.size() && !lines.get(i + 1).strip().startsWith("$ ")) {
        output.add(lines.get(++i));
      }
      out.add(new Command(args, output));
    }
    if (out.isEmpty()) {
      throw new IllegalStateException(PAGE + ": no ./sluice command in block " + name);
    }
    return out;
  }

  /** The SQL statements of a block, without comments or the final semicolons. */
  List<String> statements(String name) {
    StringBuilder sql = new StringBuilder();
    for (String line : block(name).lines().toList()) {
      int comment = line.indexOf("--");
      sql.append(comment >= 0 ? line.substring(0, comment) : line).append('\n');
    }
    List<String> out = new ArrayList<>();
    for (String s : sql.toString().split(";")) {
      if (!s.isBlank()) {
        out.add(s.strip());
      }
    }
    return out;
  }

  /** Splits a shell line into words: double- or single-quoted strings are one word. */
  static List<String> tokens(String line) {
    List<String> out = new ArrayList<>();
    Matcher m = TOKEN.matcher(line);
    while (m.find()) {
      out.add(m.group(1) != null ? m.group(1) : m.group(2) != null ? m.group(2) : m.group(3));
    }
    return out;
  }
}
