package dev.sluice.manager.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.commonmark.node.AbstractVisitor;
import org.commonmark.node.Code;
import org.commonmark.node.Heading;
import org.commonmark.node.Node;
import org.commonmark.node.Text;
import org.commonmark.parser.Parser;

/**
 * The project's documentation as the doc tests read it: which Markdown files there are, each parsed
 * with commonmark, and the anchors their headings get on GitHub.
 */
final class Docs {
  private static final Parser PARSER = Parser.builder().build();
  private static final Pattern HTML_ANCHOR =
      Pattern.compile("<a\\s+(?:id|name)=\"([^\"]+)\"", Pattern.CASE_INSENSITIVE);

  private Docs() {}

  /** The checkout's root: the directory above the tests' working directory that holds mvnw. */
  static Path root() {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.exists(p.resolve("mvnw")) && Files.exists(p.resolve("README.md"))) {
        return p;
      }
    }
    throw new IllegalStateException("no checkout root (mvnw, README.md) above the working dir");
  }

  /**
   * The documentation a reader follows: the README, every page under docs/, and the other top-level
   * pages the README links to.
   */
  static List<Path> files(Path root) {
    List<Path> out = new ArrayList<>();
    for (String top :
        List.of(
            "README.md",
            "ARCHITECTURE.md",
            "BENCHMARKS.md",
            "CHANGELOG.md",
            "PUBLISHING.md",
            "ops/kubernetes/README.md")) {
      if (Files.exists(root.resolve(top))) {
        out.add(root.resolve(top));
      }
    }
    try (Stream<Path> s = Files.walk(root.resolve("docs"))) {
      s.filter(p -> p.toString().endsWith(".md")).sorted().forEach(out::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  static Node parse(Path file) {
    try {
      return PARSER.parse(Files.readString(file));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static final Map<Path, Set<String>> ANCHORS = new HashMap<>();

  /** The anchors of a Markdown file: its headings' GitHub ids, and explicit HTML anchors. */
  static synchronized Set<String> anchors(Path file) {
    return ANCHORS.computeIfAbsent(
        file.normalize(),
        f -> {
          Set<String> out = new LinkedHashSet<>();
          Map<String, Integer> seen = new HashMap<>();
          parse(f)
              .accept(
                  new AbstractVisitor() {
                    @Override
                    public void visit(Heading heading) {
                      String slug = slug(text(heading));
                      int n = seen.merge(slug, 1, Integer::sum);
                      out.add(n == 1 ? slug : slug + "-" + (n - 1));
                    }
                  });
          try {
            Matcher m = HTML_ANCHOR.matcher(Files.readString(f));
            while (m.find()) {
              out.add(m.group(1));
            }
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
          return out;
        });
  }

  /** A heading's id as GitHub makes it: lower case, punctuation dropped, spaces to hyphens. */
  static String slug(String heading) {
    StringBuilder b = new StringBuilder();
    for (char c : heading.trim().toLowerCase(Locale.ROOT).toCharArray()) {
      if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
        b.append(c);
      } else if (c == ' ') {
        b.append('-');
      }
    }
    return b.toString();
  }

  /** The plain text of a node: its text and code spans, without markup. */
  static String text(Node node) {
    StringBuilder b = new StringBuilder();
    node.accept(
        new AbstractVisitor() {
          @Override
          public void visit(Text text) {
            b.append(text.getLiteral());
          }

          @Override
          public void visit(Code code) {
            b.append(code.getLiteral());
          }
        });
    return b.toString();
  }
}
