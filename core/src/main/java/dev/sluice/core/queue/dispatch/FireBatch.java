package dev.sluice.core.queue.dispatch;

import dev.sluice.core.window.CachedEvent;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.EventRow;
import dev.sluice.db.store.FireRef;
import dev.sluice.db.store.FireResult;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Events taken from the window with an outlet's credit reserved for each, to be fired together.
 * Built and read on the dispatcher thread; the firer thread only reads its {@link #fireRefs} and
 * records its answer ({@link #answered}) before handing it back in a {@link
 * DispatcherCommand.Fired} (the inbox's queue orders those writes before the reads).
 */
public final class FireBatch {
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

  /**
   * What the firer fires: each event at the epoch and {@code time_next} it was read at (firer
   * thread): its due time, or for a key's turn handed over unreleased, the held time the table
   * shows.
   */
  public List<FireRef> fireRefs() {
    List<FireRef> out = new ArrayList<>(events.size());
    for (CachedEvent e : events) {
      out.add(new FireRef(e.id, e.epoch, e.tableTimeNextNs()));
    }
    return out;
  }

  /**
   * The firer's answer (firer thread): the ack deadline written, and the fire's {@code result} for
   * this batch's events, or the {@code error} that failed it.
   */
  public void answered(long deadlineNs, FireResult result, RuntimeException error) {
    this.firedDeadlineNs = deadlineNs;
    this.error = error;
    if (result != null) {
      Map<EventRef, CasOutcome> outcome = new HashMap<>();
      Map<Long, Map<String, Object>> columns = new HashMap<>();
      for (int i = 0; i < events.size(); i++) {
        Long id = events.get(i).boxedId;
        EventRow row = result.fired().get(id);
        outcome.put(refs.get(i), row == null ? CasOutcome.STALE : CasOutcome.APPLIED);
        if (row != null) {
          columns.put(id, row.userColumns());
        }
      }
      this.outcome = outcome;
      this.columns = columns;
      this.locked = result.locked();
      this.changed = result.changed();
    }
  }
}
