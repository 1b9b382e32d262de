package dev.sluice.core.window;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.LongPredicate;

/**
 * An ordered queue's keys, on the dispatcher's side: the one event of each key that may be in the
 * window or in flight (the key's head). Reads only bring rows that the table showed first of their
 * key ({@link KeyTurns} holds the others). When the head leaves (settled, or gone from memory), the
 * key is told to {@link KeyTurns} through the dispatcher's port, for its next event.
 *
 * <p>A row read as first of its key while another event of that key is here: the reads run one
 * after another on the poller's thread and their results arrive here in that order, so that read
 * began after the one that brought the head, when the head's row was visible. If the head has the
 * lower id, the table no longer showed it pending or fired: it was settled where this manager could
 * not see (acked at another manager after a failover, or by hand), and the new row becomes the
 * head. If the head has the higher id, the new row was committed late with a lower id (or
 * replayed): it is turned away while the head is out; the table keeps it, and it comes back when
 * the head leaves.
 *
 * <p>Owned by the dispatcher thread: no locks; only {@link #holds} is read from another (the
 * poller's), on a concurrent set.
 */
public final class KeyLedger {
  /** Each key's head, by key. */
  private final Map<Object, Long> heads = new HashMap<>();

  /**
   * The ids of the keyed events admitted here and not let go of since, nor left: those this manager
   * holds (window, firing or in flight). Written by the dispatcher's thread only; read by the
   * poller's ({@link #holds}), whose polls need not read again where such a row stands in its key.
   */
  private final Set<Long> held = ConcurrentHashMap.newKeySet();

  /** Whether this manager still holds the event (window, firing or in flight). */
  private final LongPredicate present;

  /** Where a freed key goes: {@link KeyTurns#freed}. */
  private final Consumer<Object> freed;

  public KeyLedger(LongPredicate present, Consumer<Object> freed) {
    this.present = present;
    this.freed = freed;
  }

  /**
   * Whether {@code e} may enter the window: it has no key, or it is its key's head, or the key has
   * no head here any more (it becomes the head).
   */
  public boolean admit(CachedEvent e) {
    Object k = e.orderingKey;
    if (k == null) {
      return true;
    }
    Long head = heads.get(k);
    if (head == null || head == e.id || head < e.id || !present.test(head)) {
      heads.put(k, e.id);
      held.add(e.boxedId);
      return true;
    }
    return false;
  }

  /**
   * Any thread (the poller's): whether the event {@code id} is an ordered event this manager holds,
   * as admitted here. A poll that reads it again finds it known and skips it, so its place in its
   * key changes nothing.
   */
  public boolean holds(long id) {
    return held.contains(id);
  }

  /**
   * {@code e} left the window without leaving this manager's keys (no room for it, trimmed, changed
   * since the poll): the table keeps it, and a poll that reads it again reads its place too.
   */
  public void letGo(CachedEvent e) {
    if (e.orderingKey != null) {
      if (e.heldInTable) {
        // The table shows it held, out of every poll's range: no poll would bring it back. It
        // leaves as a settled event does, and KeyTurns releases it in the table this time.
        left(e);
      } else {
        held.remove(e.boxedId);
      }
    }
  }

  /**
   * {@code e} left this manager (settled, or let go of): if it was its key's head, the key has none
   * now; either way the key is told to {@link KeyTurns}, which reads from the table what comes next
   * (a check that finds the event itself still first changes nothing).
   */
  public void left(CachedEvent e) {
    Object k = e.orderingKey;
    if (k == null) {
      return;
    }
    held.remove(e.boxedId);
    Long head = heads.get(k);
    if (head != null && head == e.id) {
      heads.remove(k);
    }
    freed.accept(k);
  }

  /** Keys whose head is gone from memory without {@link #left}: dropped when they pile up. */
  public void forgetAbsent(int keep) {
    if (heads.size() > keep) {
      heads.values().removeIf(id -> !present.test(id));
    }
    if (held.size() > keep) {
      held.removeIf(id -> !present.test(id));
    }
  }
}
