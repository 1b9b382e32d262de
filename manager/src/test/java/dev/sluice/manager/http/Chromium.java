package dev.sluice.manager.http;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * Headless Chromium for tests: loads a page and returns its DOM after the scripts ran.
 *
 * <p>On a machine without Chromium the browser tests are skipped, saying how to install it, so that
 * {@code ./mvnw -B verify} passes on a fresh clone. CI must not skip them silently: {@code .ci/run}
 * installs Chromium and sets {@value #REQUIRE_ENV}, which turns a missing browser into a failure.
 */
public final class Chromium {
  /**
   * When set (to anything but empty or {@code 0}), a missing Chromium fails instead of skipping.
   */
  public static final String REQUIRE_ENV = "SLUICE_REQUIRE_CHROMIUM";

  static final String INSTALL =
      "chromium was not found on PATH or at /usr/bin/chromium, so the status page's browser"
          + " tests are skipped. Install it to run them: apt-get update && apt-get install -y"
          + " chromium (the CI script .ci/run does this and sets "
          + REQUIRE_ENV
          + "=1).";

  private Chromium() {}

  /**
   * Call first in each browser test (a {@code @BeforeEach}, so that each reports itself skipped):
   * skips the test (a JUnit assumption) when Chromium is missing, or fails when {@value
   * #REQUIRE_ENV} says the browser must be there.
   */
  public static void assumeInstalled() {
    assumeInstalled(candidates(), System.getenv(REQUIRE_ENV));
  }

  /** Whether Chromium is there. */
  public static boolean installed() {
    return find(candidates()) != null;
  }

  /** {@link #assumeInstalled()} with the places to look and the setting given. */
  static void assumeInstalled(List<Path> candidates, String require) {
    if (find(candidates) != null) {
      return;
    }
    if (require != null && !require.isBlank() && !require.equals("0")) {
      throw new AssertionError(INSTALL);
    }
    System.err.println("SKIPPED: " + INSTALL); // the build's output says why, not only the report
    Assumptions.abort(INSTALL);
  }

  /** The chromium executable; fails with how to install it when there is none. */
  static Path executable() {
    Path p = find(candidates());
    if (p == null) {
      throw new AssertionError(INSTALL);
    }
    return p;
  }

  /** The first executable of {@code candidates}, or null. */
  private static Path find(List<Path> candidates) {
    for (Path p : candidates) {
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    return null;
  }

  /** Where Chromium may be: {@code chromium} or {@code chromium-browser} on PATH, /usr/bin. */
  private static List<Path> candidates() {
    List<Path> candidates = new ArrayList<>();
    String path = System.getenv("PATH");
    if (path != null) {
      for (String dir : path.split(File.pathSeparator)) {
        candidates.add(Path.of(dir, "chromium"));
        candidates.add(Path.of(dir, "chromium-browser"));
      }
    }
    candidates.add(Path.of("/usr/bin/chromium"));
    return candidates;
  }

  /**
   * The DOM of {@code url} once the page's scripts had {@code virtualTimeMs} of (virtual) time to
   * run, as {@code --dump-dom} prints it.
   */
  static String dumpDom(String url, int virtualTimeMs) throws IOException, InterruptedException {
    Path work = Files.createTempDirectory("sluice-chromium");
    Path out = work.resolve("dom.html");
    Path err = work.resolve("stderr.txt");
    List<String> cmd =
        List.of(
            executable().toString(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--user-data-dir=" + work.resolve("profile"),
            "--window-size=1280,1000",
            "--virtual-time-budget=" + virtualTimeMs,
            "--dump-dom",
            url);
    Process p =
        new ProcessBuilder(cmd)
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
            .start();
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(
          "chromium did not finish in 120 s; stderr: " + Files.readString(err));
    }
    String dom = Files.readString(out);
    if (p.exitValue() != 0 || dom.isBlank()) {
      throw new AssertionError(
          "chromium exited with " + p.exitValue() + "; stderr: " + Files.readString(err));
    }
    return dom;
  }
}
