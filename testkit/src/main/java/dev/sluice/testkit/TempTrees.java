package dev.sluice.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Deleting the directory trees the embedded servers and brokers leave in the temporary directory.
 */
final class TempTrees {
  private TempTrees() {}

  /**
   * Deletes {@code dir} and everything under it, as far as it can: what cannot be deleted is left
   * in the temporary directory, silently (null or missing: nothing to do).
   */
  static void deleteQuietly(Path dir) {
    if (dir == null || !Files.exists(dir)) {
      return;
    }
    try (Stream<Path> all = Files.walk(dir)) {
      all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException | UncheckedIOException e) {
      // Left behind: the temporary directory's owner cleans it.
    }
  }
}
