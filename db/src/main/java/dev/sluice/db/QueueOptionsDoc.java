package dev.sluice.db;

import java.time.Duration;

/**
 * The README's table of queue options, rendered from {@link QueueOptions#OPTIONS}: a test keeps the
 * README equal to it. Print it with {@code java -cp <sluice-db jar> dev.sluice.db.QueueOptionsDoc}.
 */
public final class QueueOptionsDoc {
  /** The line before the table in the README. */
  public static final String BEGIN = "<!-- queue options: generated from QueueOptions.OPTIONS -->";

  /** The line after the table in the README. */
  public static final String END = "<!-- end of queue options -->";

  private QueueOptionsDoc() {}

  /** The table, one row per option, ending in a newline. */
  public static String markdown() {
    StringBuilder sb = new StringBuilder();
    sb.append("| option | default | bounds | a change | meaning |\n");
    sb.append("|---|---|---|---|---|\n");
    for (QueueOption<?> o : QueueOptions.OPTIONS) {
      sb.append("| `")
          .append(o.name())
          .append("` | ")
          .append(o.shownDefault() != null ? o.shownDefault() : "`" + o.formattedDefault() + "`")
          .append(" | ")
          .append(bounds(o))
          .append(o.boundsNote() == null ? "" : ", " + o.boundsNote())
          .append(" | ")
          .append(o.inPlace() ? "in place" : "restarts the queue")
          .append(" | ")
          .append(o.doc())
          .append(" |\n");
    }
    return sb.toString();
  }

  /** The accepted range as the table says it. */
  static String bounds(QueueOption<?> o) {
    return switch (o.kind()) {
      case DURATION -> ms(o.min()) + " – " + ms(o.max());
      case COUNT -> o.min() + " – " + o.max();
      case PERCENT -> o.min() + "% – " + o.max() + "%";
      case BOOL -> "`true`, `false`";
      case CLASS_SHARES -> "up to " + QueueOptions.MAX_CLASSES + " classes, each 1% – 100%";
      case BYTES -> ByteSizes.format(o.min()) + " – " + ByteSizes.format(o.max());
      case TEXT -> o.text().says();
    };
  }

  private static String ms(long ms) {
    return Durations.format(Duration.ofMillis(ms));
  }

  public static void main(String[] args) {
    System.out.print(markdown());
  }
}
