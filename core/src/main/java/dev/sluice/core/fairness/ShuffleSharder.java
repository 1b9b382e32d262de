package dev.sluice.core.fairness;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * Shuffle sharding of tenants onto receivers: each tenant gets a stable subset of {@code k}
 * receiver ids, chosen by rendezvous hashing (each receiver scores hash(tenant, receiver); the top
 * k win). The subset depends only on the tenant and the set of receiver ids, so every manager
 * computes the same one, and a receiver joining or leaving moves only the tenants it wins or held.
 * {@code k = 0} means every receiver.
 *
 * <p>A tenant is sharded only over the receivers that accept it ({@link #receiversFor(String,
 * Predicate)}): a receiver whose grant leaves the tenant out never takes a place in its subset, so
 * a tenant that any receiver accepts is served, whatever ids the others chose.
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

  /** Forgets the cached subsets (which receivers accept which tenant changed). */
  public void clear() {
    cache.clear();
  }

  /** The receiver ids that may serve {@code tenant}, every receiver accepting it. */
  public Set<String> receiversFor(String tenant) {
    return receiversFor(tenant, id -> true);
  }

  /**
   * The receiver ids that may serve {@code tenant}: the top k by score among those {@code accepts}
   * says take the tenant. Cached until {@link #setReceivers} changes the set or {@link #clear}.
   */
  public Set<String> receiversFor(String tenant, Predicate<String> accepts) {
    if (k <= 0) {
      return receivers;
    }
    return cache.computeIfAbsent(tenant, t -> choose(t, accepts));
  }

  private Set<String> choose(String tenant, Predicate<String> accepts) {
    List<String> ids = new ArrayList<>(receivers.size());
    for (String id : receivers) {
      if (accepts.test(id)) {
        ids.add(id);
      }
    }
    if (ids.size() <= k) {
      return Set.copyOf(ids);
    }
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
