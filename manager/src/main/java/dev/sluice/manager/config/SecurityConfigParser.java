package dev.sluice.manager.config;

import dev.sluice.db.Durations;
import dev.sluice.manager.security.Action;
import dev.sluice.manager.security.Authenticator;
import dev.sluice.manager.security.Grant;
import dev.sluice.manager.security.Limits;
import dev.sluice.manager.security.Principal;
import dev.sluice.manager.security.SecurityConfig;
import dev.sluice.manager.security.TlsConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.Function;
import javax.security.auth.x500.X500Principal;

/**
 * Reads the {@code tls}, {@code auth} and {@code allow_insecure} settings of sluice.yaml. Token
 * values never pass through here as text that could be logged: {@code token_env} and {@code
 * token_file} are read and hashed at once; errors name the field, never the value.
 */
final class SecurityConfigParser {
  static final Set<String> TLS =
      Set.of("cert", "key", "client_ca", "client_auth", "reload_interval");
  static final Set<String> AUTH = Set.of("principals", "open_health", "open_metrics");
  static final Set<String> PRINCIPAL =
      Set.of("name", "token_sha256", "token_env", "token_file", "cert_subject", "grants", "limits");
  static final Set<String> GRANT = Set.of("queues", "actions", "tenants");
  static final Set<String> LIMITS = Set.of("streams", "subscribes_per_second", "credits");

  private final BiFunction<String, Object, String> str;
  private final Function<String, String> env;
  private final Path base;
  private final String source;

  /**
   * @param str reads a value with ${VAR} replaced (key, raw value)
   * @param base the config file's directory, against which relative paths resolve (null = cwd)
   */
  SecurityConfigParser(
      BiFunction<String, Object, String> str,
      Function<String, String> env,
      Path base,
      String source) {
    this.str = str;
    this.env = env;
    this.base = base;
    this.source = source;
  }

  @SuppressWarnings("unchecked")
  SecurityConfig parse(Map<String, Object> top) {
    TlsConfig tls = null;
    Object t = top.get("tls");
    if (t != null) {
      Map<String, Object> m = map("tls", t);
      known("tls.", m, TLS);
      Path ca = path(m, "client_ca");
      String clientAuth =
          m.containsKey("client_auth") ? text("tls.client_auth", m.get("client_auth")) : null;
      boolean require;
      if (clientAuth == null) {
        require = ca != null;
      } else if (clientAuth.equals("require")) {
        require = true;
      } else if (clientAuth.equals("optional")) {
        require = false;
      } else {
        throw fail("tls.client_auth must be require or optional, was '" + clientAuth + "'");
      }
      try {
        tls =
            new TlsConfig(
                path(m, "cert"),
                path(m, "key"),
                ca,
                require,
                m.containsKey("reload_interval")
                    ? Durations.parse(text("tls.reload_interval", m.get("reload_interval")))
                    : TlsConfig.DEFAULT_RELOAD_INTERVAL);
      } catch (IllegalArgumentException e) {
        throw fail(e.getMessage());
      }
    }
    List<Principal> principals = new ArrayList<>();
    boolean openHealth = true;
    boolean openMetrics = true;
    Object a = top.get("auth");
    if (a != null) {
      Map<String, Object> m = map("auth", a);
      known("auth.", m, AUTH);
      openHealth = bool(m, "open_health", "auth.open_health", true);
      openMetrics = bool(m, "open_metrics", "auth.open_metrics", true);
      Object ps = m.get("principals");
      if (!(ps instanceof List<?> list) || list.isEmpty()) {
        throw fail("auth.principals must be a non-empty list (omit auth to turn it off)");
      }
      for (Object o : list) {
        principals.add(principal(map("auth.principals[]", o)));
      }
    }
    boolean allowInsecure = bool(top, "allow_insecure", "allow_insecure", false);
    try {
      return new SecurityConfig(tls, principals, openHealth, openMetrics, allowInsecure);
    } catch (IllegalArgumentException e) {
      throw fail(e.getMessage());
    }
  }

