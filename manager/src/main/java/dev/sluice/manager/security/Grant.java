package dev.sluice.manager.security;

import java.util.List;
import java.util.Set;

/**
 * One grant: which queues (names or globs with {@code *} and {@code ?}), which actions, and
 * optionally which tenants a receiver of this grant may be sent and whose events it may cancel
 * (empty = every tenant; the configuration file refuses an explicit empty list, see {@code
 * SecurityConfigParser}).
 */
public record Grant(
    List<String> queues, Set<Action> actions, List<String> tenants, List<QueueGlob> globs) {
  public Grant(List<String> queues, Set<Action> actions, List<String> tenants) {
    this(queues, actions, tenants, null);
  }

  /** {@code globs} is always made from {@code queues}: whatever is passed is ignored. */
  public Grant {
    if (queues == null || queues.isEmpty()) {
      throw new IllegalArgumentException("grants[].queues: name at least one queue or glob");
    }
    if (actions == null || actions.isEmpty()) {
      throw new IllegalArgumentException("grants[].actions: name at least one action");
    }
    queues = List.copyOf(queues);
    actions = Set.copyOf(actions);
    tenants = tenants == null ? List.of() : List.copyOf(tenants);
    globs = queues.stream().map(QueueGlob::of).toList();
  }

  /** Whether this grant covers {@code action} on {@code queue}. */
  public boolean allows(String queue, Action action) {
    return actions.contains(action) && matchesQueue(queue);
  }

  boolean matchesQueue(String queue) {
    for (QueueGlob g : globs) {
      if (g.matches(queue)) {
        return true;
      }
    }
    return false;
  }

  /** Whether this grant covers every queue name (a {@code "*"} glob). */
  boolean everyQueue() {
    return queues.contains("*");
  }
}
