package dev.sluice.core.shard;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The fair share of leases, and the wake-up of every keeper when it grows. */
class LeaseBalancerTest {
  @Test
  void theShareIsTheShardsOverTheLiveManagersRoundedUp() {
    LeaseBalancer b = new LeaseBalancer(5);
    b.managers(2);
    assertThat(b.quota()).isEqualTo(3);
    assertThat(b.reserve()).isTrue();
    assertThat(b.reserve()).isTrue();
    assertThat(b.reserve()).isTrue();
    assertThat(b.reserve()).as("at its share").isFalse();
    b.managers(3);
    assertThat(b.shouldGiveUp()).as("a third manager joined: one lease too many").isTrue();
    assertThat(b.shouldGiveUp()).isFalse();
  }

  /** A manager stopped: its leases are free, and every keeper here may take one now. */
  @Test
  void everyKeeperIsWokenWhenTheShareGrowsAndOnlyThen() {
    LeaseBalancer b = new LeaseBalancer(4);
    AtomicInteger woken = new AtomicInteger();
    Runnable wake = woken::incrementAndGet;
    b.onShareGrown(wake);
    b.onShareGrown(wake);
    b.managers(2);
    assertThat(woken).as("the share shrank (1 to 2 managers)").hasValue(0);
    b.managers(2);
    assertThat(woken).hasValue(0);
    b.managers(1);
    assertThat(woken).as("both keepers woken").hasValue(2);
    b.forget(wake);
    b.managers(4);
    b.managers(1);
    assertThat(woken).hasValue(3);
  }
}
