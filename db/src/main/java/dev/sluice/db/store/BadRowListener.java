package dev.sluice.db.store;

/**
 * Told about each row a store met that Sluice cannot serve as it is (an unknown state, a value the
 * driver cannot read, an epoch at its column's maximum). The store has skipped the row or made it
 * dead already; the listener counts and logs. Called on the thread that met the row; must not
 * throw.
 */
@FunctionalInterface
public interface BadRowListener {
  BadRowListener NONE = (id, reason, detail) -> {};

  /**
   * @param reason a short, fixed label for metrics, such as {@code unknown_state}
   * @param detail what exactly was wrong, for the log
   */
  void badRow(long id, String reason, String detail);
}
