package dev.sluice.core.window;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Exact round-robin order of the fairness tree, as pure data structure tests. */
class FairTreeTest {
  static CachedEvent ev(long id, String tenant, String actor, int priority) {
    List<String> path = actor.isEmpty() ? List.of() : List.of(actor.split("/"));
    return new CachedEvent(id, 0, id, 0, priority, tenant, path, "", Map.of());
  }

  static List<Long> drain(WindowCache c, int n) {
    List<Long> out = new ArrayList<>();
    CachedEvent e;
    while (out.size() < n && (e = c.takeReady()) != null) {
      out.add(e.id());
    }
    return out;
  }

  @Test
  void ownEventsTakeOneTurnBesideEachChild() {
    // Loki's example: local [0,1,2], children a[10..12], b[20..22].
    WindowCache c = new WindowCache(100, 100, true);
    for (long i : new long[] {0, 1, 2}) {
      c.add(ev(i, "t", "", 0));
    }
    for (long i : new long[] {10, 11, 12}) {
      c.add(ev(i, "t", "a", 0));
    }
    for (long i : new long[] {20, 21, 22}) {
      c.add(ev(i, "t", "b", 0));
    }
    c.promoteDue(Long.MAX_VALUE);
    assertThat(drain(c, 100)).containsExactly(0L, 10L, 20L, 1L, 11L, 21L, 2L, 12L, 22L);
  }

  @Test
  void aTenantThatRanEmptyIsServedNextOnceThenTakesItsTurn() {
    WindowCache c = new WindowCache(1000, 1000, true);
    for (long i = 0; i < 100; i++) {
      c.add(ev(100 + i, "busy-a", "", 0));
      c.add(ev(200 + i, "busy-b", "", 0));
      c.add(ev(300 + i, "busy-c", "", 0));
    }
    c.promoteDue(Long.MAX_VALUE);
    assertThat(drain(c, 4)).containsExactly(100L, 200L, 300L, 101L);
    // A quiet tenant's two events arrive: the first goes next, ahead of the busy rotation; the
    // second waits for its turn behind b and c (who come before it in the rotation) — one round.
    c.add(ev(1, "quiet", "", 0));
    c.add(ev(2, "quiet", "", 0));
    c.promoteDue(Long.MAX_VALUE);
    assertThat(drain(c, 6)).containsExactly(1L, 201L, 301L, 102L, 2L, 202L);
    // Empty again, then one more: served next once more.
    c.add(ev(3, "quiet", "", 0));
    c.promoteDue(Long.MAX_VALUE);
    assertThat(drain(c, 2)).containsExactly(3L, 302L);
  }

  @Test
  void tenantsThenActorLevelsRoundRobin() {
    WindowCache c = new WindowCache(100, 100, true);
    c.add(ev(1, "x", "u1/reports", 0));
    c.add(ev(2, "x", "u1/reports", 0));
    c.add(ev(3, "x", "u2", 0));
    c.add(ev(4, "x", "u2", 0));
    c.add(ev(5, "y", "", 0));
    c.add(ev(6, "y", "", 0));
    c.promoteDue(Long.MAX_VALUE);
    // x, y alternate; within x, u1 and u2 alternate.
    assertThat(drain(c, 100)).containsExactly(1L, 5L, 3L, 6L, 2L, 4L);
  }

  @Test
  void everyBackloggedTenantGetsItsShareEachRound() {
    WindowCache c = new WindowCache(100_000, 100_000, true);
    int tenants = 7;
    long id = 0;
    for (int t = 0; t < tenants; t++) {
      int backlog = 100 * (t + 1) * (t + 1); // very different backlogs
      for (int i = 0; i < backlog; i++) {
        c.add(ev(id++, "t" + t, "", 0));
      }
    }
    c.promoteDue(Long.MAX_VALUE);
    Map<String, CachedEvent> last = new HashMap<>();
    for (int round = 0; round < 50; round++) {
      Map<String, Integer> got = new HashMap<>();
      for (int i = 0; i < tenants; i++) {
        CachedEvent e = c.takeReady();
        got.merge(e.tenant(), 1, Integer::sum);
        last.put(e.tenant(), e);
      }
      assertThat(got).hasSize(tenants).allSatisfy((t, n) -> assertThat(n).isEqualTo(1));
    }
  }

  @Test
  void aQuietEventWaitsAtMostOneRoundWhateverTheBacklog() {
    for (int backlog : new int[] {10, 1_000, 100_000}) {
      WindowCache c = new WindowCache(200_000, 200_000, true);
      for (int i = 0; i < backlog; i++) {
        c.add(ev(i, "noisy", "", 0));
      }
      c.add(ev(1_000_000, "other", "", 0));
      c.promoteDue(Long.MAX_VALUE);
      c.takeReady();
      c.takeReady();
      c.add(ev(2_000_000, "quiet", "", 0));
      c.promoteDue(Long.MAX_VALUE);
      List<Long> next = drain(c, 3);
      assertThat(next).as("backlog %d", backlog).contains(2_000_000L);
    }
  }

  @Test
  void fifoModeIgnoresTenants() {
    WindowCache c = new WindowCache(100, 100, false);
    c.add(ev(1, "a", "", 0));
    c.add(ev(2, "a", "", 0));
    c.add(ev(3, "b", "", 0));
    c.promoteDue(Long.MAX_VALUE);
    assertThat(drain(c, 10)).containsExactly(1L, 2L, 3L);
  }

  @Test
  void tenantCapBoundsItsShareOfTheWindow() {
    WindowCache c = new WindowCache(100, 10, true);
    for (int i = 0; i < 50; i++) {
      c.add(ev(i, "noisy", "", 0));
    }
    assertThat(c.held("noisy")).isEqualTo(10);
    assertThat(c.add(ev(99, "noisy", "", 0))).isEqualTo(WindowCache.Added.TENANT_CAPPED);
    assertThat(c.add(ev(100, "quiet", "", 0))).isEqualTo(WindowCache.Added.ADDED);
  }

  @Test
  void skippedTenantsKeepTheirPlace() {
    WindowCache c = new WindowCache(100, 100, true);
    c.add(ev(1, "a", "", 0));
    c.add(ev(2, "b", "", 0));
    c.add(ev(3, "b", "", 0));
    c.promoteDue(Long.MAX_VALUE);
    assertThat(c.takeReady(t -> !t.equals("a"), e -> true).id()).isEqualTo(2);
    assertThat(c.takeReady().id()).isEqualTo(1);
    assertThat(c.takeReady().id()).isEqualTo(3);
  }
}
