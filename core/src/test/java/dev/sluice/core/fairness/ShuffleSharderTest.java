package dev.sluice.core.fairness;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ShuffleSharderTest {
  static List<String> receivers(int n) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add("receiver-" + i);
    }
    return out;
  }

  @Test
  void eachTenantGetsExactlyKReceiversSpreadEvenly() {
    int tenants = 1000;
    int r = 30;
    int k = 5;
    ShuffleSharder s = new ShuffleSharder(k);
    s.setReceivers(receivers(r));
    Map<String, Integer> load = new HashMap<>();
    for (int t = 0; t < tenants; t++) {
      Set<String> set = s.receiversFor("tenant-" + t);
      assertThat(set).hasSize(k);
      set.forEach(x -> load.merge(x, 1, Integer::sum));
    }
    double mean = (double) tenants * k / r;
    double var = 0;
    for (String x : receivers(r)) {
      double d = load.getOrDefault(x, 0) - mean;
      var += d * d;
    }
    double sd = Math.sqrt(var / r);
    assertThat(load.values().stream().mapToInt(Integer::intValue).average().orElse(0))
        .isCloseTo(mean, org.assertj.core.data.Offset.offset(1e-9));
    assertThat(sd).as("sd %.1f vs mean %.1f", sd, mean).isLessThanOrEqualTo(0.2 * mean);
  }

  @Test
  void sameSubsetOnEveryManagerWhateverTheOrder() {
    ShuffleSharder a = new ShuffleSharder(3);
    ShuffleSharder b = new ShuffleSharder(3);
    List<String> ids = receivers(12);
    a.setReceivers(ids);
    List<String> reversed = new ArrayList<>(ids);
    java.util.Collections.reverse(reversed);
    b.setReceivers(reversed);
    for (int t = 0; t < 200; t++) {
      assertThat(a.receiversFor("t" + t)).isEqualTo(b.receiversFor("t" + t));
    }
  }

  @Test
  void aLeavingReceiverMovesOnlyTheTenantsItServed() {
    ShuffleSharder s = new ShuffleSharder(2);
    List<String> ids = receivers(10);
    s.setReceivers(ids);
    Map<String, Set<String>> before = new HashMap<>();
    for (int t = 0; t < 300; t++) {
      before.put("t" + t, s.receiversFor("t" + t));
    }
    s.setReceivers(ids.subList(1, 10)); // receiver-0 leaves
    for (var e : before.entrySet()) {
      if (!e.getValue().contains("receiver-0")) {
        assertThat(s.receiversFor(e.getKey())).isEqualTo(e.getValue());
      }
    }
  }

  @Test
  void zeroMeansEveryReceiver() {
    ShuffleSharder s = new ShuffleSharder(0);
    s.setReceivers(receivers(4));
    assertThat(s.receiversFor("x")).hasSize(4);
  }
}
