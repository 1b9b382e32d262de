package dev.sluice.core.fairness;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.config.TenantLimit;
import dev.sluice.core.window.CachedEvent;
import dev.sluice.core.window.WindowCache;
import dev.sluice.db.QueueOptions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TenantLimitsTest {
  static final QueueOptions OPTIONS =
      QueueOptions.parseComment(
          "orders", "sluice_queue cache_size=1000 tenant_cache_share=10% tenant_max_in_flight=5");

  @Test
  void theCommentAppliesToEveryTenantWithoutOverrides() {
    TenantLimits l = TenantLimits.of(OPTIONS);
    assertThat(l.cacheCap("anyone")).isEqualTo(100);
    assertThat(l.maxInFlight("anyone")).isEqualTo(5);
    assertThat(l.hasOverrides()).isFalse();
    assertThat(l.toString()).isEqualTo("none");
  }

  @Test
  void aQueuesOwnOverrideWinsOverAnEveryQueueOneFieldByField() {
    List<TenantLimit> overrides =
        List.of(
            new TenantLimit("orders", "acme", null, 50),
            new TenantLimit("*", "acme", 40, 20),
            new TenantLimit("payments", "acme", 90, 90),
            new TenantLimit("*", "free", null, 1));
    TenantLimits l = TenantLimits.of(OPTIONS, "orders", overrides);
    assertThat(l.cacheCap("acme")).as("from *").isEqualTo(400);
    assertThat(l.maxInFlight("acme")).as("from orders").isEqualTo(50);
    assertThat(l.cacheCap("free")).as("from the comment").isEqualTo(100);
    assertThat(l.maxInFlight("free")).isEqualTo(1);
    assertThat(l.maxInFlight("other")).isEqualTo(5);
    assertThat(l.toString())
        .isEqualTo("acme: cache_share=40% max_in_flight=50; free: max_in_flight=1");
  }

  @Test
  void theWindowHonoursEachTenantsCap() {
    TenantLimits l =
        TenantLimits.of(OPTIONS, "orders", List.of(new TenantLimit("*", "big", 1, null)));
    WindowCache c = new WindowCache(1000, l::cacheCap, true);
    int bigAdded = 0;
    int smallAdded = 0;
    for (int i = 0; i < 200; i++) {
      if (c.add(new CachedEvent(i, 1, 0, 0, 0, "big", List.of(), "", Map.of()))
          == WindowCache.Added.ADDED) {
        bigAdded++;
      }
      if (c.add(new CachedEvent(1000 + i, 1, 0, 0, 0, "small", List.of(), "", Map.of()))
          == WindowCache.Added.ADDED) {
        smallAdded++;
      }
    }
    assertThat(bigAdded).isEqualTo(10);
    assertThat(smallAdded).isEqualTo(100);
  }
}
