package dev.sluice.db.store;

/**
 * A row whose id or epoch does not fit a signed 64-bit value (a {@code BIGINT UNSIGNED} column
 * above 2^63 - 1): it cannot be carried as an {@link EventRef}, so its values travel as the decimal
 * text the database gave. Such a row is made dead by a statement that compares that text exactly;
 * its dead reason is recorded under {@link #wrappedId} (the same 64 bits read as signed: an
 * unsigned column never holds a negative id, so within its queue this is unambiguous).
 *
 * @param id the id as decimal text, e.g. {@code 18446744073709551615}
 * @param epoch the epoch as decimal text
 * @param reason why Sluice cannot serve it (for the dead reason and the log); null when listed
 */
public record OutOfRangeRow(String id, String epoch, String reason) {

  /** The id's 64 bits as a signed long (2^64 - 1 gives -1). */
  public long wrappedId() {
    return wrapped(id);
  }

  /** The epoch's 64 bits as a signed long. */
  public long wrappedEpoch() {
    return wrapped(epoch);
  }

  static long wrapped(String decimal) {
    return decimal.startsWith("-") ? Long.parseLong(decimal) : Long.parseUnsignedLong(decimal);
  }
}
