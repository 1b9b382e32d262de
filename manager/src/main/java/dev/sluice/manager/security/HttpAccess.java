package dev.sluice.manager.security;

import javax.net.ssl.SSLSession;

/**
 * Who may read what on the HTTP port. With authentication on, the status page and {@code
 * /api/status} need a principal with the {@code stats} action on every queue ({@code "*"}), by
 * bearer token or by basic auth with the token as password (what a browser asks for); {@code
 * /healthz} and {@code /readyz} are open while {@code open_health}, {@code /metrics} while {@code
 * open_metrics}. Stateless and thread-safe.
 */
public final class HttpAccess {
  /** The answer for one request. */
  public enum Verdict {
    ALLOW,
    /** 401 with a Basic challenge: no or bad credentials. */
    UNAUTHENTICATED,
    /** 403: authenticated, without the right. */
    FORBIDDEN
  }

  private final SecurityConfig config;
  private final Authenticator authenticator;
  private final AuthDenials denials;

  HttpAccess(SecurityConfig config, Authenticator authenticator, AuthDenials denials) {
    this.config = config;
    this.authenticator = authenticator;
    this.denials = denials;
  }

  /** No authentication at all: every path is open. */
  public static HttpAccess open() {
    return new HttpAccess(SecurityConfig.NONE, new Authenticator(java.util.List.of()), null);
  }

  /**
   * Who sent a request that {@link #check} allowed: the authenticated principal, or {@link
   * Principal#ANONYMOUS} (who may do everything) when authentication is off. The status page's
   * actions ask it what this principal may do.
   */
  public Principal principal(String authorization, SSLSession tls) {
    if (!config.authEnabled()) {
      return Principal.ANONYMOUS;
    }
    Authenticator.Result r = authenticator.authenticate(authorization, tls);
    if (!r.ok()) {
      throw new IllegalStateException("principal() asked for a request check() did not allow");
    }
    return r.principal();
  }

  public Verdict check(String path, String authorization, SSLSession tls) {
    if (!config.authEnabled()) {
      return Verdict.ALLOW;
    }
    if ((path.equals("/healthz") || path.equals("/readyz")) && config.openHealth()) {
      return Verdict.ALLOW;
    }
    if (path.equals("/metrics") && config.openMetrics()) {
      return Verdict.ALLOW;
    }
    Authenticator.Result r = authenticator.authenticate(authorization, tls);
    if (!r.ok()) {
      denials.deny(null, r.failure().tag(), "HTTP " + path);
      return Verdict.UNAUTHENTICATED;
    }
    if (!r.principal().allowsEverywhere(Action.STATS)) {
      denials.deny(r.principal().name(), "permission", "HTTP " + path);
      return Verdict.FORBIDDEN;
    }
    return Verdict.ALLOW;
  }
}
