package dev.sluice.core.queue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Shuffle sharding of tenants onto receivers: each tenant gets a stable subset of {@code k}
 * receiver ids, chosen by rendezvous hashing (each receiver scores hash(tenant, receiver); the top
 * k win). The subset depends only on the tenant and the set of receiver ids, so every manager
 * computes the same one, and a receiver joining or leaving moves only the tenants it wins or held.
 * {@code k = 0} means every receiver.
 *
 * <p>Not thread-safe: owned by the dispatcher thread. Subsets are cached until the receiver set
 * changes.
 */
public final class ShuffleSharder {
  private final int k;
  private Set<String> receivers = Set.of();
  private final Map<String, Set<String>> cache = new HashMap<>();

  public ShuffleSharder(int k) {
    this.k = k;
  }

  /** Sets the receiver ids to choose from; clears the cached subsets if they changed. */
  public void setReceivers(Collection<String> ids) {
    Set<String> next = new TreeSet<>(ids);
    if (!next.equals(receivers)) {
      receivers = Set.copyOf(next);
      cache.clear();
    }
  }

  /** The receiver ids that may serve {@code tenant}. */
  public Set<String> receiversFor(String tenant) {
    if (k <= 0 || receivers.size() <= k) {
      return receivers;
    }
    return cache.computeIfAbsent(tenant, this::choose);
  }

  private Set<String> choose(String tenant) {
    List<String> ids = new ArrayList<>(receivers);
    ids.sort(
        (a, b) -> {
          int c = Long.compareUnsigned(score(tenant, b), score(tenant, a));
          return c != 0 ? c : a.compareTo(b);
        });
    return Set.copyOf(ids.subList(0, k));
  }

  /** A 64-bit FNV-1a hash of tenant and receiver, finished with a mix for good spread. */
  static long score(String tenant, String receiver) {
    long h = 0xcbf29ce484222325L;
    for (byte b : tenant.getBytes(StandardCharsets.UTF_8)) {
      h = (h ^ (b & 0xff)) * 0x100000001b3L;
    }
    h = (h ^ 0xff) * 0x100000001b3L;
    for (byte b : receiver.getBytes(StandardCharsets.UTF_8)) {
      h = (h ^ (b & 0xff)) * 0x100000001b3L;
    }
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    h *= 0xc4ceb9fe1a85ec53L;
    h ^= h >>> 33;
    return h;
  }
}
