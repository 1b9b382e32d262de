package dev.sluice.db.store;

import static dev.sluice.db.QueueConvention.*;

import dev.sluice.db.EventState;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.jooq.impl.DSL;

/**
 * The {@link OrderingStore} of one queue table: holds and turns of an ordered queue's keys, each a
 * compare-and-set on the epoch ({@link EventCas#shiftHeld}), fenced for a leader's store. For an
 * unordered queue the reads find nothing.
 */
final class JdbcOrderingStore extends CasStore implements OrderingStore {

  /** An ordered queue's key reads; null for an unordered queue. */
  private final KeyReads keyReads;

  JdbcOrderingStore(EventCas cas, KeyReads keyReads) {
    super(cas);
    this.keyReads = keyReads;
  }

  @Override
  public Map<EventRef, CasOutcome> hold(Collection<EventRef> refs) {
    return c.shiftHeld(refs, true, true);
  }

  @Override
  public Map<EventRef, CasOutcome> unhold(Collection<EventRef> refs) {
    return c.shiftHeld(refs, false, true);
  }

  @Override
  public List<EventRow> firstPendingOfKeys(Collection<Object> keys) {
    if (keyReads == null || (keys.isEmpty() && c.q.orderingColumn() != null)) {
      return List.of();
    }
    List<Object> normal = new ArrayList<>(keys.size());
    keys.forEach(k -> normal.add(OrderingKeys.normal(k)));
    return keyReads.firstPending(normal);
  }

  @Override
  public List<Object> heldKeys(int limit) {
    return keyReads == null ? List.of() : keyReads.heldKeys(limit);
  }

  @Override
  public int unholdAll(int limit) {
    return c.ctx
        .update(c.t)
        .set(c.timeNext, c.timeNext.minus(HELD_NS))
        .where(c.state.eq(c.sv(EventState.PENDING)).and(c.timeNext.ge(HELD_NS)))
        // A completion event waits for its group, not behind a key: it stays held.
        .and(
            c.q.completesGroups()
                ? DSL.field(DSL.name(dev.sluice.client.QueueColumns.COMPLETES_GROUP)).isNull()
                : DSL.noCondition())
        .and(c.fenced)
        .limit(limit)
        .execute();
  }

  /** Up to {@code limit} keys halted at a dead event, by the dead event's id. */
  List<HaltedKey> haltedKeys(int limit) {
    if (keyReads == null || !c.q.options().haltOnDead()) {
      return List.of();
    }
    return keyReads.halted(limit, true);
  }

  @Override
  public int haltedKeyCount(int limit) {
    if (keyReads == null || !c.q.options().haltOnDead()) {
      return 0;
    }
    return keyReads.halted(limit, false).size();
  }

  /**
   * The next event of a key whose dead event an operator skipped, if its turn has come, released:
   * an operator's command, unfenced.
   */
  void turnAfterSkip(Object key) {
    if (keyReads == null) {
      return;
    }
    String col = c.q.orderingColumn();
    List<Object> keys = new ArrayList<>();
    keys.add(key);
    List<EventRef> turn = new ArrayList<>();
    for (EventRow r : firstPendingOfKeys(col == null ? List.of() : keys)) {
      if (r.held() && !r.waitsForKey()) {
        turn.add(new EventRef(r.id(), r.epoch()));
      }
    }
    c.shiftHeld(turn, false, false); // an operator's command: unfenced
  }
}
