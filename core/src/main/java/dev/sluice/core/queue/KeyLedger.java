package dev.sluice.core.queue;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.LongPredicate;

/**
 * An ordered queue's keys, on the dispatcher's side: the one event of each key that may be in the
 * window or in flight (the key's head). Polls only bring rows that the table showed first of their
 * key ({@link KeyTurns} holds the others), but a poll's snapshot can be older than what this
 * manager holds — an event fired a moment ago, a row committed late with a lower id — so a second
 * event of a key whose head is still here is turned away: the table keeps it, and the next read of
 * it sees where it stands. When the head leaves (settled, or gone from memory), the key is told to
 * {@link KeyTurns} through the dispatcher's port, for its next event.
 *
 * <p>Owned by the dispatcher thread: no locks.
 */
final class KeyLedger {
  /** Each key's head, by key. */
  private final Map<Object, Long> heads = new HashMap<>();

  /** Whether this manager still holds the event (window, firing or in flight). */
  private final LongPredicate present;

  /** Where a freed key goes: {@link KeyTurns#freed}. */
  private final Consumer<Object> freed;

  KeyLedger(LongPredicate present, Consumer<Object> freed) {
    this.present = present;
    this.freed = freed;
  }

  /**
   * Whether {@code e} may enter the window: it has no key, or it is its key's head, or the key has
   * no head here any more (it becomes the head).
   */
  boolean admit(CachedEvent e) {
    Object k = e.orderingKey;
    if (k == null) {
      return true;
    }
    Long head = heads.get(k);
    if (head == null || head == e.id || !present.test(head)) {
      heads.put(k, e.id);
      return true;
    }
    return false;
  }

  /**
   * {@code e} left this manager (settled, or let go of): if it was its key's head, the key has none
   * now; either way the key is told to {@link KeyTurns}, which reads from the table what comes next
   * (a check that finds the event itself still first changes nothing).
   */
  void left(CachedEvent e) {
    Object k = e.orderingKey;
    if (k == null) {
      return;
    }
    Long head = heads.get(k);
    if (head != null && head == e.id) {
      heads.remove(k);
    }
    freed.accept(k);
  }

  /** Keys whose head is gone from memory without {@link #left}: dropped when they pile up. */
  void forgetAbsent(int keep) {
    if (heads.size() <= keep) {
      return;
    }
    for (Iterator<Long> it = heads.values().iterator(); it.hasNext(); ) {
      if (!present.test(it.next())) {
        it.remove();
      }
    }
  }

  int size() {
    return heads.size();
  }
}
