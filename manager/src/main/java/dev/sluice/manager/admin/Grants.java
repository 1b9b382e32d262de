package dev.sluice.manager.admin;

import dev.sluice.core.EngineException;
import dev.sluice.manager.security.Action;
import dev.sluice.manager.security.Grant;
import dev.sluice.manager.security.Principal;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

/**
 * What an operator call may touch: the principal's grants (the narrow action or {@link
 * Action#ADMIN}, perhaps narrowed to tenants) and the bounds of its input, with the errors the API
 * answers (INVALID_ARGUMENT naming the field, NOT_FOUND).
 */
final class Grants {
  private Grants() {}

  /** Whether the principal may do {@code a} on the queue: that action or {@code admin}. */
  static boolean allows(Principal p, String queue, Action a) {
    return p.allows(queue, a) || p.allows(queue, Action.ADMIN);
  }

  static void require(Principal p, String queue, Action a) {
    checkQueue(queue);
    if (!allows(p, queue, a)) {
      throw new AdminDenied(p.name(), a, queue);
    }
  }

  /**
   * The tenants of the grants giving {@code a} (or admin) on the queue; any when one names none.
   */
  static Predicate<String> tenants(Principal p, String queue, Action a) {
    if (!narrowed(p, queue, a)) {
      return t -> true;
    }
    Set<String> ts = new HashSet<>();
    grants(p, queue, a).forEach(g -> ts.addAll(g.tenants()));
    return ts::contains;
  }

  /** Whether the grants giving {@code a} (or admin) on the queue all name tenants. */
  static boolean narrowed(Principal p, String queue, Action a) {
    List<Grant> gs = grants(p, queue, a);
    return !gs.isEmpty() && gs.stream().noneMatch(g -> g.tenants().isEmpty());
  }

  private static List<Grant> grants(Principal p, String queue, Action a) {
    return p.grants().stream()
        .filter(g -> g.allows(queue, a) || g.allows(queue, Action.ADMIN))
        .toList();
  }

  static void checkQueue(String queue) {
    if (queue == null || queue.isBlank()) {
      throw invalid("queue is required");
    }
    if (queue.length() > 64) {
      throw invalid("queue: a queue is a table, its name at most 64 characters");
    }
  }

  /** The ids without repeats, in order: 1..{@link AdminActions#MAX_IDS} of them. */
  static List<Long> checkIds(String queue, List<Long> ids) {
    if (ids == null || ids.isEmpty() || ids.size() > AdminActions.MAX_IDS) {
      throw invalid(
          "ids: give 1.."
              + AdminActions.MAX_IDS
              + " ids, got "
              + (ids == null ? 0 : ids.size())
              + " (queue "
              + queue
              + ")");
    }
    return List.copyOf(new LinkedHashSet<>(ids));
  }

  static EngineException invalid(String message) {
    return new EngineException(EngineException.Kind.INVALID_ARGUMENT, message);
  }

  static EngineException notFound(String queue) {
    return new EngineException(
        EngineException.Kind.NOT_FOUND, "queue: no queue '" + queue + "' on this manager");
  }
}
