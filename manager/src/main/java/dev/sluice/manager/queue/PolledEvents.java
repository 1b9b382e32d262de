package dev.sluice.manager.queue;

import dev.sluice.db.store.EventRow;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
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

  /** Too-deep rows read since the last warning. */
  private long tooDeepUnwarned;

  private long nextWarnMono = System.nanoTime();

  PolledEvents(QueueContext ctx) {
    this.ctx = ctx;
  }

  List<CachedEvent> of(List<EventRow> rows) {
    List<CachedEvent> out = new ArrayList<>(rows.size());
    for (EventRow row : rows) {
      out.add(
          new CachedEvent(
              row.id(),
              row.epoch(),
              row.timeNextNs(),
              row.timeCreatedNs(),
              row.priority(),
              row.tenant(),
              actorPath(row),
              row.workClass() == null ? "" : row.workClass(),
              Values.toWire(row.userColumns())));
    }
    return out;
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
    long mono = System.nanoTime();
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
