package dev.sluice.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A generated table of the project's documentation: the lines between a begin and an end marker of
 * a page must be what the code renders. Run with {@code -Dsluice.docs.write=true} to write the
 * rendered table into the page instead of comparing.
 *
 * <p>A rendered table links to a section by its bare anchor ({@code [Security](#security)}); where
 * the page has no such heading, the link is made to point at the page of the README or of {@code
 * docs/} that has it ({@code ../deployment.md#security}), so that the definitions need not know
 * where each section lives.
 */
public final class ReadmeTables {
  /** The system property that makes {@link #between} rewrite the page. */
  public static final String WRITE = "sluice.docs.write";

  private static final Pattern ANCHOR_LINK = Pattern.compile("\\]\\(#([^)\\s]+)\\)");

  private ReadmeTables() {}

  /** The README of the project, found from a module's directory (the tests' working directory). */
  public static Path readme() {
    return root().resolve("README.md");
  }

  /** A page of the project's documentation, by its path from the checkout's root. */
  public static Path page(String relative) {
    return root().resolve(relative);
  }

  private static Path root() {
    Path here = Path.of("").toAbsolutePath();
    for (Path p = here; p != null; p = p.getParent()) {
      if (Files.exists(p.resolve("README.md")) && Files.exists(p.resolve("mvnw"))) {
        return p;
      }
    }
    throw new IllegalStateException("no README.md next to mvnw above " + here);
  }

  /** {@link #between(Path, String, String, String)} in the README. */
  public static String between(String begin, String end, String rendered) {
    return between(readme(), begin, end, rendered);
  }

  /**
   * The text between the lines {@code begin} and {@code end} of {@code page} (exclusive, ending in
   * a newline); with {@link #WRITE} set, {@code rendered} (its links placed, as the class comment
   * says) is written there first. Compare it with {@link #placed}{@code (page, rendered)}.
   */
  public static String between(Path page, String begin, String end, String rendered) {
    try {
      String text = Files.readString(page);
      int b = text.indexOf(begin + "\n");
      int e = text.indexOf("\n" + end, b);
      if (b < 0 || e < 0) {
        throw new IllegalStateException(page + " lacks the lines " + begin + " and " + end);
      }
      int from = b + begin.length() + 1;
      if (Boolean.getBoolean(WRITE)) {
        String placed = placed(page, rendered);
        text = text.substring(0, from) + placed + text.substring(e + 1);
        Files.writeString(page, text);
        return placed;
      }
      return text.substring(from, e + 1);
    } catch (IOException ex) {
      throw new UncheckedIOException(ex);
    }
  }

  /**
   * {@code rendered} with each bare anchor link that {@code page} has no heading for pointed at the
   * page that has it (unchanged when none has).
   */
  public static String placed(Path page, String rendered) {
    List<Path> pages = pages();
    Matcher m = ANCHOR_LINK.matcher(rendered);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      String anchor = m.group(1);
      String link = m.group(0);
      if (!anchors(page).contains(anchor)) {
        for (Path p : pages) {
          if (anchors(p).contains(anchor)) {
            String rel = page.getParent().relativize(p).toString().replace('\\', '/');
            link = "](" + rel + "#" + anchor + ")";
            break;
          }
        }
      }
      m.appendReplacement(out, Matcher.quoteReplacement(link));
    }
    m.appendTail(out);
    return out.toString();
  }

  private static List<Path> pages() {
    Path root = root();
    List<Path> out = new ArrayList<>();
    out.add(root.resolve("README.md"));
    Path docs = root.resolve("docs");
    if (Files.isDirectory(docs)) {
      try (Stream<Path> s = Files.walk(docs)) {
        s.filter(p -> p.toString().endsWith(".md")).sorted().forEach(out::add);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return out;
  }

  /** The GitHub anchors of a page's headings (outside code blocks). */
  private static List<String> anchors(Path page) {
    List<String> out = new ArrayList<>();
    boolean fence = false;
    try {
      for (String line : Files.readAllLines(page)) {
        if (line.startsWith("```")) {
          fence = !fence;
        } else if (!fence && line.matches("#{1,6} .*")) {
          String heading = line.replaceFirst("#+ ", "").replace("`", "");
          StringBuilder b = new StringBuilder();
          for (char c : heading.trim().toLowerCase(Locale.ROOT).toCharArray()) {
            if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
              b.append(c);
            } else if (c == ' ') {
              b.append('-');
            }
          }
          out.add(b.toString());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }
}
