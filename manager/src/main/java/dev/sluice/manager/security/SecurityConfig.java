package dev.sluice.manager.security;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The security settings of a manager: TLS on both servers, the principals (authentication is on
 * when there is at least one), what stays open without credentials, and whether an exposed,
 * unprotected manager is allowed.
 *
 * @param tls TLS settings, or null for plain text
 * @param principals who may call; empty = authentication off (every caller may do everything)
 * @param openHealth /healthz, /readyz and gRPC health answer without credentials
 * @param openMetrics /metrics answers without credentials
 * @param allowInsecure listen beyond loopback without TLS or authentication (warned about)
 */
public record SecurityConfig(
    TlsConfig tls,
    List<Principal> principals,
    boolean openHealth,
    boolean openMetrics,
    boolean allowInsecure) {
  public static final SecurityConfig NONE = new SecurityConfig(null, List.of(), true, true, false);

  public SecurityConfig {
    principals = List.copyOf(principals);
    Set<String> names = new HashSet<>();
    Set<Object> subjects = new HashSet<>();
    for (Principal p : principals) {
      if (!names.add(p.name())) {
        throw new IllegalArgumentException(
            "auth.principals: the name '" + p.name() + "' is used twice");
      }
      if (!p.hasToken() && p.certSubject() == null) {
        throw new IllegalArgumentException(
            "auth.principals["
                + p.name()
                + "]: give a token (token_sha256, token_env or token_file) or a cert_subject");
      }
      if (p.certSubject() != null) {
        if (!subjects.add(p.certSubject())) {
          throw new IllegalArgumentException(
              "auth.principals["
                  + p.name()
                  + "].cert_subject: another principal has the same subject");
        }
        if (tls == null || !tls.mutual()) {
          throw new IllegalArgumentException(
              "auth.principals[" + p.name() + "].cert_subject needs mutual TLS: set tls.client_ca");
        }
      }
    }
    new Authenticator(principals); // refuses two principals with the same token
  }

  public boolean authEnabled() {
    return !principals.isEmpty();
  }

  public boolean tlsEnabled() {
    return tls != null;
  }
}
