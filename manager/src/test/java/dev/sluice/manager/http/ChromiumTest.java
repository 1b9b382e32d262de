package dev.sluice.manager.http;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.opentest4j.TestAbortedException;

/**
 * The README's test command must pass on a fresh machine without Chromium (the browser tests are
 * then skipped, saying how to install it), while CI, which installs Chromium, must never skip them.
 */
class ChromiumTest {
  private static final List<Path> NOWHERE = List.of(Path.of("/nonexistent/sluice/chromium"));

  @Test
  void aMissingBrowserSkipsTheBrowserTestsWithTheInstallCommand() {
    assertThatThrownBy(() -> Chromium.assumeInstalled(NOWHERE, null))
        .isInstanceOf(TestAbortedException.class)
        .hasMessageContaining("apt-get install -y chromium");
    assertThatThrownBy(() -> Chromium.assumeInstalled(NOWHERE, "0"))
        .isInstanceOf(TestAbortedException.class);
  }

  @Test
  void whenCiRequiresTheBrowserAMissingOneFails() {
    assertThatThrownBy(() -> Chromium.assumeInstalled(NOWHERE, "1"))
        .isInstanceOf(AssertionError.class)
        .isNotInstanceOf(TestAbortedException.class)
        .hasMessageContaining(Chromium.REQUIRE_ENV);
  }
}
