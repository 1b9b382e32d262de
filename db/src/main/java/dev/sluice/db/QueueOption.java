package dev.sluice.db;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * One queue option, the typed key of its value in {@link QueueOptions}: its name in comments, kind,
 * default and bounds (milliseconds for durations, the number itself for counts, percents and
 * sizes), how it parses and prints, whether a migration changing it is applied in place or restarts
 * the queue, and its meaning as the README's table says it ({@link QueueOptionsDoc}). Every option
 * is one constant of {@link QueueOptionKeys}; parsing, defaults, bounds checks, the restart list
 * and the docs table all come from there.
 *
 * @param <T> the option's value type: {@code Duration}, {@code Integer}, {@code Long}, {@code
 *     Boolean}, {@code String} or the class shares' {@code Map<String, Integer>}
 */
public final class QueueOption<T> {

  /** What kind of value an option takes; each kind parses and prints one way. */
  public enum Kind {
    DURATION,
    COUNT,
    PERCENT,
    BOOL,
    CLASS_SHARES,
    BYTES,
    /**
     * A word of text, checked by the option's {@link TextRule}; an empty value ({@code
     * channel_target=}) is the default.
     */
    TEXT
  }

  /**
   * What a {@link Kind#TEXT} option accepts: a pattern (a comment's values never hold whitespace)
   * and how the docs and errors say it.
   */
  public record TextRule(Pattern pattern, String says) {}

  /** Reads a value as a comment writes it; a problem is added, and null returned, if it is bad. */
  @FunctionalInterface
  interface Parser<T> {
    T parse(QueueOption<T> option, String text, List<String> problems);
  }

  private final String name;
  private final Kind kind;
  private final T dflt;
  private final long min;
  private final long max;
  private final Parser<T> parser;
  private final Function<T, String> formatter;
  private final TextRule text;
  private final boolean inPlace;
  private final String doc;
  private final String shownDefault;
  private final String boundsNote;

  private QueueOption(
      String name,
      Kind kind,
      T dflt,
      long min,
      long max,
      Parser<T> parser,
      Function<T, String> formatter,
      TextRule text,
      boolean inPlace,
      String doc,
      String shownDefault,
      String boundsNote) {
    this.name = Objects.requireNonNull(name);
    this.kind = kind;
    this.dflt = Objects.requireNonNull(dflt);
    this.min = min;
    this.max = max;
    this.parser = parser;
    this.formatter = formatter;
    this.text = text;
    this.inPlace = inPlace;
    this.doc = doc;
    this.shownDefault = shownDefault;
    this.boundsNote = boundsNote;
  }

  static QueueOption<Duration> duration(String name, Duration dflt, Duration min, Duration max) {
    return new QueueOption<>(
        name,
        Kind.DURATION,
        dflt,
        min.toMillis(),
        max.toMillis(),
        OptionParsers::duration,
        Durations::format,
        null,
        false,
        "",
        null,
        null);
  }

  static QueueOption<Integer> count(String name, int dflt, int min, int max) {
    return new QueueOption<>(
        name,
        Kind.COUNT,
        dflt,
        min,
        max,
        OptionParsers::count,
        String::valueOf,
        null,
        false,
        "",
        null,
        null);
  }

  static QueueOption<Integer> percent(String name, int dflt, int min, int max) {
    return new QueueOption<>(
        name,
        Kind.PERCENT,
        dflt,
        min,
        max,
        OptionParsers::percent,
        p -> p + "%",
        null,
        false,
        "",
        null,
        null);
  }

  static QueueOption<Boolean> bool(String name, boolean dflt) {
    return new QueueOption<>(
        name,
        Kind.BOOL,
        dflt,
        0,
        1,
        OptionParsers::bool,
        String::valueOf,
        null,
        false,
        "",
        null,
        null);
  }

  static QueueOption<Long> bytes(String name, long dflt, long min, long max) {
    return new QueueOption<>(
        name,
        Kind.BYTES,
        dflt,
        min,
        max,
        OptionParsers::bytes,
        ByteSizes::format,
        null,
        false,
        "",
        null,
        null);
  }

