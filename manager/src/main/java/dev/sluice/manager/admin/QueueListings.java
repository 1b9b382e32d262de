package dev.sluice.manager.admin;

import static dev.sluice.manager.admin.Grants.allows;
import static dev.sluice.manager.admin.Grants.notFound;
import static dev.sluice.manager.admin.Grants.require;

import dev.sluice.core.QueueEngine;
import dev.sluice.core.queue.QueueManager;
import dev.sluice.core.queue.dispatch.ReceiverStats;
import dev.sluice.core.shard.ShardManager;
import dev.sluice.db.store.MaintenanceStore;
import dev.sluice.db.store.StateCounts;
import dev.sluice.manager.admin.AdminActions.QueueSummary;
import dev.sluice.manager.admin.AdminActions.ReceiverView;
import dev.sluice.manager.admin.Audit.Outcome;
import dev.sluice.manager.security.Action;
import dev.sluice.manager.security.Principal;
import java.util.ArrayList;
import java.util.List;

/** What runs here: the queues a principal may see with their counts, and the receiver streams. */
final class QueueListings {
  private final Audit audit;
  private final QueueEngine engine;

  /** Counting scans a table: each queue's counts are reused for a second, however many ask. */
  private final CountsCache counts;

  QueueListings(Audit audit, QueueEngine engine, CountsCache counts) {
    this.audit = audit;
    this.engine = engine;
    this.counts = counts;
  }

  /** Every queue the principal may see, per shard, with counts where it has {@code stats}. */
  public List<QueueSummary> listQueues(Principal p) {
    return audit.audited(
        p,
        "list_queues",
        "*",
        "*",
        () -> {
          List<QueueSummary> out = new ArrayList<>();
          for (ShardManager s : engine.shards()) {
            for (String name : new java.util.TreeSet<>(s.discoveredNames())) {
              if (!p.sees(name)) {
                continue;
              }
              QueueManager q = s.queue(name);
              StateCounts c = null;
              if (allows(p, name, Action.STATS)) {
                MaintenanceStore st = s.directStore(name);
                c = st == null ? null : counts.counts(s.name(), name, st::counts);
              }
              out.add(
                  new QueueSummary(
                      name,
                      s.name(),
                      q != null ? "SERVING" : "STANDBY",
                      "",
                      q != null && q.paused(),
                      c));
            }
            s.disabled()
                .forEach(
                    (name, problem) -> {
                      if (p.sees(name)) {
                        out.add(new QueueSummary(name, s.name(), "DISABLED", problem, false, null));
                      }
                    });
          }
          return new Outcome<>(out, out.size());
        });
  }

  /** The receiver streams on the queue (or every queue with {@code stats}) dispatched here. */
  public List<ReceiverView> listReceivers(Principal p, String queue) {
    boolean one = queue != null && !queue.isEmpty();
    return audit.audited(
        p,
        "list_receivers",
        one ? queue : "*",
        "*",
        () -> {
          if (one) {
            require(p, queue, Action.STATS);
            if (!engine.knows(queue)) {
              throw notFound(queue);
            }
          }
          List<ReceiverView> out = new ArrayList<>();
          for (QueueManager q : engine.served()) {
            if ((one && !q.queue().equals(queue)) || !allows(p, q.queue(), Action.STATS)) {
              continue;
            }
            for (ReceiverStats r : q.receivers()) {
              out.add(
                  new ReceiverView(
                      q.queue(),
                      q.shard(),
                      r.receiverId(),
                      r.inFlight(),
                      r.maxInFlight(),
                      r.draining()));
            }
          }
          return new Outcome<>(out, out.size());
        });
  }
}
