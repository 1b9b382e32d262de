package dev.sluice.manager.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.manager.cli.SluiceCli;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.commonmark.node.AbstractVisitor;
import org.commonmark.node.Code;
import org.commonmark.node.FencedCodeBlock;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Every {@code sluice ...} line of a shell block in the README and the docs is one the real command
 * line accepts: parsed (not run) by {@link SluiceCli}. A synopsis line ({@code [--json]}, {@code
 * ...}) is checked for its subcommand and the options it names. {@code sluice demo} lives in the
 * examples' jar, not here, and is left out.
 */
class DocsCommandsTest {
  private static final java.util.regex.Pattern OPTION =
      java.util.regex.Pattern.compile("^[\\[(]*(--?[A-Za-z][A-Za-z0-9-]*)");
  private static final Set<String> SHELL = Set.of("", "sh", "bash", "shell", "console");

  @Test
  void everySluiceLineParses() {
    Path root = Docs.root();
    List<String> bad = new ArrayList<>();
    int[] checked = {0};
    for (Path file : Docs.files(root)) {
      Docs.parse(file)
          .accept(
              new AbstractVisitor() {
                @Override
                public void visit(Code code) {
                  // a synopsis in the text or a table: `sluice dead list NAME [--limit N]`
                  String line = code.getLiteral().replace("\\|", "|");
                  List<String> args = sluiceArgs(line);
                  if (args == null
                      || args.isEmpty()
                      || args.get(0).equals("demo")
                      || args.get(0).equals("...")) {
                    return; // the name alone, or the demo of the examples' jar
                  }
                  checked[0]++;
                  String problem = problem(args, true);
                  if (problem != null) {
                    bad.add(root.relativize(file) + ": `" + line + "`\n    -> " + problem);
                  }
                }

                @Override
                public void visit(FencedCodeBlock block) {
                  String info = block.getInfo() == null ? "" : block.getInfo().trim();
                  if (!SHELL.contains(info)) {
                    return;
                  }
                  for (String line : logicalLines(block.getLiteral())) {
                    List<String> args = sluiceArgs(line);
                    if (args == null || (!args.isEmpty() && args.get(0).equals("demo"))) {
                      continue;
                    }
                    checked[0]++;
                    String problem = problem(args, isSynopsis(line));
                    if (problem != null) {
                      bad.add(root.relativize(file) + ": " + line.trim() + "\n    -> " + problem);
                    }
                  }
                }
              });
    }
    assertThat(checked[0]).as("sluice lines found").isGreaterThan(20);
    assertThat(bad).as("sluice lines the command line refuses").isEmpty();
  }

  @Test
  void anUnknownCommandOrFlagIsFound() {
    assertThat(problem(sluiceArgs("./sluice queue frobnicate order_events"), false)).isNotNull();
    assertThat(problem(sluiceArgs("sluice queue stats --no-such-flag"), false)).isNotNull();
    assertThat(problem(sluiceArgs("sluice dead list QUEUE [--no-such-flag]"), true)).isNotNull();
    assertThat(problem(sluiceArgs("sluice queue create NAME [--ordered[=key|queue]]"), true))
        .isNull();
    assertThat(problem(sluiceArgs("$ ./sluice queue stats --json # all shards"), false)).isNull();
  }

  /** What the command line makes of a line's arguments: null when it accepts them. */
  static String problem(List<String> args, boolean synopsis) {
    CommandLine cl = SluiceCli.commandLine();
    if (!synopsis) {
      try {
        cl.parseArgs(args.toArray(String[]::new));
        return null;
      } catch (CommandLine.ParameterException e) {
        return e.getMessage();
      }
    }
    CommandLine cmd = cl;
    int i = 0;
    while (i < args.size() && cmd.getSubcommands().containsKey(args.get(i))) {
      cmd = cmd.getSubcommands().get(args.get(i++));
    }
    if (cmd == cl) {
      return "no such command: " + (args.isEmpty() ? "(none)" : args.get(0));
    }
    for (String a : args.subList(i, args.size())) {
      java.util.regex.Matcher m = OPTION.matcher(a);
      if (m.find()) {
        String name = m.group(1);
        if (cmd.getCommandSpec().findOption(name) == null) {
          return cmd.getCommandName() + " has no option " + name;
        }
      }
    }
    return null;
  }

  static boolean isSynopsis(String line) {
    return line.contains("[") || line.contains("...") || line.contains("…");
  }

  /** The block's lines, with backslash continuations joined. */
  static List<String> logicalLines(String literal) {
    List<String> out = new ArrayList<>();
    StringBuilder cur = new StringBuilder();
    for (String l : literal.split("\n")) {
      if (l.endsWith("\\")) {
        cur.append(l, 0, l.length() - 1).append(' ');
      } else {
        out.add(cur.append(l).toString());
        cur.setLength(0);
      }
    }
    if (cur.length() > 0) {
      out.add(cur.toString());
    }
    return out;
  }

  /**
   * The arguments after {@code sluice} in a shell line ({@code $ ./sluice ...}, {@code sluice ...},
   * {@code java -jar .../sluice.jar ...}, after {@code VAR=value} prefixes), up to a comment, pipe,
   * redirection or {@code &&}; null when the line runs something else.
   */
  static List<String> sluiceArgs(String line) {
    List<String> words = words(line.trim().replaceFirst("^\\$\\s+", ""));
    int i = 0;
    while (i < words.size() && words.get(i).matches("[A-Z_][A-Z0-9_]*=.*")) {
      i++;
    }
    if (i < words.size() && words.get(i).matches("(\\./)?sluice")) {
      return words.subList(i + 1, words.size());
    }
    if (i + 2 < words.size()
        && words.get(i).equals("java")
        && words.contains("-jar")
        && words.get(words.indexOf("-jar") + 1).matches("(.*/)?sluice\\.jar")) {
      return words.subList(words.indexOf("-jar") + 2, words.size());
    }
    return null;
  }

  /** Shell words: quotes kept together and removed; stops at #, |, >, <, ;, &&. */
  static List<String> words(String line) {
    List<String> out = new ArrayList<>();
    StringBuilder w = new StringBuilder();
    boolean inWord = false;
    char quote = 0;
    for (int i = 0; i < line.length(); i++) {
      char c = line.charAt(i);
      if (quote != 0) {
        if (c == quote) {
          quote = 0;
        } else {
          w.append(c);
        }
        continue;
      }
      if (c == '\'' || c == '"') {
        quote = c;
        inWord = true;
      } else if (Character.isWhitespace(c)) {
        if (inWord) {
          out.add(w.toString());
          w.setLength(0);
          inWord = false;
        }
      } else if ((c == '#' && !inWord)
          || c == '|' && !inWord
          || c == '>'
          || c == ';'
          || (c == '&' && i + 1 < line.length() && line.charAt(i + 1) == '&')) {
        break;
      } else {
        w.append(c);
        inWord = true;
      }
    }
    if (inWord) {
      out.add(w.toString());
    }
    return out;
  }
}
