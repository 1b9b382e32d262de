package dev.sluice.core.queue.dispatch;

import dev.sluice.core.fairness.TenantCredits;
import dev.sluice.core.fairness.TenantRates;
import dev.sluice.core.loop.Ticker;
import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.core.window.CachedEvent;
import java.util.List;
import java.util.function.IntSupplier;
import java.util.function.Predicate;

/**
 * Who may have one more event in flight, and the one place a credit is taken ({@link #assign}) and
 * given back ({@link #unassign}, {@link #free}). A credit is counted at once on the outlet (its
 * shared credits and work-class count, and this shard's {@link AttachedOutlet#inFlight}) and on the
 * event's tenant ({@link TenantCredits}: its in-flight cap and the reserve); which outlet serves
 * which tenant is the {@link ReceiverPool}'s shuffle sharding. On top, the queue's {@code
 * max_concurrency} caps the events firing or in flight as the {@link InFlightTable} counts them
 * (until the database settled them, not only until their credit came back).
 *
 * <p>Owned by the {@link Dispatcher} thread: no locks. Outlets' credits are shared with their other
 * shards, so an outlet's free credits can drop between two calls here: {@link #assign} copes with a
 * refusal.
 */
final class CreditLedger {
  private final ReceiverPool receivers;
  private final TenantCredits tenants;

  /** Tenants' rates ({@code tenant_max_rate}, {@code max_rate}): one passed over waits aside. */
  private final TenantRates rates;

  private final Ticker ticker;

  /** key_max_in_flight: events of one key in flight; one at its limit waits aside there. */
  private final KeyLimits keys;

  /** Events firing or in flight, for max_concurrency. */
  private final IntSupplier unsettled;

  private int maxConcurrency;

  /** All outlets' credits, taken once per fire round (for the tenant reserve). */
  private int allCreditsThisRound;

  /**
   * @param inWindow whether a tenant has events in the window (its account is kept while it does)
   * @param unsettled events firing or in flight
   */
  CreditLedger(
      QueueContext ctx, long forgetDelayNs, Predicate<String> inWindow, IntSupplier unsettled) {
    dev.sluice.db.QueueOptions o = ctx.options();
    this.receivers = new ReceiverPool(o.maxReceiversPerTenant(), o.classShares(), forgetDelayNs);
    this.tenants =
        new TenantCredits(
            ctx.tenantLimits(), o.fair(), o.tenantReserve(), inWindow, ctx.clock().ticker());
    this.rates = new TenantRates(ctx.tenantLimits());
    this.keys = new KeyLimits(o);
    this.ticker = ctx.clock().ticker();
    this.unsettled = unsettled;
    this.maxConcurrency = o.maxConcurrency();
  }

  /** The queue's max_concurrency changed in place (0: none). */
  void maxConcurrency(int n) {
    this.maxConcurrency = n;
  }

  // ------------------------------------------------------------------ outlets

  void attach(AttachedOutlet r) {
    receivers.attach(r);
  }

  /** False if {@code r} was not attached. What it holds is the caller's to free. */
  boolean detach(AttachedOutlet r, long mono) {
    return receivers.detach(r, mono);
  }

  void forgetDeparted(long mono) {
    receivers.forgetDeparted(mono);
  }

  boolean attached(AttachedOutlet r) {
    return receivers.contains(r);
  }

  int outletCount() {
    return receivers.size();
  }

  /** The attached outlets, in attach order (read only). */
  List<AttachedOutlet> outlets() {
    return receivers.all();
  }

  TenantCredits tenants() {
    return tenants;
  }

  // ------------------------------------------------------------------ who may take

  /** Free credits on the outlets, within the queue's max_concurrency. */
  int freeSlots() {
    int free = receivers.freeCredits();
    if (maxConcurrency > 0) {
      free = Math.min(free, maxConcurrency - unsettled.getAsInt());
    }
    return free;
  }

  /** A fire round starts: the outlets' credits in all are read once for it. */
  void startRound() {
    allCreditsThisRound = receivers.allCredits();
    if (rates.active()) {
      rates.startRound(ticker.nanos());
    }
  }

  TenantRates rates() {
    return rates;
  }

  KeyLimits keys() {
    return keys;
  }

  /** How long until a tenant passed over for its rate may go again; MAX_VALUE if none was. */
  long rateWaitNs() {
    return rates.active() ? rates.waitNs(ticker.nanos()) : Long.MAX_VALUE;
  }

  /**
   * Whether {@code tenant} may have one more event in flight: within its cap and the reserve (see
   * {@link TenantCredits}), with a free credit on an outlet that serves it, and within its rate
   * ({@link TenantRates}).
   */
  boolean tenantCanTake(String tenant) {
    return tenants.mayTake(tenant, this::freeSlots, () -> allCreditsThisRound)
        && receivers.hasFreeCreditFor(tenant)
        && (!rates.active() || rates.mayTake(tenant, ticker.nanos()));
  }

  /** Whether an outlet can take {@code e} now (its tenant's shard, its class's share). */
  boolean eventCanTake(CachedEvent e) {
    return receivers.pick(e, false) != null;
  }

  // ------------------------------------------------------------------ taking and giving back

  /**
   * Takes a credit for {@code e} on the outlet that should have it; returns that outlet, or null
   * when none can take it (another shard took the last credit meanwhile).
   */
  AttachedOutlet assign(CachedEvent e) {
    AttachedOutlet r = receivers.pick(e, true);
    if (r == null || !r.tryReserve(e.workClass)) {
      return null;
    }
    tenants.take(e.tenant);
    if (rates.active()) {
      rates.took(e.tenant, ticker.nanos());
    }
    if (keys.active()) {
      keys.entered(e);
    }
    return r;
  }

  /** Gives back the credit taken for {@code e} on {@code r}, whose fire did not happen. */
  void unassign(AttachedOutlet r, CachedEvent e) {
    giveBack(r, e);
  }

  /**
   * Gives back the credit an event in flight held, once: an ack, nack, timeout, detach, release or
   * settle that comes after the first gives back nothing.
   */
  void free(InFlight f) {
    if (!f.freed) {
      f.freed = true;
      giveBack(f.owner, f.event);
    }
  }

  private void giveBack(AttachedOutlet r, CachedEvent e) {
    r.unreserve(e.workClass);
    tenants.giveBack(e.tenant);
    if (keys.active()) {
      keys.left(e);
    }
  }

  /** One of {@code tenant}'s events was fired and sent, {@code waitNs} after it came due. */
  void dispatched(String tenant, long waitNs, long mono) {
    tenants.dispatched(tenant, waitNs, mono);
  }
}
