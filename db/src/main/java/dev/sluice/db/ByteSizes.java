package dev.sluice.db;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses and prints sizes in bytes the way queue comments write them: 512KiB, 1MiB, 4096. */
public final class ByteSizes {
  private static final Pattern FORM = Pattern.compile("(\\d{1,12})(B|KiB|MiB|GiB)?");
  private static final long KIB = 1024;
  private static final long MIB = KIB * 1024;
  private static final long GIB = MIB * 1024;

  private ByteSizes() {}

  /**
   * Parses a whole number of bytes with an optional binary unit: {@code 4096}, {@code 512KiB},
   * {@code 1MiB}, {@code 2GiB}.
   *
   * @throws IllegalArgumentException naming the accepted units when the text is not one of these
   */
  public static long parse(String text) {
    Matcher m = FORM.matcher(text == null ? "" : text.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "'"
              + text
              + "' is not a size: write a whole number of bytes, optionally with a unit KiB, MiB"
              + " or GiB (e.g. 1MiB)");
    }
    long n = Long.parseLong(m.group(1)); // at most 12 digits: no overflow below
    String unit = m.group(2) == null ? "B" : m.group(2);
    return switch (unit) {
      case "KiB" -> n * KIB;
      case "MiB" -> n * MIB;
      case "GiB" -> n * GIB;
      default -> n;
    };
  }

  /** The shortest exact form: 4000, 512KiB, 1MiB, 2GiB. */
  public static String format(long bytes) {
    if (bytes > 0 && bytes % GIB == 0) {
      return bytes / GIB + "GiB";
    }
    if (bytes > 0 && bytes % MIB == 0) {
      return bytes / MIB + "MiB";
    }
    if (bytes > 0 && bytes % KIB == 0) {
      return bytes / KIB + "KiB";
    }
    return Long.toString(bytes);
  }
}
