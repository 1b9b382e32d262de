package dev.sluice.manager.http;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Headless Chromium for tests: loads a page and returns its DOM after the scripts ran. */
final class Chromium {
  static final String INSTALL =
      "chromium is required by the status page's browser test and was not found on PATH or at"
          + " /usr/bin/chromium. Install it: apt-get update && apt-get install -y chromium"
          + " (the CI script .ci/run does this when it is missing).";

  private Chromium() {}

  /** The chromium executable; fails with how to install it when there is none. */
  static Path executable() {
    List<Path> candidates = new ArrayList<>();
    String path = System.getenv("PATH");
    if (path != null) {
      for (String dir : path.split(File.pathSeparator)) {
        candidates.add(Path.of(dir, "chromium"));
        candidates.add(Path.of(dir, "chromium-browser"));
      }
    }
    candidates.add(Path.of("/usr/bin/chromium"));
    for (Path p : candidates) {
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    throw new AssertionError(INSTALL);
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
