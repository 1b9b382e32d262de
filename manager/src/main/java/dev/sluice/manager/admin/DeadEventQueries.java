package dev.sluice.manager.admin;

import static dev.sluice.manager.admin.AdminActions.DEFAULT_PAGE;
import static dev.sluice.manager.admin.AdminActions.MAX_PAGE;
import static dev.sluice.manager.admin.AdminActions.MAX_SCAN;
import static dev.sluice.manager.admin.Grants.invalid;
import static dev.sluice.manager.admin.Grants.require;
import static dev.sluice.manager.admin.Grants.tenants;

import dev.sluice.core.EngineException;
import dev.sluice.db.store.EventRow;
import dev.sluice.db.store.OperatorStore;
import dev.sluice.manager.admin.AdminActions.DeadEvent;
import dev.sluice.manager.admin.AdminActions.DeadFilter;
import dev.sluice.manager.admin.AdminActions.DeadPage;
import dev.sluice.manager.admin.AdminActions.EventDetail;
import dev.sluice.manager.admin.Audit.Outcome;
import dev.sluice.manager.admin.ShardLocator.Located;
import dev.sluice.manager.security.Action;
import dev.sluice.manager.security.Principal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/** Reading dead events: a filtered page of them by id, and one event whatever its state. */
final class DeadEventQueries {
  private final Audit audit;
  private final ShardLocator shards;

  DeadEventQueries(Audit audit, ShardLocator shards) {
    this.audit = audit;
    this.shards = shards;
  }

  /**
   * One page of dead events of {@code queue} on one shard, by id, that match {@code filter} and the
   * principal's tenants. Reads at most {@link AdminActions#MAX_SCAN} rows: a page may be short with
   * a token.
   *
   * @param pageSize 1..{@link AdminActions#MAX_PAGE}, or 0 for {@link AdminActions#DEFAULT_PAGE}
   * @param pageToken null or empty for the first page, else a previous page's token
   */
  public DeadPage listDead(
      Principal p, String queue, String shard, DeadFilter filter, int pageSize, String pageToken) {
    return audit.audited(
        p,
        "list_dead",
        queue,
        shard,
        () -> {
          require(p, queue, Action.STATS);
          if (pageSize < 0 || pageSize > MAX_PAGE) {
            throw invalid(
                "page_size must be 1.."
                    + MAX_PAGE
                    + " (0 = "
                    + DEFAULT_PAGE
                    + "), was "
                    + pageSize
                    + " (queue "
                    + queue
                    + ")");
          }
          int size = pageSize == 0 ? DEFAULT_PAGE : pageSize;
          long after = decodeToken(queue, pageToken);
          DeadFilter f = filter == null ? DeadFilter.NONE : filter;
          Predicate<String> tenants = tenants(p, queue, Action.STATS);
          Located at = shards.locate(queue, shard);
          List<DeadEvent> out = new ArrayList<>();
          int scanned = 0;
          while (true) {
            int want = f.isEmpty() ? size - out.size() : MAX_PAGE;
            List<EventRow> rows = at.store().listDead(after, want);
            Map<Long, String> reasons =
                at.store().deadReasons(rows.stream().map(EventRow::id).toList());
            for (EventRow r : rows) {
              after = r.id();
              String reason = reasons.getOrDefault(r.id(), "");
              if (tenants.test(r.tenant()) && f.matches(r, reason)) {
                out.add(dead(queue, at.shard().name(), r, reason));
                if (out.size() == size) {
                  return new Outcome<>(new DeadPage(out, encodeToken(after)), out.size());
                }
              }
            }
            scanned += rows.size();
            if (rows.size() < want) {
              return new Outcome<>(new DeadPage(out, null), out.size());
            }
            if (scanned >= MAX_SCAN) {
              return new Outcome<>(new DeadPage(out, encodeToken(after)), out.size());
            }
          }
        });
  }

  /**
   * One event, whatever its state. NOT_FOUND when there is none (or not of the principal's
   * tenants).
   */
  public EventDetail showEvent(Principal p, String queue, String shard, long id) {
    return audit.audited(
        p,
        "show_event",
        queue,
        shard,
        () -> {
          require(p, queue, Action.STATS);
          Located at = shards.locate(queue, shard);
          Optional<OperatorStore.Found> found = at.store().find(id);
          if (found.isEmpty()
              || !tenants(p, queue, Action.STATS).test(found.get().row().tenant())) {
            throw new EngineException(
                EngineException.Kind.NOT_FOUND,
                "no event " + id + " in queue " + queue + " on shard " + at.shard().name());
          }
          EventRow r = found.get().row();
          String state =
              found.get().state() == null
                  ? "unknown"
                  : found.get().state().name().toLowerCase(Locale.ROOT);
          String reason =
              "dead".equals(state) ? at.store().deadReasons(List.of(id)).getOrDefault(id, "") : "";
          return new Outcome<>(
              new EventDetail(
                  queue,
                  at.shard().name(),
                  r.id(),
                  state,
                  r.epoch(),
                  r.tenant(),
                  r.priority(),
                  r.timeCreatedNs(),
                  r.timeNextNs(),
                  reason,
                  r.userColumns()),
              1);
        });
  }

  private static DeadEvent dead(String queue, String shard, EventRow r, String reason) {
    return new DeadEvent(
        queue, shard, r.id(), r.epoch(), r.tenant(), r.timeCreatedNs(), reason, r.userColumns());
  }

  static String encodeToken(long afterId) {
    return Base64.getUrlEncoder()
        .withoutPadding()
        .encodeToString(("after:" + afterId).getBytes(StandardCharsets.UTF_8));
  }

  static long decodeToken(String queue, String token) {
    if (token == null || token.isEmpty()) {
      return Long.MIN_VALUE;
    }
    try {
      String s = new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8);
      if (s.startsWith("after:")) {
        return Long.parseLong(s.substring(6));
      }
    } catch (IllegalArgumentException e) {
      // falls through
    }
    throw invalid("page_token: not a token this API gave (queue " + queue + ")");
  }
}
