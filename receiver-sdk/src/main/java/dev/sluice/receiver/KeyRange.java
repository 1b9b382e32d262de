package dev.sluice.receiver;

/**
 * Checks a Vitess-style key range before it goes into {@code Subscribe.key_range}: {@code ""}
 * (every shard), {@code "-80"}, {@code "80-"} or {@code "40-c0"}. Bounds are keyspace-id prefixes
 * written as even-length lowercase hex (whole bytes); an empty start is the lowest key and an empty
 * end the highest. As in Vitess, a shorter bound stands for itself followed by zero bytes, so
 * {@code "40"} and {@code "4000"} are the same key, and the start must be strictly below the end.
 */
final class KeyRange {
  static final String SYNTAX = "\"\" (every shard) or Vitess style \"-80\", \"80-\", \"40-c0\"";

  private KeyRange() {}

  /**
   * Returns the key range to send: {@code ""} for null, {@code ""} or {@code "-"} (all of them mean
   * every shard), otherwise the range unchanged. Throws IllegalArgumentException saying what is
   * wrong.
   */
  static String check(String range) {
    if (range == null || range.isEmpty() || range.equals("-")) {
      return "";
    }
    int dash = range.indexOf('-');
    if (dash < 0 || dash != range.lastIndexOf('-')) {
      throw bad(range, "it must be start-end with one '-'");
    }
    String start = range.substring(0, dash);
    String end = range.substring(dash + 1);
    checkBound(range, start);
    checkBound(range, end);
    if (!end.isEmpty() && compare(start, end) >= 0) {
      throw bad(range, "start " + quote(start) + " must be below end " + quote(end));
    }
    return range;
  }

  private static void checkBound(String range, String bound) {
    if (bound.length() % 2 != 0) {
      throw bad(range, "bound " + quote(bound) + " must have an even number of hex digits");
    }
    for (int i = 0; i < bound.length(); i++) {
      char c = bound.charAt(i);
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
        throw bad(range, "bound " + quote(bound) + " must be lowercase hex (0-9, a-f)");
      }
    }
  }

  /**
   * Compares two bounds as keys: padded with zero bytes to the same length, lowercase hex compares
   * like the bytes it spells, since '0'..'9' sort before 'a'..'f'.
   */
  private static int compare(String a, String b) {
    int n = Math.max(a.length(), b.length());
    return pad(a, n).compareTo(pad(b, n));
  }

  private static String pad(String s, int n) {
    return s + "0".repeat(n - s.length());
  }

  private static IllegalArgumentException bad(String range, String why) {
    return new IllegalArgumentException(
        "keyRange must be " + SYNTAX + ", was " + quote(range) + ": " + why);
  }

  private static String quote(String s) {
    return "\"" + s + "\"";
  }
}
