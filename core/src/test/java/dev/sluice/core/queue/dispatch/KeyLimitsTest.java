package dev.sluice.core.queue.dispatch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.window.CachedEvent;
import dev.sluice.db.QueueOptions;
import dev.sluice.db.store.DispatchStore;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link KeyLimits} alone: counts, the aside FIFO, and the census of a previous leader's rows. */
class KeyLimitsTest {

  /**
   * A store whose only answer is {@link DispatchStore#firedPerKey}; it records what it was asked.
   */
  static final class Census {
    Map<Object, Integer> answer = new HashMap<>();
    RuntimeException fail;
    final List<Collection<Object>> keysAsked = new ArrayList<>();
    final List<Collection<Long>> exceptAsked = new ArrayList<>();

    DispatchStore store() {
      return (DispatchStore)
          Proxy.newProxyInstance(
              DispatchStore.class.getClassLoader(),
              new Class<?>[] {DispatchStore.class},
              (p, m, args) -> {
                if (!m.getName().equals("firedPerKey")) {
                  throw new UnsupportedOperationException(m.getName());
                }
                if (fail != null) {
                  throw fail;
                }
                @SuppressWarnings("unchecked")
                Collection<Object> keys = (Collection<Object>) args[0];
                @SuppressWarnings("unchecked")
                Collection<Long> except = (Collection<Long>) args[1];
                keysAsked.add(keys == null ? null : new ArrayList<>(keys));
                exceptAsked.add(new ArrayList<>(except));
                return new HashMap<>(answer);
              });
    }
  }

  static KeyLimits limits(int n) {
    return new KeyLimits(
        QueueOptions.parseComment("q", "sluice_queue key_max_in_flight=" + n + " cache_size=4"));
  }

  static CachedEvent ev(long id, Object key) {
    Map<String, Object> cols = new HashMap<>();
    cols.put("ordering_key", key);
    return new CachedEvent(id, 0, 0, 0, 0, "t", List.of(), "", cols);
  }

  @Test
  void noKeyedEventFiresBeforeTheFirstCensus() {
    KeyLimits k = limits(2);
    assertThat(k.active()).isTrue();
    assertThat(k.mayFire(ev(1, null))).isTrue();
    assertThat(k.mayFire(ev(2, "a"))).isFalse();
    Census c = new Census();
    assertThat(k.census(c.store(), 0)).isNull();
    assertThat(c.keysAsked).containsExactly((Collection<Object>) null);
    assertThat(k.mayFire(ev(2, "a"))).isTrue();
  }

  @Test
  void atNTheNextWaitsAsideAndTheOldestGoesBackWhenOneLeaves() {
    KeyLimits k = limits(2);
    k.census(new Census().store(), 0);
    CachedEvent a1 = ev(1, "a"), a2 = ev(2, "a"), a3 = ev(3, "a"), a4 = ev(4, "a");
    k.entered(a1);
    k.entered(a2);
    assertThat(k.mayFire(a3)).isFalse();
    assertThat(k.mayFire(ev(5, "b"))).isTrue();
    k.setAside(a3);
    k.setAside(a4);
    assertThat(k.waiting()).isEqualTo(2);
    assertThat(k.waits()).isEqualTo(2);
    assertThat(k.holds(3L)).isTrue();
    assertThat(k.takeFreed()).isEmpty();

    k.left(a1);
    k.left(a1); // once is enough
    assertThat(k.takeFreed()).containsExactly(a3);
    assertThat(k.holds(3L)).isFalse();
    assertThat(k.waiting()).isEqualTo(1);
    k.entered(a3);
    assertThat(k.mayFire(a4)).isFalse();
    k.left(a2);
    assertThat(k.takeFreed()).containsExactly(a4);
    assertThat(k.waiting()).isZero();
  }

  @Test
  void pastTheCapAnEventIsDroppedFromMemoryNotHeld() {
    KeyLimits k = limits(1);
    k.census(new Census().store(), 0);
    k.entered(ev(1, "a"));
    for (long id = 2; id <= 7; id++) {
      k.setAside(ev(id, "a"));
    }
    assertThat(k.waiting()).isEqualTo(4); // cache_size
    assertThat(k.waits()).isEqualTo(6);
    assertThat(k.holds(6L)).isFalse();
  }

  @Test
  void aPreviousLeadersFiredRowsCountUntilACensusFindsThemSettled() {
    KeyLimits k = limits(2);
    Census c = new Census();
    c.answer.put("a", 2);
    c.answer.put(7L, 1);
    k.census(c.store(), 0);
    assertThat(k.mayFire(ev(1, "a"))).isFalse();
    assertThat(k.mayFire(ev(2, 7L))).isTrue();
    k.entered(ev(2, 7L));
    k.setAside(ev(1, "a"));
    k.setAside(ev(3, 7L));

    // Not again within the second.
    c.answer.clear();
    k.census(c.store(), KeyLimits.CENSUS_EVERY_NS - 1);
    assertThat(c.keysAsked).hasSize(1);

    // The next reads only the keys with foreign rows, leaving out this leader's own ids.
    c.answer.put("a", 1);
    k.census(c.store(), KeyLimits.CENSUS_EVERY_NS);
    assertThat(c.keysAsked.get(1)).containsExactlyInAnyOrder("a", 7L);
    assertThat(c.exceptAsked.get(1)).containsExactly(2L);
    assertThat(k.takeFreed()).extracting(e -> e.id).containsExactlyInAnyOrder(1L, 3L);

    // One foreign row of "a" left: one own makes two, the third waits.
    k.entered(ev(1, "a"));
    assertThat(k.mayFire(ev(4, "a"))).isFalse();
    c.answer.clear();
    k.census(c.store(), 2 * KeyLimits.CENSUS_EVERY_NS);
    assertThat(k.mayFire(ev(4, "a"))).isTrue();

    // None left: no more reads.
    k.census(c.store(), 10 * KeyLimits.CENSUS_EVERY_NS);
    assertThat(c.keysAsked).hasSize(3);
  }

  @Test
  void aFailedCensusIsReturnedAndTriedAgainKeyedEventsWaiting() {
    KeyLimits k = limits(1);
    Census c = new Census();
    c.fail = new IllegalStateException("down");
    assertThat(k.census(c.store(), 0)).isSameAs(c.fail);
    assertThat(k.mayFire(ev(1, "a"))).isFalse();
    c.fail = null;
    assertThat(k.census(c.store(), KeyLimits.CENSUS_EVERY_NS)).isNull();
    assertThat(k.mayFire(ev(1, "a"))).isTrue();
  }

  @Test
  void offWithoutTheOption() {
    KeyLimits k = new KeyLimits(QueueOptions.parseComment("q", "sluice_queue"));
    assertThat(k.active()).isFalse();
  }
}
