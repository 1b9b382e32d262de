package dev.sluice.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * What a figure was measured on: cores, JVM, and the load average — other processes on a 2-core
 * machine move every figure, so each run prints the load it saw at its start and end.
 */
final class Machine {
  private Machine() {}

  static String describe() {
    return String.format(
        Locale.ROOT,
        "machine: %d cores, Java %s, load average %s",
        Runtime.getRuntime().availableProcessors(),
        System.getProperty("java.version"),
        loadAverage());
  }

  /** The 1, 5 and 15 minute load averages, or "unknown" off Linux. */
  static String loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
      return f[0] + " " + f[1] + " " + f[2];
    } catch (Exception e) {
      return "unknown";
    }
  }

  static void noteEnd() {
    Progress.note("load average at the end: " + loadAverage());
  }
}