  static QueueOption<Map<String, Integer>> classShares(String name) {
    return new QueueOption<>(
        name,
        Kind.CLASS_SHARES,
        Map.of(),
        0,
        100,
        OptionParsers::classShares,
        OptionParsers::classSharesText,
        null,
        false,
        "",
        null,
        null);
  }

  static QueueOption<String> text(String name, String dflt, Pattern pattern, String says) {
    return new QueueOption<>(
        name,
        Kind.TEXT,
        dflt,
        0,
        0,
        OptionParsers::text,
        String::valueOf,
        new TextRule(pattern, says),
        false,
        "",
        null,
        null);
  }

  private QueueOption<T> with(boolean inPlace, String doc, String shownDefault, String note) {
    return new QueueOption<>(
        name, kind, dflt, min, max, parser, formatter, text, inPlace, doc, shownDefault, note);
  }

  /** This option, taking effect in place when a migration changes it (no restart). */
  QueueOption<T> appliedInPlace() {
    return with(true, doc, shownDefault, boundsNote);
  }

  /** This option with its meaning, as the README's table says it. */
  QueueOption<T> doc(String meaning) {
    return with(inPlace, meaning, shownDefault, boundsNote);
  }

  /** This option with its default said in words (null: the default's value). */
  QueueOption<T> shownDefault(String says) {
    return with(inPlace, doc, says, boundsNote);
  }

  /** This option with a rule between options added to its bounds ("≥ `min_backoff`"). */
  QueueOption<T> boundsNote(String note) {
    return with(inPlace, doc, shownDefault, note);
  }

  public String name() {
    return name;
  }

  public Kind kind() {
    return kind;
  }

  /** The value when a comment does not give one. */
  public T dflt() {
    return dflt;
  }

  /** The least value: milliseconds for a duration, the number for the others. */
  public long min() {
    return min;
  }

  /** The greatest value: milliseconds for a duration, the number for the others. */
  public long max() {
    return max;
  }

  /** What a {@link Kind#TEXT} option accepts; null for the other kinds. */
  public TextRule text() {
    return text;
  }

  /**
   * True when a change is applied to the running queue (no restart, no release of events in
   * flight); false when the queue restarts for it.
   */
  public boolean inPlace() {
    return inPlace;
  }

  /** The meaning, in Markdown. */
  public String doc() {
    return doc;
  }

  /** The default said in words, or null for the default's value. */
  public String shownDefault() {
    return shownDefault;
  }

  /** A rule between options added to the bounds, or null. */
  public String boundsNote() {
    return boundsNote;
  }

  /** The value as comments write it. */
  public String format(T value) {
    return formatter.apply(value);
  }

  /** The default as comments write it. */
  public String formattedDefault() {
    return format(dflt);
  }

  /** This option's value in {@code options}, as comments write it. */
  public String formatIn(QueueOptions options) {
    return format(options.get(this));
  }

  /** The accepted range, as the README and error messages say it. */
  public String bounds() {
    return switch (kind) {
      case DURATION ->
          Durations.format(Duration.ofMillis(min))
              + " to "
              + Durations.format(Duration.ofMillis(max));
      case COUNT -> min + " to " + max;
      case PERCENT -> min + "% to " + max + "%";
      case BOOL -> "true or false";
      case CLASS_SHARES ->
          "none, or up to " + QueueOptions.MAX_CLASSES + " class:percent pairs, each 1% to 100%";
      case BYTES -> ByteSizes.format(min) + " to " + ByteSizes.format(max);
      case TEXT -> text.says();
    };
  }

  /** The value of {@code v}, or the default with a problem added when it is not valid. */
  T parse(String v, List<String> problems) {
    T parsed = parser.parse(this, v, problems);
    return parsed == null ? dflt : parsed;
  }

  @Override
  public String toString() {
    return name;
  }
}
