package dev.sluice.manager.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Writes versioned Flyway migrations ({@code V<n>__<description>.sql}) into the user's migration
 * directory, numbering each one past the highest version there.
 */
final class MigrationWriter {
  /** Flyway's versioned names: V1__x.sql, V1.2__x.sql, V1_2__x.sql, V20240101__x.sql. */
  private static final Pattern VERSIONED = Pattern.compile("V([0-9]+)(?:[._][0-9]+)*__(.+)\\.sql");

  private final Path dir;

  MigrationWriter(Path dir) {
    this.dir = dir;
  }

  Path dir() {
    return dir;
  }

  /** The versioned migrations in the directory (none when it does not exist). */
  List<Path> migrations() {
    List<Path> out = new ArrayList<>();
    if (!Files.isDirectory(dir)) {
      return out;
    }
    try (Stream<Path> files = Files.list(dir)) {
      files
          .filter(p -> VERSIONED.matcher(p.getFileName().toString()).matches())
          .sorted()
          .forEach(out::add);
    } catch (IOException e) {
      throw CliException.failed("cannot list " + dir + ": " + e.getMessage());
    }
    return out;
  }

  /** One past the highest major version in the directory; 1 when there is none. */
  long nextVersion() {
    long max = 0;
    for (Path p : migrations()) {
      Matcher m = VERSIONED.matcher(p.getFileName().toString());
      if (m.matches()) {
        try {
          max = Math.max(max, Long.parseLong(m.group(1)));
        } catch (NumberFormatException e) {
          throw CliException.failed("cannot number past migration " + p + ": version too large");
        }
      }
    }
    return max + 1;
  }

  /** A migration whose description is exactly {@code description}, if one exists. */
  Path existing(String description) {
    for (Path p : migrations()) {
      Matcher m = VERSIONED.matcher(p.getFileName().toString());
      if (m.matches() && m.group(2).equals(description)) {
        return p;
      }
    }
    return null;
  }

  /** Writes {@code V<next>__<description>.sql}; never overwrites a file. Returns its path. */
  Path write(String description, String content) {
    Path file = dir.resolve("V" + nextVersion() + "__" + description + ".sql");
    try {
      Files.createDirectories(dir);
      Files.writeString(file, content, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    } catch (FileAlreadyExistsException e) {
      throw CliException.failed(file + " appeared meanwhile; run the command again");
    } catch (IOException e) {
      throw CliException.failed("cannot write " + file + ": " + e.getMessage());
    } catch (UncheckedIOException e) {
      throw CliException.failed("cannot write " + file + ": " + e.getMessage());
    }
    return file;
  }
}
