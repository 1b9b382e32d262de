package dev.sluice.db.schedule;

import java.util.Locale;

/**
 * What a schedule does with the occurrences it missed while no leader ran (downtime longer than the
 * grace, see {@link Occurrences}): the {@code catch_up} column of {@code sluice_schedule}.
 */
public enum CatchUp {
  /** One occurrence (at the latest missed time) stands for all the missed ones. The default. */
  ONE,
  /**
   * Each missed occurrence is inserted, at most {@link Occurrences#MAX_CATCH_UP}; the rest skipped.
   */
  ALL,
  /** The missed occurrences are skipped: the schedule resumes with the next one due. */
  NONE;

  /** The column's spelling: {@code one}, {@code all}, {@code none}. */
  public String sql() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Parses {@code one|all|none} (any case); a clear error names what was given. */
  public static CatchUp parse(String s) {
    if (s == null || s.isBlank()) {
      return ONE;
    }
    try {
      return valueOf(s.strip().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("catch_up must be one, all or none, was '" + s + "'", e);
    }
  }
}
