package dev.sluice.manager.admin;

import static dev.sluice.manager.admin.Grants.notFound;
import static dev.sluice.manager.admin.Grants.require;

import dev.sluice.core.QueueEngine;
import dev.sluice.core.shard.ShardManager;
import dev.sluice.db.QueueControl;
import dev.sluice.manager.admin.AdminActions.PauseResult;
import dev.sluice.manager.admin.Audit.Outcome;
import dev.sluice.manager.security.Action;
import dev.sluice.manager.security.Principal;
import java.util.ArrayList;
import java.util.List;

/** The queue's pause switch, per shard or on every shard of this manager. */
final class PauseSwitch {
  private final Audit audit;
  private final QueueEngine engine;
  private final ShardLocator shards;

  PauseSwitch(Audit audit, QueueEngine engine, ShardLocator shards) {
    this.audit = audit;
    this.engine = engine;
    this.shards = shards;
  }

  /**
   * Sets the queue's pause switch on one shard, or on every shard of this manager that has the
   * queue ({@code shard} null or empty). This manager applies it before answering (it runs a
   * discovery round of each shard on the caller's thread); every other manager reads the switch at
   * its next discovery round.
   */
  public PauseResult pause(Principal p, String queue, String shard) {
    return setPaused(p, queue, shard, true);
  }

  /** The opposite of {@link #pause}. */
  public PauseResult resume(Principal p, String queue, String shard) {
    return setPaused(p, queue, shard, false);
  }

  private PauseResult setPaused(Principal p, String queue, String shard, boolean paused) {
    return audit.audited(
        p,
        paused ? "pause" : "resume",
        queue,
        shard == null || shard.isEmpty() ? "*" : shard,
        () -> {
          require(p, queue, Action.PAUSE);
          List<ShardManager> on = new ArrayList<>();
          if (shard == null || shard.isEmpty()) {
            for (ShardManager s : engine.shards()) {
              if (s.knows(queue)) {
                on.add(s);
              }
            }
            if (on.isEmpty()) {
              throw notFound(queue);
            }
          } else {
            on.add(shards.locate(queue, shard).shard());
          }
          List<String> names = new ArrayList<>();
          for (ShardManager s : on) {
            // The switch every manager reads at discovery (sluice_queue_control, migration V2).
            new QueueControl(s.dataSource()).setPaused(queue, paused);
            // A discovery round here, on the caller's thread: rounds are serialized, so a round
            // that read the old switch finishes first and cannot undo this one afterwards.
            s.discover();
            names.add(s.name());
          }
          return new Outcome<>(new PauseResult(queue, paused, names), names.size());
        });
  }
}
