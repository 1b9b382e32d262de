package dev.sluice.core.window;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The window as a pure data structure: no threads, no database. */
class WindowCacheTest {
  static CachedEvent ev(long id, long due, int priority, String tenant) {
    return new CachedEvent(id, 0, due, 0, priority, tenant, List.of(), "", Map.of());
  }

  static List<Long> drain(WindowCache c) {
    List<Long> out = new ArrayList<>();
    CachedEvent e;
    while ((e = c.takeReady()) != null) {
      out.add(e.id());
    }
    return out;
  }

  @Test
  void onlyDueEventsAreReady() {
    WindowCache c = new WindowCache(10);
    c.add(ev(1, 100, 0, ""));
    c.add(ev(2, 200, 0, ""));
    c.promoteDue(150);
    assertThat(c.nextDueNs()).isEqualTo(200);
    assertThat(drain(c)).containsExactly(1L);
    c.promoteDue(200);
    assertThat(drain(c)).containsExactly(2L);
    assertThat(c.size()).isZero();
  }

  @Test
  void priorityThenDueTimeWithinATenant() {
    WindowCache c = new WindowCache(10);
    c.add(ev(1, 10, 5, "t"));
    c.add(ev(2, 20, -3, "t"));
    c.add(ev(3, 5, 5, "t"));
    c.add(ev(4, 30, -3, "t"));
    c.promoteDue(100);
    assertThat(drain(c)).containsExactly(2L, 4L, 3L, 1L);
  }

  @Test
  void trimDropsATenantsLastEventsInPollOrderAndLeavesOthersAlone() {
    WindowCache c = new WindowCache(10, 10, true);
    for (int i = 0; i < 6; i++) {
      c.add(ev(i, 100 - i, 0, "noisy")); // due times 100, 99, ... 95: id 5 is due first
    }
    c.add(ev(10, 1000, 0, "quiet"));
    assertThat(c.room()).isEqualTo(3);
    // Dropped: the last four in poll order (due 100, 99, 98, 97), the last first.
    assertThat(c.trim("noisy", 2)).extracting(CachedEvent::id).containsExactly(0L, 1L, 2L, 3L);
    assertThat(c.trim("noisy", 2)).isEmpty();
    assertThat(c.trim("quiet", 0)).extracting(CachedEvent::id).containsExactly(10L);
    assertThat(c.held("noisy")).isEqualTo(2);
    assertThat(c.room()).isEqualTo(8);
    // What is left is what the poll index gives first; what was dropped can be read back.
    assertThat(c.add(ev(2, 98, 0, "noisy"))).isEqualTo(WindowCache.Added.ADDED);
    c.promoteDue(2000);
    assertThat(drain(c)).containsExactly(5L, 4L, 2L);
  }

  @Test
  void tenantsTakeTurnsSoABacklogCannotStarveOthers() {
    WindowCache c = new WindowCache(100);
    for (int i = 0; i < 50; i++) {
      c.add(ev(i, i, 0, "noisy"));
    }
    c.add(ev(100, 60, 0, "quiet"));
    c.promoteDue(1000);
    List<Long> order = drain(c);
    assertThat(order.indexOf(100L)).isLessThanOrEqualTo(1);
  }

  @Test
  void boundedAndDeduplicated() {
    WindowCache c = new WindowCache(2);
    assertThat(c.add(ev(1, 0, 0, ""))).isEqualTo(WindowCache.Added.ADDED);
    assertThat(c.add(ev(1, 0, 0, ""))).isEqualTo(WindowCache.Added.DUPLICATE);
    assertThat(c.add(ev(2, 0, 0, ""))).isEqualTo(WindowCache.Added.ADDED);
    assertThat(c.add(ev(3, 0, 0, ""))).isEqualTo(WindowCache.Added.FULL);
    assertThat(c.room()).isZero();
  }

  @Test
  void removedEventsAreSkippedAndReAddWorks() {
    WindowCache c = new WindowCache(10);
    c.add(ev(1, 0, 0, "a"));
    c.add(ev(2, 0, 0, "a"));
    c.promoteDue(10);
    assertThat(c.remove(1)).isTrue();
    assertThat(c.contains(1)).isFalse();
    c.add(ev(1, 5, 0, "a")); // the same id back with a new due time
    c.promoteDue(10);
    assertThat(drain(c)).containsExactlyInAnyOrder(1L, 2L);
    assertThat(c.size()).isZero();
  }

  static CachedEvent sized(long id, int bytes) {
    return new CachedEvent(id, 0, 0, 0, 0, "t" + id, List.of(), "", Map.of(), bytes);
  }

  @Test
  void theWindowHoldsAtMostItsBytesButAlwaysOneEvent() {
    WindowCache c = new WindowCache(100, 1000, t -> 100, true);
    assertThat(c.add(sized(1, 5000)))
        .as("one event always fits")
        .isEqualTo(WindowCache.Added.ADDED);
    assertThat(c.add(sized(2, 1))).isEqualTo(WindowCache.Added.FULL);
    c.promoteDue(0);
    assertThat(c.takeReady().id()).isEqualTo(1);
    assertThat(c.bytes()).isZero();
    assertThat(c.add(sized(3, 600))).isEqualTo(WindowCache.Added.ADDED);
    assertThat(c.add(sized(4, 400))).isEqualTo(WindowCache.Added.ADDED);
    assertThat(c.add(sized(5, 1))).isEqualTo(WindowCache.Added.FULL);
    assertThat(c.bytes()).isEqualTo(1000);
    assertThat(c.trim("t3", 0)).hasSize(1);
    assertThat(c.remove(4)).isTrue();
    assertThat(c.bytes()).isZero();
  }
}
