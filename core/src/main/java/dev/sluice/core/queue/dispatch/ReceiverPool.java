package dev.sluice.core.queue.dispatch;

import dev.sluice.core.fairness.ShuffleSharder;
import dev.sluice.core.window.CachedEvent;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The outlets of one queue on one shard, as the {@link CreditLedger} chooses among them: their free
 * credits, the shuffle shards that give each tenant its subset of them, the work classes' share of
 * each one's credits, and the receivers that left lately and keep their place in the shuffle shards
 * until {@code forget_delay} has passed. A tenant's shuffle shard is chosen among the receivers
 * that accept it (a departed one as it accepted when it left), so no receiver id, chosen by chance
 * or on purpose, keeps a tenant from a receiver that would serve it.
 *
 * <p>Owned by the dispatcher thread: no locks. Credits themselves live in each {@link
 * dev.sluice.core.outlet.Outlet} (shared with the outlet's other shards), so an outlet's free
 * credits can drop between two calls here: {@link CreditLedger#assign} reserves with {@link
 * AttachedOutlet#tryReserve} and copes with a refusal.
 */
final class ReceiverPool {
  private final List<AttachedOutlet> receivers = new ArrayList<>();
  private final ShuffleSharder sharder;
  private final Map<String, Integer> classShares;
  private final long forgetDelayNs;

  /** Receiver ids whose last stream dropped, with when they lose their place (mono ns). */
  private final Map<String, Long> departed = new HashMap<>();

  /** The last stream of each departed receiver id: which tenants it accepted. */
  private final Map<String, AttachedOutlet> departedOutlets = new HashMap<>();

  /** Where the next search for a receiver starts, so ties go round-robin. */
  private int next;

  /**
   * @param maxReceiversPerTenant the queue's max_receivers_per_tenant (0: every receiver)
   * @param classShares per work class, the percent of a receiver's credits it may hold
   * @param forgetDelayNs how long a departed receiver keeps its place in the shuffle shards
   */
  ReceiverPool(int maxReceiversPerTenant, Map<String, Integer> classShares, long forgetDelayNs) {
    this.sharder = new ShuffleSharder(maxReceiversPerTenant);
    this.classShares = classShares;
    this.forgetDelayNs = forgetDelayNs;
  }

  void attach(AttachedOutlet r) {
    departed.remove(r.receiverId());
    departedOutlets.remove(r.receiverId());
    receivers.add(r);
    updateShards();
  }

  /**
   * Removes {@code r}; its receiver id keeps its place in the shuffle shards for {@code
   * forget_delay} unless another of its streams is still here. False if {@code r} was not here.
   */
  boolean detach(AttachedOutlet r, long mono) {
    if (!receivers.remove(r)) {
      return false;
    }
    if (forgetDelayNs > 0
        && receivers.stream().noneMatch(x -> x.receiverId().equals(r.receiverId()))) {
      departed.put(r.receiverId(), mono + forgetDelayNs);
      departedOutlets.put(r.receiverId(), r);
    }
    updateShards();
    return true;
  }

  /** Receivers gone longer than forget_delay lose their place in the shuffle shards. */
  void forgetDeparted(long mono) {
    if (!departed.isEmpty() && departed.values().removeIf(at -> mono - at >= 0)) {
      departedOutlets.keySet().retainAll(departed.keySet());
      updateShards();
    }
  }

  private void updateShards() {
    List<String> ids = new ArrayList<>(receivers.size() + departed.size());
    for (AttachedOutlet r : receivers) {
      ids.add(r.receiverId());
    }
    ids.addAll(departed.keySet());
    sharder.setReceivers(ids);
    sharder.clear(); // the same ids may accept other tenants now (another principal's stream)
  }

  /** Whether a stream of receiver {@code id} here (or the departed one) accepts {@code tenant}. */
  private boolean accepts(String id, String tenant) {
    for (AttachedOutlet r : receivers) {
      if (r.receiverId().equals(id) && r.acceptsTenant(tenant)) {
        return true;
      }
    }
    AttachedOutlet gone = departedOutlets.get(id);
    return gone != null && gone.acceptsTenant(tenant);
  }

  boolean contains(AttachedOutlet r) {
    return receivers.contains(r);
  }

  int size() {
    return receivers.size();
  }

  /** The attached streams, in attach order (read only). */
  List<AttachedOutlet> all() {
    return java.util.Collections.unmodifiableList(receivers);
  }

  /** Free credits on all receivers now. */
  int freeCredits() {
    int free = 0;
    for (AttachedOutlet r : receivers) {
      free += r.freeSlots();
    }
    return free;
  }

  /** All credits the receivers granted, free or not. */
  int allCredits() {
    int total = 0;
    for (AttachedOutlet r : receivers) {
      total += r.maxInFlight();
    }
    return total;
  }

  /** Whether a receiver of {@code tenant}'s shuffle shard has a free credit. */
  boolean hasFreeCreditFor(String tenant) {
    for (AttachedOutlet r : receivers) {
      if (r.freeSlots() > 0 && serves(r, tenant)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The receiver for {@code e}: within its tenant's shuffle shard, with a free credit and room for
   * its class, the one with the most free credits (ties round-robin). Null when none can take it.
   *
   * @param advance whether the next search starts after the one chosen (false to only ask)
   */
  AttachedOutlet pick(CachedEvent e, boolean advance) {
    AttachedOutlet best = null;
    int bestFree = 0;
    int n = receivers.size();
    for (int i = 0; i < n; i++) {
      AttachedOutlet r = receivers.get((next + i) % n);
      int free = r.freeSlots();
      if (free > bestFree && serves(r, e.tenant) && classRoom(r, e.workClass)) {
        best = r;
        bestFree = free;
      }
    }
    if (best != null && advance) {
      next = (receivers.indexOf(best) + 1) % n;
    }
    return best;
  }

  private boolean serves(AttachedOutlet r, String tenant) {
    return r.acceptsTenant(tenant)
        && sharder.receiversFor(tenant, id -> accepts(id, tenant)).contains(r.receiverId());
  }

  /** Whether receiver {@code r} may take an event of class {@code cls} now. */
  private boolean classRoom(AttachedOutlet r, String cls) {
    Integer share = classShares.get(cls);
    if (share == null) {
      return true;
    }
    int limit = Math.max(1, r.maxInFlight() * share / 100);
    return r.classInFlight(cls) < limit;
  }
}
