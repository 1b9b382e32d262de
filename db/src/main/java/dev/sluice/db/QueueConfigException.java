package dev.sluice.db;

/** A queue table's comment or schema is not usable; the message says what and where. */
public class QueueConfigException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public QueueConfigException(String message) {
    super(message);
  }
}