  private Principal principal(Map<String, Object> m) {
    known("auth.principals[].", m, PRINCIPAL);
    String name = text("auth.principals[].name", m.get("name"));
    if (name == null || name.isBlank()) {
      throw fail("auth.principals[].name is required");
    }
    String f = "auth.principals[" + name + "]";
    byte[] hash = null;
    int sources = 0;
    if (m.containsKey("token_sha256")) {
      sources++;
      String hex = text(f + ".token_sha256", m.get("token_sha256")).strip();
      if (!hex.matches("[0-9a-fA-F]{64}")) {
        throw fail(f + ".token_sha256 must be 64 hex digits (the SHA-256 of the token)");
      }
      hash = HexFormat.of().parseHex(hex.toLowerCase());
    }
    if (m.containsKey("token_env")) {
      sources++;
      String var = text(f + ".token_env", m.get("token_env"));
      String v = env.apply(var);
      if (v == null || v.isBlank()) {
        throw fail(f + ".token_env names environment variable " + var + ", which is not set");
      }
      hash = Authenticator.sha256(v.strip());
    }
    if (m.containsKey("token_file")) {
      sources++;
      Path p = resolve(text(f + ".token_file", m.get("token_file")));
      try {
        String v = Files.readString(p).strip();
        if (v.isEmpty()) {
          throw fail(f + ".token_file " + p + " is empty");
        }
        hash = Authenticator.sha256(v);
      } catch (IOException e) {
        throw fail(f + ".token_file: cannot read " + p + ": " + e.getMessage());
      }
    }
    if (sources > 1) {
      throw fail(f + ": give one of token_sha256, token_env and token_file");
    }
    X500Principal subject = null;
    if (m.containsKey("cert_subject")) {
      try {
        subject = new X500Principal(text(f + ".cert_subject", m.get("cert_subject")));
      } catch (IllegalArgumentException e) {
        throw fail(f + ".cert_subject is not a distinguished name: " + e.getMessage());
      }
    }
    List<Grant> grants = new ArrayList<>();
    Object gs = m.get("grants");
    if (gs != null) {
      if (!(gs instanceof List<?> gl)) {
        throw fail(f + ".grants must be a list");
      }
      for (Object o : gl) {
        grants.add(grant(f + ".grants[]", map(f + ".grants[]", o)));
      }
    }
    Limits limits = Limits.NONE;
    if (m.containsKey("limits")) {
      Map<String, Object> l = map(f + ".limits", m.get("limits"));
      known(f + ".limits.", l, LIMITS);
      try {
        limits =
            new Limits(
                (int) number(f + ".limits.streams", l.get("streams")),
                number(f + ".limits.subscribes_per_second", l.get("subscribes_per_second")),
                (int) number(f + ".limits.credits", l.get("credits")));
      } catch (IllegalArgumentException e) {
        throw fail(f + "." + e.getMessage());
      }
    }
    try {
      return new Principal(name, hash, subject, grants, limits);
    } catch (IllegalArgumentException e) {
      throw fail(e.getMessage());
    }
  }

  private Grant grant(String f, Map<String, Object> m) {
    known(f + ".", m, GRANT);
    List<String> queues = strings(f + ".queues", m.get("queues"));
    Set<Action> actions = EnumSet.noneOf(Action.class);
    for (String s : strings(f + ".actions", m.get("actions"))) {
      actions.add(Action.parse(f + ".actions", s));
    }
    List<String> tenants =
        m.containsKey("tenants") ? strings(f + ".tenants", m.get("tenants")) : List.of();
    if (m.containsKey("tenants") && tenants.isEmpty()) {
      // An empty list must not read as "every tenant" (what an omitted key means).
      throw fail(
          f
              + ".tenants is an empty list: omit the key for every tenant, or list the tenants"
              + " this grant covers");
    }
    try {
      return new Grant(queues, actions, tenants);
    } catch (IllegalArgumentException e) {
      throw fail(e.getMessage());
    }
  }

  private List<String> strings(String field, Object v) {
    if (v == null) {
      return List.of();
    }
    if (v instanceof List<?> l) {
      List<String> out = new ArrayList<>();
      for (Object o : l) {
        out.add(text(field, o));
      }
      return out;
    }
    return List.of(text(field, v));
  }

  private Path path(Map<String, Object> m, String key) {
    return m.containsKey(key) ? resolve(text("tls." + key, m.get(key))) : null;
  }

  private Path resolve(String p) {
    Path path = Path.of(p);
    return base == null || path.isAbsolute() ? path : base.resolve(path).normalize();
  }

  private double number(String field, Object v) {
    if (v == null) {
      return 0;
    }
    String s = text(field, v);
    try {
      return Double.parseDouble(s.strip());
    } catch (NumberFormatException e) {
      throw fail(field + " must be a number, was '" + s + "'");
    }
  }

  private boolean bool(Map<String, Object> m, String key, String field, boolean dflt) {
    if (!m.containsKey(key)) {
      return dflt;
    }
    String s = text(field, m.get(key));
    return switch (s == null ? "" : s.strip()) {
      case "true" -> true;
      case "false" -> false;
      default -> throw fail(field + " must be true or false, was '" + s + "'");
    };
  }

  private String text(String field, Object v) {
    return v == null ? null : str.apply(field, v);
  }

  @SuppressWarnings("unchecked")
  private Map<String, Object> map(String field, Object v) {
    if (!(v instanceof Map<?, ?> m)) {
      throw fail(field + " must be a mapping");
    }
    return (Map<String, Object>) m;
  }

  private void known(String prefix, Map<String, Object> m, Set<String> keys) {
    for (String k : m.keySet()) {
      if (!keys.contains(k)) {
        throw fail(
            "unknown setting '"
                + prefix
                + k
                + "' (known: "
                + String.join(", ", keys.stream().sorted().toList())
                + ")");
      }
    }
  }

  private IllegalArgumentException fail(String message) {
    return new IllegalArgumentException(source + ": " + message);
  }
}
