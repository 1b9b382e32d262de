package dev.sluice.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A generated table of the project's README: the lines between a begin and an end marker must be
 * what the code renders. Run with {@code -Dsluice.docs.write=true} to write the rendered table into
 * the README instead of comparing.
 */
public final class ReadmeTables {
  /** The system property that makes {@link #between} rewrite the README. */
  public static final String WRITE = "sluice.docs.write";

  private ReadmeTables() {}

  /** The README of the project, found from a module's directory (the tests' working directory). */
  public static Path readme() {
    Path here = Path.of("").toAbsolutePath();
    for (Path p = here; p != null; p = p.getParent()) {
      if (Files.exists(p.resolve("README.md")) && Files.exists(p.resolve("mvnw"))) {
        return p.resolve("README.md");
      }
    }
    throw new IllegalStateException("no README.md next to mvnw above " + here);
  }

  /**
   * The text between the lines {@code begin} and {@code end} of the README (exclusive, ending in a
   * newline); with {@link #WRITE} set, {@code rendered} is written there first.
   */
  public static String between(String begin, String end, String rendered) {
    Path readme = readme();
    try {
      String text = Files.readString(readme);
      int b = text.indexOf(begin + "\n");
      int e = text.indexOf("\n" + end, b);
      if (b < 0 || e < 0) {
        throw new IllegalStateException(readme + " lacks the lines " + begin + " and " + end);
      }
      int from = b + begin.length() + 1;
      if (Boolean.getBoolean(WRITE)) {
        text = text.substring(0, from) + rendered + text.substring(e + 1);
        Files.writeString(readme, text);
        return rendered;
      }
      return text.substring(from, e + 1);
    } catch (IOException ex) {
      throw new UncheckedIOException(ex);
    }
  }
}
