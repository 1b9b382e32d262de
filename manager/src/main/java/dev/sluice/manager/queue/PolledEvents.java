package dev.sluice.manager.queue;

import dev.sluice.db.store.EventRow;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns polled rows into window events. Runs on the poller's thread, so that the dispatcher's part
 * of a poll is only the checks by id and the adds: a refill of thousands of rows converted on the
 * dispatcher thread would hold up every dispatch for milliseconds.
 */
final class PolledEvents {
  private static final Logger log = LoggerFactory.getLogger(PolledEvents.class);

  private PolledEvents() {}

  static List<CachedEvent> of(List<EventRow> rows, QueueContext ctx) {
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
              actorPath(row, ctx),
              row.workClass() == null ? "" : row.workClass(),
              Values.toWire(row.userColumns())));
    }
    return out;
  }

  /**
   * The actor path's segments ({@code user-17/reports} → [user-17, reports]). A path deeper than
   * actor_max_depth is an error in the row: it is served at the deepest allowed level and logged.
   */
  static List<String> actorPath(EventRow row, QueueContext ctx) {
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
      log.warn(
          "{}: event {} has actor path '{}' deeper than actor_max_depth={}; served at depth {}",
          ctx.where(),
          row.id(),
          a,
          max,
          max);
      segs = segs.subList(0, max);
    }
    return List.copyOf(segs);
  }
}
