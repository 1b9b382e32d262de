package dev.sluice.manager.security;

import java.util.Locale;

/** What a grant lets a principal do on a queue. */
public enum Action {
  /** Open a Subscribe stream on the queue, and ack and nack what it was sent. */
  SUBSCRIBE,
  /** Cancel pending events. */
  CANCEL,
  /** Read the queue's statistics and see it listed. */
  STATS,
  /**
   * Every operator action (it implies {@link #REPLAY}, {@link #PURGE}, {@link #PAUSE}, {@link
   * #CANCEL} and {@link #STATS} in the admin API), and reflection.
   */
  ADMIN,
  /** Replay dead events (admin API). */
  REPLAY,
  /** Purge dead events (admin API). */
  PURGE,
  /** Pause and resume the queue (admin API). */
  PAUSE;

  /** The name as written in sluice.yaml. */
  public String configName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Parses a name from sluice.yaml; the message names the field and the known actions. */
  public static Action parse(String field, String s) {
    for (Action a : values()) {
      if (a.configName().equals(s == null ? "" : s.strip().toLowerCase(Locale.ROOT))) {
        return a;
      }
    }
    throw new IllegalArgumentException(
        field
            + ": unknown action '"
            + s
            + "' (known: subscribe, cancel, stats, admin, replay, purge, pause)");
  }
}
