package dev.sluice.core.queue.poll;

import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.core.queue.ordering.GroupSeals;
import dev.sluice.core.queue.ordering.KeyTurns;
import dev.sluice.core.window.CachedEvent;
import dev.sluice.core.window.EventSize;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.EventRow;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns polled rows into window events. Runs on the poller's thread, so that the dispatcher's part
 * of a poll is only the checks by id and the adds: a refill of thousands of rows converted on the
 * dispatcher thread would hold up every dispatch for milliseconds.
 *
 * <p>One per queue, owned by the poller's thread (the poller and its {@link TenantRounds}).
 */
final class PolledEvents {
  private static final Logger log = LoggerFactory.getLogger(PolledEvents.class);

  /** At most one warning per queue this often about actor paths that are too deep. */
  static final long TOO_DEEP_WARN_EVERY_NS = TimeUnit.SECONDS.toNanos(10);

  private final QueueContext ctx;

  /** Told the largest row of each read, to size the next reads (see {@code WindowView.sawRows}). */
  private final LongConsumer rowSizes;

  /** Too-deep rows read since the last warning. */
  private long tooDeepUnwarned;

  private long nextWarnMono = Long.MIN_VALUE / 2;

  /** Too-large rows made dead since the last warning. */
  private long tooLargeUnwarned;

  private long nextTooLargeWarnMono = Long.MIN_VALUE / 2;

  /** An ordered queue's holds: the rows that wait behind their key never become events. */
  private final KeyTurns turns;

  /** A queue of completion events: which of them wait for their groups. */
  private final GroupSeals seals;

  PolledEvents(QueueContext ctx, LongConsumer rowSizes, KeyTurns turns) {
    this.ctx = ctx;
    this.seals = new GroupSeals(ctx);
    this.rowSizes = rowSizes;
    this.turns = turns;
  }

  /**
   * The rows as window events. A row larger than max_event_bytes as it would be sent is not among
   * them: it is made dead here with the reason "too large: N bytes > limit" (epoch CAS; never
   * fired, so no attempt is spent), as no receiver could be sent it.
   */
  public List<CachedEvent> of(List<EventRow> read) {
    Map<Long, dev.sluice.core.outlet.GroupOutcome> groups = new java.util.HashMap<>();
    List<EventRow> rows = seals.admit(turns.admit(read), groups);
    List<CachedEvent> out = new ArrayList<>(rows.size());
    Map<EventRef, String> tooLarge = null;
    long largest = 0;
    int limit = ctx.options().maxEventBytes();
    for (EventRow row : rows) {
      Map<String, Object> columns = row.userColumns();
      Object key = turns.keyOf(row);
      int bytes = EventSize.of(ctx.queue(), ctx.shard(), row, key);
      largest = Math.max(largest, bytes);
      if (bytes > limit) {
        if (tooLarge == null) {
          tooLarge = new LinkedHashMap<>();
        }
        tooLarge.put(
            new EventRef(row.id(), row.epoch()), "too large: " + bytes + " bytes > " + limit);
        continue;
      }
      // A held row here is a key's turn handed over unreleased (KeyTurns): due at its own time.
      out.add(
          new CachedEvent(
              row.id(),
              row.epoch(),
              row.dueNs(),
              row.timeCreatedNs(),
              row.priority(),
              row.tenant(),
              actorPath(row),
              row.workClass() == null ? "" : row.workClass(),
              columns,
              bytes,
              key,
              groups.isEmpty() ? null : groups.get(row.id()),
              row.held()));
    }
    if (!read.isEmpty()) {
      rowSizes.accept(largest);
    }
    if (tooLarge != null) {
      markTooLarge(tooLarge);
    }
    return out;
  }

  /** Whether a completion event was left for the next poll since the last call (clears it). */
  boolean takeLeftOver() {
    return seals.takeLeftOver();
  }

  /**
   * Makes too-large rows dead with their reason. A failure is counted and logged; the rows stay
   * pending and the next read of them tries again.
   */
  private void markTooLarge(Map<EventRef, String> reasons) {
    Map<EventRef, CasOutcome> outcome;
    try {
      outcome = ctx.dispatch().markDead(reasons);
    } catch (RuntimeException e) {
      ctx.metrics().dbErrors.increment();
      log.warn(
          "{}: could not make {} too-large events dead (ids {}), retrying at their next read: {}",
          ctx.where(),
          reasons.size(),
          reasons.keySet().stream().map(EventRef::id).toList(),
          e.toString());
      return;
    }
    int dead = 0;
    for (CasOutcome o : outcome.values()) {
      if (o == CasOutcome.APPLIED) {
        dead++;
      }
    }
    ctx.metrics().tooLarge.increment(dead);
    ctx.metrics().dead.increment(dead);
    tooLargeUnwarned += dead;
    long mono = ctx.clock().monoNs();
    if (dead == 0 || mono - nextTooLargeWarnMono < 0) {
      return;
    }
    Map.Entry<EventRef, String> first = reasons.entrySet().iterator().next();
    log.warn(
        "{}: event {} is {} and was made dead, never sent ({} too-large events made dead since the"
            + " last warning; raise max_event_bytes or store large payloads elsewhere)",
        ctx.where(),
        first.getKey().id(),
        first.getValue(),
        tooLargeUnwarned);
    tooLargeUnwarned = 0;
    nextTooLargeWarnMono = mono + TOO_DEEP_WARN_EVERY_NS;
  }

  /**
   * The actor path's segments ({@code user-17/reports} → [user-17, reports]). A path deeper than
   * actor_max_depth is an error in the row, which Sluice cannot refuse (it was inserted by plain
   * SQL): the event is still delivered, in the queue of its deepest allowed level, and the error is
   * counted ({@code sluice_actor_path_too_deep_total}) and logged with the event's id, at most once
   * every {@link #TOO_DEEP_WARN_EVERY_NS} per queue.
   */
  List<String> actorPath(EventRow row) {
    String a = row.actor();
    if (a == null || a.isEmpty()) {
      return List.of();
    }
    List<String> segs = new ArrayList<>();
    for (String s : a.split("/")) {
      if (!s.isEmpty()) {
        segs.add(s);
      }
    }
    int max = ctx.options().actorMaxDepth();
    if (segs.size() > max) {
      tooDeep(row, a, segs.size(), max);
      segs = segs.subList(0, max);
    }
    return List.copyOf(segs);
  }

  private void tooDeep(EventRow row, String actor, int depth, int max) {
    ctx.metrics().actorTooDeep.increment();
    tooDeepUnwarned++;
    long mono = ctx.clock().monoNs();
    if (mono - nextWarnMono < 0) {
      return;
    }
    log.warn(
        "{}: event {} has actor path '{}' of depth {}, deeper than actor_max_depth={}: served at"
            + " depth {} ({} such rows read since the last warning; raise actor_max_depth or"
            + " shorten the paths)",
        ctx.where(),
        row.id(),
        actor,
        depth,
        max,
        max,
        tooDeepUnwarned);
    tooDeepUnwarned = 0;
    nextWarnMono = mono + TOO_DEEP_WARN_EVERY_NS;
  }
}
