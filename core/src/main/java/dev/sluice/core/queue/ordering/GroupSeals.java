package dev.sluice.core.queue.ordering;

import dev.sluice.client.QueueColumns;
import dev.sluice.core.outlet.GroupOutcome;
import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.EventRow;
import dev.sluice.db.store.FencedOffException;
import dev.sluice.db.store.GroupStore;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A queue of completion events (a table with {@code completes_group}; README, "Event groups"): what
 * becomes of each completion event a poll reads.
 *
 * <ul>
 *   <li>Its group has no row yet: the group is sealed ({@link GroupStore#seal}: the group's row and
 *       the hold of the event, in one transaction; the poll's groups together, {@link
 *       GroupStore#sealTogether}), and the closer is told, for a group that may complete at once.
 *       The event does not go to the window.
 *   <li>Its group completed: it goes to the window with the group's counts, as any event.
 *   <li>Its group is sealed and waiting, yet the event is in a poll's range (someone moved its
 *       {@code time_next}): it is held again.
 *   <li>Its group has another completion event: it is made dead, with that reason.
 * </ul>
 *
 * <p>Owned by the poller's thread (through {@code PolledEvents}). A failed read or seal is logged
 * and counted; those events stay as they are, out of the window, and {@link #takeLeftOver} tells
 * the poller to read them again soon: a poll that follows the binlog reads each row once, so
 * without it they would wait for its next full sweep.
 */
public final class GroupSeals {
  private static final Logger log = LoggerFactory.getLogger(GroupSeals.class);
  private static final long WARN_EVERY_NS = TimeUnit.SECONDS.toNanos(10);

  /** Groups sealed in one transaction, at most. */
  static final int SEAL_BATCH = 500;

  private final QueueContext ctx;
  private long nextWarnMono = Long.MIN_VALUE / 2;

  /** A completion event was left for the next poll since the last {@link #takeLeftOver}. */
  private boolean leftOver;

  public GroupSeals(QueueContext ctx) {
    this.ctx = ctx;
  }

  /**
   * The rows that go to the window: {@code rows} without the completion events that wait; each
   * completion event that goes has its group's outcome put in {@code outcomes}, by id.
   */
  public List<EventRow> admit(List<EventRow> rows, Map<Long, GroupOutcome> outcomes) {
    if (rows.isEmpty() || !ctx.table().completesGroups()) {
      return rows;
    }
    Set<String> keys = new LinkedHashSet<>();
    for (EventRow r : rows) {
      String k = keyOf(r);
      if (k != null) {
        keys.add(k);
      }
    }
    if (keys.isEmpty()) {
      return rows;
    }
    List<EventRow> out = new ArrayList<>(rows.size());
    GroupStore store = ctx.groups().store();
    Map<String, GroupStore.Group> found;
    try {
      found = store == null ? null : store.find(keys);
    } catch (RuntimeException e) {
      ctx.metrics().dbErrors.increment();
      warn(
          "could not read the groups of {} completion events ({}); the next poll retries", keys, e);
      found = null;
    }
    List<EventRef> holdAgain = new ArrayList<>();
    Map<EventRef, String> dead = new LinkedHashMap<>();
    Map<String, EventRef> toSeal = new LinkedHashMap<>();
    for (EventRow r : rows) {
      String k = keyOf(r);
      if (k == null) {
        out.add(r);
        continue;
      }
      if (found == null) {
        leftOver = true; // no store (not leading) or the read failed: next poll
        continue;
      }
      EventRef ref = new EventRef(r.id(), r.epoch());
      if (k.isEmpty() || k.endsWith(" ")) {
        // The key column's collation ignores trailing spaces: 'g ' would be group 'g'.
        dead.put(
            ref,
            "completes_group '"
                + k
                + "' is empty or ends with a space: group keys are compared without trailing"
                + " spaces, so it cannot name a group of its own");
        continue;
      }
      GroupStore.Group g = found.get(k);
      if (g == null) {
        // A second completion event of the key in this poll: the next poll finds the group taken.
        toSeal.putIfAbsent(k, ref);
        continue;
      }
      if (g.completionQueue().equals(ctx.queue()) && g.completionId() == r.id()) {
        if (g.completed()) {
          out.add(r);
          outcomes.put(r.id(), new GroupOutcome(k, g.acked(), g.dead(), g.cancelled()));
        } else {
          holdAgain.add(ref);
        }
        continue;
      }
      dead.put(
          ref,
          "group "
              + k
              + " already has its completion event (queue "
              + g.completionQueue()
              + ", event "
              + g.completionId()
              + "); a group completes once");
    }
    List<String> sealing = new ArrayList<>(toSeal.keySet());
    for (int at = 0; at < sealing.size(); at += SEAL_BATCH) {
      Map<String, EventRef> batch = new LinkedHashMap<>();
      for (String k : sealing.subList(at, Math.min(sealing.size(), at + SEAL_BATCH))) {
        batch.put(k, toSeal.get(k));
      }
      sealAll(store, batch);
    }
    if (!holdAgain.isEmpty()) {
      try {
        ctx.ordering().hold(holdAgain);
      } catch (RuntimeException e) {
        ctx.metrics().dbErrors.increment();
        warn("could not hold again completion events {} ({}); the next poll retries", holdAgain, e);
      }
    }
    if (!dead.isEmpty()) {
      makeDead(dead);
    }
    return out;
  }

  /**
   * Seals the groups of a poll's completion events: together in one transaction when each can be (a
   * drain's poll reads hundreds), else each on its own ({@link #seal}), which tells apart the one
   * taken, changed or failing.
   */
  private void sealAll(GroupStore store, Map<String, EventRef> toSeal) {
    if (toSeal.size() > 1) {
      boolean together;
      try {
        together =
            store.sealTogether(
                ctx.table(), toSeal, ctx.table().options().groupFailFast(), ctx.clock().nowNs());
      } catch (FencedOffException e) {
        throw e;
      } catch (RuntimeException e) {
        together = false;
      }
      if (together) {
        for (String key : toSeal.keySet()) {
          log.debug(
              "{}: group {} sealed by completion event {}", ctx.where(), key, toSeal.get(key).id());
          ctx.groups().sealed(key);
        }
        return;
      }
    }
    toSeal.forEach((key, ref) -> seal(store, ref, key));
  }

  private void seal(GroupStore store, EventRef ref, String key) {
    GroupStore.Sealed s;
    try {
      s =
          store.seal(
              ctx.table(), ref, key, ctx.table().options().groupFailFast(), ctx.clock().nowNs());
    } catch (FencedOffException e) {
      throw e;
    } catch (RuntimeException e) {
      ctx.metrics().dbErrors.increment();
      warn("could not seal group {} ({}); the next poll retries", key, e);
      leftOver = true;
      return;
    }
    if (s == GroupStore.Sealed.SEALED) {
      log.debug("{}: group {} sealed by completion event {}", ctx.where(), key, ref.id());
      ctx.groups().sealed(key);
    }
  }

  /**
   * Whether a completion event was left for the next poll (its group could not be read or sealed)
   * since the last call; clears it.
   */
  public boolean takeLeftOver() {
    boolean was = leftOver;
    leftOver = false;
    return was;
  }

  private void makeDead(Map<EventRef, String> reasons) {
    try {
      Map<EventRef, CasOutcome> out = ctx.dispatch().markDead(reasons);
      int n = 0;
      for (Map.Entry<EventRef, CasOutcome> e : out.entrySet()) {
        if (e.getValue() == CasOutcome.APPLIED) {
          n++;
          log.warn(
              "{}: event {} made dead: {}", ctx.where(), e.getKey().id(), reasons.get(e.getKey()));
        }
      }
      ctx.metrics().dead.increment(n);
    } catch (RuntimeException e) {
      ctx.metrics().dbErrors.increment();
      warn(
          "could not make completion events {} dead ({}); the next poll retries",
          reasons.keySet(),
          e);
    }
  }

  private static String keyOf(EventRow r) {
    Object v = r.userColumns().get(QueueColumns.COMPLETES_GROUP);
    return v == null ? null : v.toString();
  }

  private void warn(String msg, Object what, RuntimeException e) {
    long mono = ctx.clock().monoNs();
    if (mono - nextWarnMono < 0) {
      return;
    }
    nextWarnMono = mono + WARN_EVERY_NS;
    log.warn(ctx.where() + ": " + msg, what, e.toString());
  }
}
