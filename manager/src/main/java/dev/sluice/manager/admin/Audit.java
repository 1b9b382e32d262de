package dev.sluice.manager.admin;

import dev.sluice.manager.security.Principal;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The audit of operator actions: one INFO line on the {@code sluice.audit} logger and the counter
 * {@code sluice_admin_actions_total{action,outcome,principal}} for every call, whatever its outcome
 * (ok, denied, failed). Every operator path writes it: the Admin API, the status page and the CLI
 * run straight against the database.
 *
 * <p>Threads: any; it holds no state but the registry.
 */
public final class Audit {
  private static final Logger audit = LoggerFactory.getLogger("sluice.audit");

  private final MeterRegistry registry;

  public Audit(MeterRegistry registry) {
    this.registry = registry;
  }

  /** A call's result, how many things it concerned and on which shard (for the audit line). */
  public record Outcome<T>(T value, long count, String shard) {
    public Outcome(T value, long count) {
      this(value, count, null);
    }
  }

  /** Runs {@code body}, then writes the audit line and counts the call, whatever its outcome. */
  public <T> T audited(
      Principal p, String action, String queue, String shard, Supplier<Outcome<T>> body) {
    String where = shard == null || shard.isEmpty() ? "-" : shard;
    try {
      Outcome<T> o = body.get();
      audit.info(
          "principal={} action={} queue={} shard={} count={} outcome=ok",
          p.name(),
          action,
          queue,
          o.shard() != null ? o.shard() : where,
          o.count());
      count(action, "ok", p);
      return o.value();
    } catch (AdminDenied e) {
      audit.info(
          "principal={} action={} queue={} shard={} count=0 outcome=denied",
          p.name(),
          action,
          queue,
          where);
      count(action, "denied", p);
      throw e;
    } catch (RuntimeException e) {
      audit.info(
          "principal={} action={} queue={} shard={} count=0 outcome=failed ({})",
          p.name(),
          action,
          queue,
          where,
          e.getMessage());
      count(action, "failed", p);
      throw e;
    }
  }

  private void count(String action, String outcome, Principal p) {
    Counter.builder("sluice_admin_actions")
        .description("Operator actions through the admin API, by outcome (ok, denied, failed)")
        .tag("action", action)
        .tag("outcome", outcome)
        .tag("principal", p.name())
        .register(registry)
        .increment();
  }
}
