package dev.sluice.manager.queue;

import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.EventRow;
import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.EventBatch;
import dev.sluice.proto.v1.ManagerMessage;
import dev.sluice.proto.v1.Nack;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The heart of one queue: moves due events from the window to receivers.
 *
 * <h2>Threads</h2>
 *
 * One thread ({@code sluice-<shard>-<queue>-dispatcher}) owns all mutable state here — the {@link
 * WindowCache}, the in-flight table, the receiver list and each receiver's in-flight count — so it
 * needs no locks. Other threads (gRPC, poller, ack batcher) never touch that state: they {@link
 * #post} commands to the inbox, which this thread runs between dispatch rounds. The only database
 * call made on this thread is the batched fire UPDATE; acks and releases go to the {@link
 * AckBatcher}'s thread so that they never hold up dispatch.
 *
 * <h2>A dispatch round</h2>
 *
 * Take up to {@link #MAX_BATCH} due events (tenants in turn), give each to the receiver with the
 * most free credits, fire them all with one compare-and-set UPDATE per epoch (pending → fired,
 * epoch + 1, time_next = ack deadline), and only then send them. An event whose CAS fails (acked,
 * cancelled or fired elsewhere meanwhile) is dropped silently.
 */
final class Dispatcher implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(Dispatcher.class);

  static final int MAX_BATCH = 256;
  private static final long IDLE_WAIT_NS = TimeUnit.MILLISECONDS.toNanos(50);
  private static final long ERROR_PAUSE_NS = TimeUnit.MILLISECONDS.toNanos(500);

  private final QueueContext ctx;
  private final WindowCache cache;
  private final long ackWaitNs;
  private final int maxAttempts;
  private final int maxConcurrency;
  private final ConcurrentLinkedQueue<Runnable> inbox = new ConcurrentLinkedQueue<>();

  // --- owned by the dispatcher thread
  /** Fired events by id, in fire order (which is deadline order: ack_wait is fixed). */
  private final LinkedHashMap<Long, InFlight> inFlight = new LinkedHashMap<>();

  private final List<ReceiverStream> receivers = new ArrayList<>();

  /** Ids settled recently, with the settle sequence number; see {@link #onPolled}. */
  private final LinkedHashMap<Long, Long> recentlySettled = new LinkedHashMap<>();

  private long pausedUntilNs;
  private boolean pollerHasMore;
  private int nextReceiver;
  private boolean dispatching = true;

  // --- published for other threads
  private volatile long settledSeq;
  private volatile int cachedCount;
  private volatile int inFlightCount;
  private volatile int receiverCount;
  private volatile boolean running = true;
  private volatile boolean paused;
  private volatile Thread thread;

  /** Per-tenant figures, republished by the dispatcher at most every {@link #TENANT_EVERY_NS}. */
  private volatile List<TenantStats> tenantSnapshot = List.of();

  /** Per-receiver figures, republished with {@link #tenantSnapshot}. */
  private volatile List<ReceiverStats> receiverSnapshot = List.of();

  private final Map<String, long[]> tenantCounts = new java.util.HashMap<>();
  private long tenantPublishedNs;
  private static final long TENANT_EVERY_NS = TimeUnit.MILLISECONDS.toNanos(500);

  private AckBatcher acks;
  private Poller poller;

  Dispatcher(QueueContext ctx) {
    this.ctx = ctx;
    this.cache = new WindowCache(ctx.options().cacheSize());
    this.ackWaitNs = ctx.options().ackWait().toNanos();
    this.maxAttempts = ctx.options().maxAttempts();
    this.maxConcurrency = ctx.options().maxConcurrency();
  }

  void wire(AckBatcher acks, Poller poller) {
    this.acks = acks;
    this.poller = poller;
  }

  // ------------------------------------------------------------------ any thread

  /** Runs {@code command} on the dispatcher thread, soon. */
  void post(Runnable command) {
    inbox.add(command);
    wake();
  }

  void wake() {
    Thread t = thread;
    if (t != null) {
      LockSupport.unpark(t);
    }
  }

  void stop() {
    running = false;
    wake();
  }

  /** Paused: nothing new is fired; acks, nacks and timeouts still apply. */
  void setPaused(boolean p) {
    paused = p;
    wake();
  }

  boolean paused() {
    return paused;
  }

  List<TenantStats> tenants() {
    return tenantSnapshot;
  }

  List<ReceiverStats> receivers() {
    return receiverSnapshot;
  }

  long settledSeq() {
    return settledSeq;
  }

  int cacheRoom() {
    return cache.capacity() - cachedCount;
  }

  int cachedCount() {
    return cachedCount;
  }

  int inFlightCount() {
    return inFlightCount;
  }

  int receiverCount() {
    return receiverCount;
  }

  // ------------------------------------------------------------------ the loop

  @Override
  public void run() {
    thread = Thread.currentThread();
    while (running) {
      try {
        runInbox();
        long now = ctx.clock().nowNs();
        expire(now);
        cache.promoteDue(now);
        publish();
        if (dispatching && !paused && now >= pausedUntilNs && cache.hasReady() && freeSlots() > 0) {
          fireRound(now);
          continue;
        }
        if (pollerHasMore && cache.size() <= cache.capacity() / 2) {
          pollerHasMore = false;
          poller.wake();
        }
        long wait = IDLE_WAIT_NS;
        long next = cache.nextDueNs();
        if (next != Long.MAX_VALUE) {
          wait = Math.min(wait, Math.max(0, next - now));
        }
        if (now < pausedUntilNs) {
          wait = Math.min(wait, pausedUntilNs - now);
        }
        if (inbox.isEmpty() && wait > 0) {
          LockSupport.parkNanos(this, wait);
        }
      } catch (RuntimeException e) {
        log.error("{}: dispatcher error, continuing: {}", ctx.where(), e.toString(), e);
        pausedUntilNs = ctx.clock().nowNs() + ERROR_PAUSE_NS;
      }
    }
    runInbox();
    publish();
  }

  private void runInbox() {
    Runnable r;
    while ((r = inbox.poll()) != null) {
      r.run();
    }
  }

  private void publish() {
    cachedCount = cache.size();
    inFlightCount = inFlight.size();
    receiverCount = receivers.size();
    long mono = System.nanoTime();
    if (mono - tenantPublishedNs >= TENANT_EVERY_NS) {
      tenantPublishedNs = mono;
      Map<String, Integer> queued = cache.countByTenant();
      List<TenantStats> out = new ArrayList<>();
      java.util.Set<String> names = new java.util.TreeSet<>(tenantCounts.keySet());
      names.addAll(queued.keySet());
      for (String t : names) {
        long[] c = tenantCounts.getOrDefault(t, new long[2]);
        out.add(new TenantStats(t, queued.getOrDefault(t, 0), c[0], c[1]));
      }
      tenantSnapshot = List.copyOf(out);
      List<ReceiverStats> rs = new ArrayList<>(receivers.size());
      for (ReceiverStream r : receivers) {
        rs.add(
            new ReceiverStats(
                r.receiverId(), r.streamId(), r.inFlight, r.maxInFlight(), r.draining()));
      }
      receiverSnapshot = List.copyOf(rs);
    }
  }

  private int freeSlots() {
    int free = 0;
    for (ReceiverStream r : receivers) {
      free += r.freeSlots();
    }
    if (maxConcurrency > 0) {
      free = Math.min(free, maxConcurrency - inFlight.size());
    }
    return free;
  }

  /** The receiver with the most free credits, ties broken round-robin; null when all are full. */
  private ReceiverStream pickReceiver() {
    ReceiverStream best = null;
    int bestFree = 0;
    int n = receivers.size();
    for (int i = 0; i < n; i++) {
      ReceiverStream r = receivers.get((nextReceiver + i) % n);
      int free = r.freeSlots();
      if (free > bestFree) {
        best = r;
        bestFree = free;
      }
    }
    if (best != null) {
      nextReceiver = (receivers.indexOf(best) + 1) % n;
    }
    return best;
  }

  private void fireRound(long now) {
    int budget = Math.min(MAX_BATCH, freeSlots());
    List<CachedEvent> events = new ArrayList<>(budget);
    List<ReceiverStream> owners = new ArrayList<>(budget);
    while (events.size() < budget) {
      ReceiverStream r = pickReceiver();
      if (r == null) {
        break;
      }
      CachedEvent e = cache.takeReady();
      if (e == null) {
        break;
      }
      r.inFlight++;
      events.add(e);
      owners.add(r);
    }
    if (events.isEmpty()) {
      return;
    }
    List<EventRef> refs = new ArrayList<>(events.size());
    for (CachedEvent e : events) {
      refs.add(new EventRef(e.id, e.epoch));
    }
    long deadline = now + ackWaitNs;
    Map<EventRef, CasOutcome> outcome;
    try {
      outcome = ctx.store().fire(refs, deadline);
    } catch (RuntimeException ex) {
      // Unknown whether it committed. Put the events back: if it did, their epoch is stale and
      // the next fire's CAS drops them; the rows come back through the retry collector.
      for (int i = 0; i < events.size(); i++) {
        owners.get(i).inFlight--;
        cache.add(events.get(i));
      }
      ctx.metrics().dbErrors.increment();
      log.warn(
          "{}: firing {} events failed, retrying shortly: {}",
          ctx.where(),
          events.size(),
          ex.toString());
      pausedUntilNs = now + ERROR_PAUSE_NS;
      return;
    }
    Map<ReceiverStream, EventBatch.Builder> batches = new LinkedHashMap<>();
    int fired = 0;
    for (int i = 0; i < events.size(); i++) {
      CachedEvent e = events.get(i);
      ReceiverStream r = owners.get(i);
      if (outcome.get(refs.get(i)) != CasOutcome.APPLIED) {
        r.inFlight--;
        ctx.metrics().casMisses.increment();
        continue;
      }
      long epoch = e.epoch + 1;
      inFlight.put(e.id, new InFlight(e, epoch, r, deadline));
      ctx.metrics().dueToDispatch.record(Math.max(0, now - e.dueNs), TimeUnit.NANOSECONDS);
      long[] tc = tenantCounts.computeIfAbsent(e.tenant, k -> new long[2]);
      tc[0]++; // in flight
      tc[1]++; // dispatched
      batches.computeIfAbsent(r, k -> EventBatch.newBuilder()).addEvents(toWire(e, epoch, now));
      fired++;
    }
    ctx.metrics().dispatched.increment(fired);
    // A failed send leaves the events in flight: the stream's close releases them at once.
    batches.forEach((r, b) -> r.send(ManagerMessage.newBuilder().setEvents(b).build()));
    inFlightCount = inFlight.size();
  }

  private Event toWire(CachedEvent e, long epoch, long now) {
    return Event.newBuilder()
        .setId(e.id)
        .setEpoch(epoch)
        .setQueue(ctx.queue())
        .setShard(ctx.shard())
        .setTenant(e.tenant)
        .setPriority(e.priority)
        .setTimeDueNs(e.dueNs)
        .setTimeCreatedNs(e.createdNs)
        .setTimeFiredNs(now)
        .putAllColumns(e.columns)
        .build();
  }

  /** Ack deadlines that passed: back to pending with backoff, or dead. */
  private void expire(long now) {
    for (InFlight f : inFlight.values()) {
      if (f.deadlineNs > now) {
        break;
      }
      if (!f.settling) {
        f.settling = true;
        f.owner.inFlight--;
        ctx.metrics().timeouts.increment();
        acks.submit(releaseOf(new EventRef(f.event.id, f.epoch), now, 0, null, "ack timeout"));
      }
    }
  }

  private Completion releaseOf(
      EventRef ref, long now, long retryAfterNs, ReceiverStream from, String reason) {
    boolean dead = isLastAttempt(ref.epoch(), maxAttempts);
    long delay = retryAfterNs > 0 ? retryAfterNs : ctx.backoff().delayNs(ref.epoch());
    return Completion.release(ref, now + delay, dead, from, reason);
  }

  /**
   * Whether attempt {@code epoch} used up the event's attempts. Epochs only grow (so a stale ack
   * can never match a later attempt); an operator's replay of a dead event therefore keeps its
   * epoch, and each life of an event is {@code max_attempts} attempts long: it dies at every
   * multiple.
   */
  static boolean isLastAttempt(long epoch, int maxAttempts) {
    return epoch >= maxAttempts && epoch % maxAttempts == 0;
  }

  // ------------------------------------------------------------------ commands (dispatcher thread)

  void onAttach(ReceiverStream r) {
    receivers.add(r);
    receiverCount = receivers.size();
  }

  /** The stream ended or broke: release what it held at once, not after ack_wait. */
  void onDetach(ReceiverStream r, String why) {
    r.markClosed();
    if (!receivers.remove(r)) {
      return;
    }
    long now = ctx.clock().nowNs();
    int released = 0;
    for (InFlight f : inFlight.values()) {
      if (f.owner == r && !f.settling) {
        f.settling = true;
        f.owner.inFlight--;
        acks.submit(releaseOf(new EventRef(f.event.id, f.epoch), now, 0, null, why));
        released++;
      }
    }
    receiverCount = receivers.size();
    if (released > 0) {
      log.info(
          "{}: {} gone ({}), releasing its {} in-flight events", ctx.where(), r, why, released);
    }
  }

  void onAcks(ReceiverStream from, List<EventRef> refs) {
    long now = ctx.clock().nowNs();
    for (EventRef ref : refs) {
      InFlight f = inFlight.get(ref.id());
      if (f != null && f.epoch == ref.epoch() && !f.settling) {
        f.settling = true;
        f.owner.inFlight--;
        ctx.metrics()
            .dispatchToAck
            .record(Math.max(0, now - (f.deadlineNs - ackWaitNs)), TimeUnit.NANOSECONDS);
      }
      // Unknown to this manager (fired before a restart, say): the database decides.
      acks.submit(Completion.ack(ref, from));
    }
  }

  void onNacks(ReceiverStream from, List<Nack> nacks) {
    long now = ctx.clock().nowNs();
    for (Nack n : nacks) {
      EventRef ref = new EventRef(n.getEvent().getId(), n.getEvent().getEpoch());
      InFlight f = inFlight.get(ref.id());
      if (f != null && f.epoch == ref.epoch() && !f.settling) {
        f.settling = true;
        f.owner.inFlight--;
      }
      ctx.metrics().nacked.increment();
      long after = TimeUnit.MILLISECONDS.toNanos(Math.max(0, n.getRetryAfterMs()));
      acks.submit(releaseOf(ref, now, after, from, "nack"));
    }
  }

  /**
   * Results of acks and releases from the ack batcher. An event leaves the in-flight table when a
   * change to it applied, or when none applied: then the table no longer shows it fired at that
   * epoch (another path settled it) and this manager must not go on holding it.
   */
  void onSettled(List<Completion> done, List<CasOutcome> outcomes) {
    java.util.Set<Long> applied = new java.util.HashSet<>();
    for (int i = 0; i < done.size(); i++) {
      if (outcomes.get(i) == CasOutcome.APPLIED) {
        applied.add(done.get(i).ref().id());
      }
    }
    for (int i = 0; i < done.size(); i++) {
      Completion c = done.get(i);
      long id = c.ref().id();
      InFlight f = inFlight.get(id);
      if (f == null || f.epoch != c.ref().epoch()) {
        continue;
      }
      boolean ok = outcomes.get(i) == CasOutcome.APPLIED;
      if (!ok && applied.contains(id)) {
        continue; // another change to the same event in this batch applied
      }
      inFlight.remove(id);
      if (!f.settling) {
        f.owner.inFlight--;
      }
      long[] tc = tenantCounts.get(f.event.tenant);
      if (tc != null) {
        tc[0]--;
      }
      settledSeq++;
      recentlySettled.remove(id);
      recentlySettled.put(id, settledSeq);
      if (ok && c.kind() == Completion.Kind.RELEASE && !c.dead()) {
        cache.add(f.event.retry(c.ref().epoch(), c.retryAtNs()));
      }
    }
    publish();
  }

  /**
   * Rows read by the poller. A row may be stale: the poll's snapshot can predate a fire, ack or
   * release this thread already saw. Events in the window or in flight are skipped by id, and so
   * are events settled after the poll began ({@code seqAtStart}): the snapshot may show them still
   * pending.
   */
  void onPolled(List<EventRow> rows, long seqAtStart, boolean full) {
    ctx.metrics().polledRows.increment(rows.size());
    for (EventRow row : rows) {
      long id = row.id();
      if (cache.contains(id) || inFlight.containsKey(id)) {
        continue;
      }
      Long settledAt = recentlySettled.get(id);
      if (settledAt != null && settledAt > seqAtStart) {
        continue;
      }
      CachedEvent e =
          new CachedEvent(
              id,
              row.epoch(),
              row.timeNextNs(),
              row.timeCreatedNs(),
              row.priority(),
              row.tenant(),
              Values.toWire(row.userColumns()));
      if (!cache.add(e)) {
        break;
      }
    }
    // Later polls start at or after seqAtStart: older entries can no longer matter.
    Iterator<Map.Entry<Long, Long>> it = recentlySettled.entrySet().iterator();
    while (it.hasNext() && it.next().getValue() <= seqAtStart) {
      it.remove();
    }
    pollerHasMore = full;
    publish();
  }

  /** Fired rows past their deadline found in the table: ours are handled by {@link #expire}. */
  void onOrphans(List<EventRef> refs) {
    long now = ctx.clock().nowNs();
    for (EventRef ref : refs) {
      if (!inFlight.containsKey(ref.id())) {
        acks.submit(releaseOf(ref, now, 0, null, "orphan (no live owner)"));
      }
    }
  }

  void onCancelled(List<Long> ids) {
    for (Long id : ids) {
      cache.remove(id);
    }
    publish();
  }

  /** Graceful stop, step 1: no new sends. */
  void onStopDispatching() {
    dispatching = false;
  }

  /** Graceful stop, step 2: release whatever receivers still hold, without backoff. */
  void onReleaseAll(String why) {
    long now = ctx.clock().nowNs();
    for (InFlight f : inFlight.values()) {
      if (!f.settling) {
        f.settling = true;
        f.owner.inFlight--;
        acks.submit(Completion.release(new EventRef(f.event.id, f.epoch), now, false, null, why));
      }
    }
  }
}
