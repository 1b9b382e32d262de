package dev.sluice.core.queue;

import dev.sluice.core.window.CachedEvent;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Events taken from the window with an outlet's credit reserved for each, to be fired together.
 * Built and read on the dispatcher thread; the firer thread only sets {@link #outcome} or {@link
 * #error} before handing it back in a {@link DispatcherCommand.Fired} (the inbox's queue orders
 * those writes before the reads).
 */
final class FireBatch {
  final List<CachedEvent> events;
  final List<AttachedOutlet> owners;
  final List<EventRef> refs;
  final long firedAtNs;

  /** The ack deadline written: this batch's, or a later one of its group's. */
  long firedDeadlineNs;

  Map<EventRef, CasOutcome> outcome;

  /** Of this batch's events, the fired ones' columns as they were fired (wire form). */
  Map<Long, Map<String, Object>> columns = Map.of();

  /** Rows another transaction held locked: still pending, to be fired once free. */
  Set<Long> locked = Set.of();

  /** Rows rescheduled or changed since the poll: not fired, to be read again. */
  Set<Long> changed = Set.of();

  RuntimeException error;

  /** {@code events[i]} to be fired at the epoch it was read at, for {@code owners[i]}. */
  FireBatch(List<CachedEvent> events, List<AttachedOutlet> owners, long firedAtNs) {
    this.events = events;
    this.owners = owners;
    List<EventRef> refs = new ArrayList<>(events.size());
    for (CachedEvent e : events) {
      refs.add(new EventRef(e.id, e.epoch));
    }
    this.refs = refs;
    this.firedAtNs = firedAtNs;
  }
}
