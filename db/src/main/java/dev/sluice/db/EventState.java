package dev.sluice.db;

import java.util.Locale;

/**
 * The life of an event (see the README, "How it works"). The numeric codes are what a TINYINT
 * {@code state} column holds; an ENUM column holds the lower-case names.
 */
public enum EventState {
  PENDING(0),
  FIRED(1),
  ACKED(2),
  DEAD(3),
  CANCELLED(4);

  private final int code;

  EventState(int code) {
    this.code = code;
  }

  public int code() {
    return code;
  }

  /** The name an ENUM state column uses. */
  public String sqlName() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static EventState ofCode(int code) {
    for (EventState s : values()) {
      if (s.code == code) {
        return s;
      }
    }
    throw new IllegalArgumentException("unknown event state code " + code);
  }

  public static EventState ofName(String name) {
    return valueOf(name.trim().toUpperCase(Locale.ROOT));
  }

  /** The state of {@code code}, or null when no state has it (a row changed by hand, say). */
  public static EventState ofCodeOrNull(long code) {
    for (EventState s : values()) {
      if (s.code == code) {
        return s;
      }
    }
    return null;
  }

  /** The state named {@code name} (any case), or null when none is. */
  public static EventState ofNameOrNull(String name) {
    for (EventState s : values()) {
      if (s.sqlName().equalsIgnoreCase(name.trim())) {
        return s;
      }
    }
    return null;
  }
}
