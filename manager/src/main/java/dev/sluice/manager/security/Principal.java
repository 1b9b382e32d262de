package dev.sluice.manager.security;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import javax.security.auth.x500.X500Principal;

/**
 * A caller of the gRPC API or the status page, and what it may do. Identified by a bearer token
 * (only its SHA-256 is kept) or by its client certificate's subject under mutual TLS.
 *
 * <p>{@link #toString()} shows the name only: the token hash is never logged or shown.
 */
public final class Principal {
  /** Every caller when authentication is off: may do everything. */
  public static final Principal ANONYMOUS =
      new Principal(
          "anonymous",
          null,
          null,
          List.of(new Grant(List.of("*"), Set.of(Action.values()), List.of())),
          Limits.NONE);

  private final String name;
  private final byte[] tokenSha256;
  private final X500Principal certSubject;
  private final List<Grant> grants;
  private final Limits limits;

  public Principal(
      String name,
      byte[] tokenSha256,
      X500Principal certSubject,
      List<Grant> grants,
      Limits limits) {
    if (name == null || name.isBlank()) {
      throw new IllegalArgumentException("auth.principals[].name is required");
    }
    this.name = name;
    this.tokenSha256 = tokenSha256 == null ? null : tokenSha256.clone();
    this.certSubject = certSubject;
    this.grants = List.copyOf(grants);
    this.limits = limits == null ? Limits.NONE : limits;
  }

  public String name() {
    return name;
  }

  byte[] tokenSha256() {
    return tokenSha256;
  }

  public boolean hasToken() {
    return tokenSha256 != null;
  }

  public X500Principal certSubject() {
    return certSubject;
  }

  public List<Grant> grants() {
    return grants;
  }

  public Limits limits() {
    return limits;
  }

  /** Whether some grant covers {@code action} on {@code queue}. */
  public boolean allows(String queue, Action action) {
    return grants.stream().anyMatch(g -> g.allows(queue, action));
  }

  /** Whether some grant covers the queue at all (any action): whether it may know it exists. */
  public boolean sees(String queue) {
    return grants.stream().anyMatch(g -> g.matchesQueue(queue));
  }

  /** Whether some grant gives {@code action} on every queue ({@code "*"}). */
  public boolean allowsEverywhere(Action action) {
    return grants.stream().anyMatch(g -> g.everyQueue() && g.actions().contains(action));
  }

  /** Whether some grant gives {@code action} on any queue. */
  public boolean allowsSomewhere(Action action) {
    return grants.stream().anyMatch(g -> g.actions().contains(action));
  }

  /**
   * The tenants a subscription of this principal to {@code queue} may be sent, or null for every
   * tenant: the union of the subscribe grants' tenants, unless one of them names none (then all).
   */
  public Set<String> tenantsFor(String queue) {
    return tenantsFor(queue, Action.SUBSCRIBE);
  }

  /**
   * The tenants whose events this principal may touch by {@code action} on {@code queue}, or null
   * for every tenant: the union of those grants' tenants, unless one of them names none (then all).
   */
  public Set<String> tenantsFor(String queue, Action action) {
    List<Grant> gs = grants.stream().filter(g -> g.allows(queue, action)).toList();
    if (gs.isEmpty() || gs.stream().anyMatch(g -> g.tenants().isEmpty())) {
      return null;
    }
    return gs.stream().flatMap(g -> g.tenants().stream()).collect(Collectors.toUnmodifiableSet());
  }

  @Override
  public String toString() {
    return name;
  }
}
