package dev.sluice.core.outlet;

import dev.sluice.db.store.EventRef;
import java.util.List;

/**
 * How an {@link Outlet} reports what became of the events delivered to it, to the queue (on one
 * shard) that delivered them. Any thread; each call is queued for the queue's dispatcher thread.
 * Refs the queue does not know (fired before a restart, settled meanwhile) are left to the
 * database's compare-and-set on {@code epoch}.
 */
public interface OutletOutcomes {

  /** Handled: the events become {@code acked}. */
  void acked(Outlet from, List<EventRef> refs);

  /**
   * Acked by the outlet's side in its own transaction (the same compare-and-set) and committed: the
   * rows are acked already; the queue only forgets them.
   */
  void committed(Outlet from, List<EventRef> refs);

  /** Not handled: each goes back to pending with backoff, or dead after its last attempt. */
  void nacked(Outlet from, List<Nack> nacks);

  /**
   * Not handled and given back unsent, through no fault of the events (its broker is down, the
   * publish failed): each goes back to pending at once and spends no attempt — the fire is undone,
   * its epoch taken back by one. Only for events of which the outlet will report nothing more and
   * nobody holds a delivery that could still be answered: an event a receiver took and may answer
   * is {@linkplain #nacked nacked} instead, or left to its ack deadline, and counts.
   */
  void released(Outlet from, List<EventRef> refs, String why);
}
