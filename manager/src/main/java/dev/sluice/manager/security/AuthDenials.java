package dev.sluice.manager.security;

import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Audit of refused calls: counts them in {@code sluice_auth_denied_total{principal,reason}} and
 * logs them at most once per {@link #LOG_EVERY_NS} per principal (with how many were not logged),
 * so an attacker cannot flood the log. The principal of an unauthenticated call is {@code -}:
 * whatever it claimed is never logged. Thread-safe.
 */
public final class AuthDenials {
  private static final Logger log = LoggerFactory.getLogger(AuthDenials.class);
  public static final long LOG_EVERY_NS = 10_000_000_000L;
  public static final String UNAUTHENTICATED = "-";

  private final MeterRegistry registry;
  private final LongSupplier ticker;
  private final Map<String, long[]> lastLog = new ConcurrentHashMap<>();

  /**
   * @param ticker a monotonic clock in ns (System::nanoTime in production)
   */
  public AuthDenials(MeterRegistry registry, LongSupplier ticker) {
    this.registry = registry;
    this.ticker = ticker;
  }

  /** Counts one refusal; {@code what} says what was refused (no secret in it). */
  public void deny(String principal, String reason, String what) {
    String p = principal == null ? UNAUTHENTICATED : principal;
    registry.counter("sluice.auth.denied", "principal", p, "reason", reason).increment();
    long now = ticker.getAsLong();
    long[] state = lastLog.computeIfAbsent(p, k -> new long[] {now - LOG_EVERY_NS - 1, 0});
    boolean logNow;
    long skipped;
    synchronized (state) {
      logNow = now - state[0] > LOG_EVERY_NS;
      skipped = state[1];
      if (logNow) {
        state[0] = now;
        state[1] = 0;
      } else {
        state[1]++;
      }
    }
    if (logNow) {
      log.warn(
          "denied {} to principal {}: {}{}",
          what,
          p,
          reason,
          skipped > 0 ? " (" + skipped + " more denials not logged in the last 10 s)" : "");
    }
  }
}
