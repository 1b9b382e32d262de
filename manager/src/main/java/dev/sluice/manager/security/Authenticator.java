package dev.sluice.manager.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * Finds the principal behind a call: a bearer token (compared by its SHA-256, in constant time,
 * against every principal's so that timing tells nothing) or, under mutual TLS, the subject of the
 * client certificate the TLS layer already verified. Stateless and thread-safe.
 */
public final class Authenticator {
  /** Why a caller was not authenticated: the {@code reason} tag of sluice_auth_denied_total. */
  public enum Failure {
    NO_CREDENTIALS("no_credentials"),
    BAD_TOKEN("bad_token"),
    UNKNOWN_CERTIFICATE("unknown_certificate"),
    CONFLICT("token_and_certificate_differ");

    final String tag;

    Failure(String tag) {
      this.tag = tag;
    }

    public String tag() {
      return tag;
    }
  }

  /** A principal, or why there is none. */
  public record Result(Principal principal, Failure failure) {
    public boolean ok() {
      return principal != null;
    }
  }

  private final List<Principal> principals;

  public Authenticator(List<Principal> principals) {
    this.principals = List.copyOf(principals);
    for (int i = 0; i < principals.size(); i++) {
      for (int j = i + 1; j < principals.size(); j++) {
        byte[] a = principals.get(i).tokenSha256();
        byte[] b = principals.get(j).tokenSha256();
        if (a != null && b != null && MessageDigest.isEqual(a, b)) {
          throw new IllegalArgumentException(
              "auth.principals: "
                  + principals.get(i).name()
                  + " and "
                  + principals.get(j).name()
                  + " have the same token");
        }
      }
    }
  }

  /**
   * @param authorization the Authorization header ({@code Bearer <token>}, or {@code Basic} with
   *     the token as password), or null
   * @param tls the TLS session, or null on plain text
   */
  public Result authenticate(String authorization, SSLSession tls) {
    Principal byCert = null;
    X509Certificate cert = clientCertificate(tls);
    if (cert != null) {
      for (Principal p : principals) {
        if (p.certSubject() != null && p.certSubject().equals(cert.getSubjectX500Principal())) {
          byCert = p;
        }
      }
    }
    String token = token(authorization);
    if (token != null) {
      Principal byToken = byToken(token);
      if (byToken == null) {
        return new Result(null, Failure.BAD_TOKEN);
      }
      if (byCert != null && byCert != byToken) {
        return new Result(null, Failure.CONFLICT);
      }
      return new Result(byToken, null);
    }
    if (byCert != null) {
      return new Result(byCert, null);
    }
    return new Result(null, cert != null ? Failure.UNKNOWN_CERTIFICATE : Failure.NO_CREDENTIALS);
  }

  /** Looks at every principal, whatever matches, so the time taken does not depend on which. */
  private Principal byToken(String token) {
    byte[] h = sha256(token);
    Principal found = null;
    for (Principal p : principals) {
      byte[] t = p.tokenSha256();
      if (t != null && MessageDigest.isEqual(t, h)) {
        found = p;
      }
    }
    return found;
  }

  static String token(String authorization) {
    if (authorization == null) {
      return null;
    }
    String a = authorization.strip();
    if (a.regionMatches(true, 0, "Bearer ", 0, 7)) {
      String t = a.substring(7).strip();
      return t.isEmpty() ? null : t;
    }
    if (a.regionMatches(true, 0, "Basic ", 0, 6)) {
      try {
        String up =
            new String(Base64.getDecoder().decode(a.substring(6).strip()), StandardCharsets.UTF_8);
        int colon = up.indexOf(':');
        String t = colon < 0 ? up : up.substring(colon + 1);
        return t.isEmpty() ? null : t;
      } catch (IllegalArgumentException e) {
        return "\u0000not base64"; // matches no principal: a bad token, not a missing one
      }
    }
    return "\u0000unknown scheme";
  }

  private static X509Certificate clientCertificate(SSLSession tls) {
    if (tls == null) {
      return null;
    }
    try {
      Certificate[] chain = tls.getPeerCertificates();
      return chain.length > 0 && chain[0] instanceof X509Certificate x ? x : null;
    } catch (SSLPeerUnverifiedException e) {
      return null;
    }
  }

  /** SHA-256 of a token, as stored in {@code token_sha256}. */
  public static byte[] sha256(String token) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The hex SHA-256 of a token, for writing {@code token_sha256} in sluice.yaml. */
  public static String sha256Hex(String token) {
    return HexFormat.of().formatHex(sha256(token));
  }
}
