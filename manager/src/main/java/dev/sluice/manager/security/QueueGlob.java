package dev.sluice.manager.security;

import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Pattern;

/**
 * A grant's queue name or glob ({@code *}: any run of characters, {@code ?}: one), compiled once
 * when the grant is built (at config load), never per call. Immutable: read from any thread.
 */
public final class QueueGlob {
  private static final LongAdder COMPILED = new LongAdder();

  private final String glob;

  /** The compiled glob; null for a plain name (compared as text). */
  private final Pattern pattern;

  private QueueGlob(String glob) {
    this.glob = glob;
    if (!glob.contains("*") && !glob.contains("?")) {
      this.pattern = null;
      return;
    }
    StringBuilder re = new StringBuilder();
    for (char c : glob.toCharArray()) {
      switch (c) {
        case '*' -> re.append(".*");
        case '?' -> re.append('.');
        default -> re.append(Pattern.quote(String.valueOf(c)));
      }
    }
    this.pattern = Pattern.compile(re.toString());
    COMPILED.increment();
  }

  static QueueGlob of(String glob) {
    return new QueueGlob(glob);
  }

  public boolean matches(String queue) {
    return pattern == null ? glob.equals(queue) : pattern.matcher(queue).matches();
  }

  /** Globs compiled in this process so far (for tests: none may be compiled per call). */
  static long compiled() {
    return COMPILED.sum();
  }

  @Override
  public String toString() {
    return glob;
  }
}
