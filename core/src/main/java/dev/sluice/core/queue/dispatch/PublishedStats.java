package dev.sluice.core.queue.dispatch;

import dev.sluice.core.fairness.TenantCredits;
import dev.sluice.core.fairness.TenantStats;
import dev.sluice.core.loop.Ticker;
import dev.sluice.core.queue.context.QueueMetrics;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * The dispatcher's figures as other threads see them (gauges, the status page, a graceful stop
 * waiting for the events in flight), read off its ledgers: written by the {@link Dispatcher} thread
 * only, read by any (volatile). Per-tenant and per-outlet figures are rebuilt at most every {@link
 * #TENANT_EVERY_NS}; the window's own figures are the {@link WindowFeed}'s to publish.
 */
final class PublishedStats {
  private static final long TENANT_EVERY_NS = TimeUnit.MILLISECONDS.toNanos(500);

  private final InFlightTable table;
  private final CreditLedger ledger;
  private final WindowFeed feed;
  private final Ticker ticker;

  private volatile int inFlightCount;
  private volatile int receiverCount;
  private volatile List<TenantStats> tenants = List.of();
  private volatile List<ReceiverStats> receivers = List.of();

  /** When the per-tenant figures were last rebuilt (dispatcher thread). */
  private long tenantPublishedNs;

  PublishedStats(InFlightTable table, CreditLedger ledger, WindowFeed feed, Ticker ticker) {
    this.table = table;
    this.ticker = ticker;
    this.ledger = ledger;
    this.feed = feed;
  }

  /** Events were handed to the firer or came back from it (dispatcher thread). */
  void inFlightChanged() {
    inFlightCount = table.count();
  }

  /** An outlet was attached or detached (dispatcher thread). */
  void outletsChanged() {
    receiverCount = ledger.outletCount();
  }

  /**
   * Publishes the window's figures ({@link WindowFeed#publish}) and the counts, and the per-tenant
   * and per-outlet figures when due (dispatcher thread).
   */
  void publish() {
    long mono = ticker.nanos();
    feed.publish(mono);
    inFlightCount = table.count();
    receiverCount = ledger.outletCount();
    if (mono - tenantPublishedNs < TENANT_EVERY_NS) {
      return;
    }
    tenantPublishedNs = mono;
    TenantCredits credits = ledger.tenants();
    Map<String, Integer> queued = feed.window().countByTenant();
    Set<String> names = new TreeSet<>(credits.tenants());
    names.addAll(queued.keySet());
    Set<String> limited = ledger.rates().limitedNow();
    names.addAll(limited);
    List<TenantStats> out = new ArrayList<>(names.size());
    for (String t : names) {
      out.add(
          new TenantStats(
              t,
              queued.getOrDefault(t, 0),
              credits.held(t),
              credits.dispatchedTotal(t),
              credits.waitNsTotal(t),
              credits.recentMaxWaitNs(t, mono),
              limited.contains(t)));
    }
    tenants = List.copyOf(out);
    List<ReceiverStats> rs = new ArrayList<>(ledger.outletCount());
    for (AttachedOutlet r : ledger.outlets()) {
      rs.add(
          new ReceiverStats(
              r.receiverId(), r.streamId(), r.inFlight, r.maxInFlight(), r.draining()));
    }
    receivers = List.copyOf(rs);
  }

  /** Registers these figures as the queue's gauges (any thread; once). */
  void gauges(QueueMetrics m) {
    m.gauge("sluice.window.events", "pending events held in memory", feed::cachedCount);
    m.gauge(
        "sluice.window.bytes",
        "bytes of the pending events held in memory (at most cache_bytes)",
        feed::cachedBytes);
    m.gauge("sluice.events.in.flight", "events fired and not yet settled", this::inFlightCount);
    m.gauge("sluice.receivers.connected", "receiver streams attached", this::receiverCount);
    m.gauge(
        "sluice.tenants.rate.limited",
        "tenants the last fire round passed over for their rate (tenant_max_rate, max_rate)",
        () -> ledger.rates().limitedNow().size());
    m.gauge(
        "sluice.key.limit.waiting",
        "events waiting aside because their key is at key_max_in_flight",
        () -> ledger.keys().waiting());
    m.functionCounter(
        "sluice.key.limit.waits",
        "times an event was set aside at its key's key_max_in_flight",
        () -> ledger.keys().waits());
    m.functionCounter(
        "sluice.tenant.rate.waits",
        "times a tenant with a due event was passed over for its rate (once per fire round)",
        () -> ledger.rates().waits());
  }

  int inFlightCount() {
    return inFlightCount;
  }

  int receiverCount() {
    return receiverCount;
  }

  List<TenantStats> tenants() {
    return tenants;
  }

  List<ReceiverStats> receivers() {
    return receivers;
  }
}
