package dev.sluice.manager.config;

import dev.sluice.core.config.BinlogMode;
import dev.sluice.core.config.ShardConfig;
import dev.sluice.core.config.TenantLimit;
import dev.sluice.db.KeyRange;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Reads a manager's YAML configuration. {@code ${NAME}} and {@code ${NAME:-default}} in any value
 * are replaced from the environment, so secrets stay out of the file. Any setting but {@code
 * tenant_limits}, {@code queues} and a channel's {@code properties} and {@code allowed_targets} can
 * also be overridden by an environment variable named after it ({@code SLUICE_GRPC_PORT}, {@code
 * SLUICE_SHARDS_0_URL}, {@code SLUICE_SHARDS_MAIN_PASSWORD}, {@code SLUICE_CHANNELS_0_URI}; see
 * {@link EnvOverrides}), and with {@link #loadEnvironment()} no file is needed at all.
 *
 * <pre>
 * manager_id: m1            # the scalar settings: see ManagerSettings
 * grpc_port: 7470
 * migrations: db/migration  # relative to this file's directory
 * shards:
 *   - name: main
 *     url: jdbc:mysql://127.0.0.1:3306/app
 *     user: sluice
 *     password: ${SLUICE_DB_PASSWORD}
 *     pool_size: 10
 *     key_range: "-"        # Vitess style: "-80", "80-", ...; "-" (the default) is everything
 *     binlog: auto          # follow the binlog for new rows when the server allows; off: poll only
 * tenant_limits:            # optional: per-tenant overrides of the queue comment's limits
 *                           # (cache_share, max_in_flight, max_rate, burst)
 *   - tenant: acme
 *     queue: order_events   # optional; "*" (the default) is every queue
 *     cache_share: 60%      # of the window; overrides tenant_cache_share
 *     max_in_flight: 200    # overrides tenant_max_in_flight; 0 = no cap
 * grpc_bind: 0.0.0.0:7470   # instead of grpc_host/grpc_port (default 127.0.0.1:7470)
 * tls: {cert: tls/m.pem, key: tls/m-key.pem, client_ca: tls/ca.pem, client_auth: require}
 * auth:                     # omitted: no authentication (then loopback only, or allow_insecure)
 *   open_health: true
 *   open_metrics: true
 *   principals:
 *     - name: orders-app
 *       token_env: ORDERS_TOKEN          # or token_file, or token_sha256; or cert_subject
 *       grants: [{queues: ["orders*"], actions: [subscribe, stats], tenants: [acme]}]
 *       limits: {streams: 20, subscribes_per_second: 5, credits: 2000}
 * allow_insecure: false
 * channels:                 # optional: brokers queues publish to (see ChannelConfig)
 *   - name: events-kafka
 *     kind: kafka                           # kafka | rabbitmq
 *     bootstrap_servers: 127.0.0.1:9092     # kafka
 *     properties: {linger.ms: "5"}          # kafka: extra producer properties
 *     publish_timeout: 10s
 *     max_in_flight: 1000                   # unconfirmed publishes, per queue and shard
 *     allowed_targets: [reminders.due]      # what a row's channel_target_column may name
 *   - {name: events-rabbit, kind: rabbitmq, uri: "amqp://sluice:${RABBIT_PASSWORD}@mq:5672/%2f"}
 * queues:                   # optional: channel options of a queue, over its table comment's
 *   orders: {channel: events-kafka, channel_target: orders.due}
 * </pre>
 *
 * <p>The {@code tls}, {@code auth} and {@code allow_insecure} settings are read by {@link
 * SecurityConfigParser}.
 */
public final class ConfigLoader {
  private static final Pattern VAR = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?}");

  /** The top-level settings: the scalar ones of {@link ManagerSettings}, then the structured. */
  private static final Set<String> TOP = topLevel();

  private static Set<String> topLevel() {
    Set<String> top = new java.util.LinkedHashSet<>();
    ManagerSettings.ALL.forEach(s -> top.add(s.name()));
    top.addAll(
        List.of(
            "shards",
            "tenant_limits",
            "grpc_bind",
            "http_bind",
            "tls",
            "auth",
            "allow_insecure",
            "channels",
            "queues"));
    return Set.copyOf(top);
  }

  private static final Set<String> SHARD =
      Set.of("name", "url", "user", "password", "pool_size", "key_range", "binlog");
  private static final Set<String> TENANT_LIMIT =
      Set.of("tenant", "queue", "cache_share", "max_in_flight", "max_rate", "burst");

  /** A channel's settings that environment variables may set (see {@link EnvOverrides}). */
  private static final Set<String> CHANNEL_SCALARS =
      Set.of("name", "kind", "bootstrap_servers", "uri", "publish_timeout", "max_in_flight");

  private final Function<String, String> env;

  public ConfigLoader(Function<String, String> env) {
    this.env = env;
  }

  public static ConfigLoader fromEnvironment() {
    return new ConfigLoader(System::getenv);
  }

  /**
   * The configuration from environment variables alone (no file): at least {@code
   * SLUICE_SHARDS_0_NAME} and {@code SLUICE_SHARDS_0_URL}. A relative {@code SLUICE_MIGRATIONS} is
   * relative to the working directory.
   */
  public ManagerConfig loadEnvironment() {
    return parse(Map.of(), "environment (SLUICE_*)");
  }

  /** True if the environment describes at least one shard, so no file is needed. */
  public boolean environmentHasShards() {
    return env.apply(EnvOverrides.shardVariable("0", "url")) != null;
  }

  public ManagerConfig load(Path file) {
    try (Reader r = Files.newBufferedReader(file)) {
      Object doc = new Yaml(new SafeConstructor(new LoaderOptions())).load(r);
      doc = doc == null ? Map.of() : doc;
      ManagerConfig c = parse(doc, file.toString(), file.toAbsolutePath().getParent());
      Path dir = file.getParent();
      if (dir == null || c.migrations().isAbsolute()) {
        return c;
      }
      return c.withMigrations(dir.resolve(c.migrations()).normalize());
    } catch (IOException e) {
      throw new IllegalArgumentException(
          "cannot read config file " + file + ": " + e.getMessage(), e);
    } catch (org.yaml.snakeyaml.error.YAMLException e) {
      throw new IllegalArgumentException(
          "config file " + file + " is not valid YAML: " + e.getMessage(), e);
    }
  }

  ManagerConfig parse(Object doc, String source) {
    return parse(doc, source, null);
  }

  /**
   * @param base the config file's directory: relative paths (TLS files, token files) resolve
   *     against it; null = the working directory
   */
  @SuppressWarnings("unchecked")
  ManagerConfig parse(Object doc, String source, Path base) {
    if (!(doc instanceof Map<?, ?> top)) {
      throw new IllegalArgumentException(source + ": expected a mapping at the top level");
    }
    unknownKeys(source, "", (Map<String, Object>) top, TOP);
    ManagerConfig.Builder b = ManagerConfig.builder();
    Map<String, Object> m =
        new EnvOverrides(env)
            .apply(
                (Map<String, Object>) top,
                TOP,
                Map.of("shards", SHARD, "channels", CHANNEL_SCALARS));
    for (ManagerSetting<?> setting : ManagerSettings.ALL) {
      if (m.containsKey(setting.name())) {
        set(b, setting, str(m, setting.name()), source);
      }
    }
    bind(m, "grpc", source, b::grpcHost, b::grpcPort);
    bind(m, "http", source, b::httpHost, b::httpPort);
    b.security(
        new SecurityConfigParser((k, v) -> interpolate(k, String.valueOf(v)), env, base, source)
            .parse(m));
    Object shards = m.get("shards");
    if (!(shards instanceof List<?> list)) {
      throw new IllegalArgumentException(source + ": 'shards' must be a list of shards");
    }
    for (Object o : list) {
      if (!(o instanceof Map<?, ?> sm)) {
        throw new IllegalArgumentException(source + ": each entry of 'shards' must be a mapping");
      }
      Map<String, Object> s = (Map<String, Object>) sm;
      unknownKeys(source, "shards[].", s, SHARD);
      b.shard(
          new ShardConfig(
              str(s, "name"),
              str(s, "url"),
              s.containsKey("user") ? str(s, "user") : null,
              s.containsKey("password") ? str(s, "password") : null,
              s.containsKey("pool_size") ? integer(s, "pool_size") : ShardConfig.DEFAULT_POOL_SIZE,
              keyRange(s),
              s.containsKey("binlog")
                  ? BinlogMode.parse(str(s, "name"), str(s, "binlog"))
                  : BinlogMode.AUTO));
    }
    Object limits = m.get("tenant_limits");
    if (limits != null) {
      if (!(limits instanceof List<?> ll)) {
        throw new IllegalArgumentException(source + ": 'tenant_limits' must be a list");
      }
      for (Object o : ll) {
        if (!(o instanceof Map<?, ?> tm)) {
          throw new IllegalArgumentException(
              source + ": each entry of 'tenant_limits' must be a mapping");
        }
        Map<String, Object> t = (Map<String, Object>) tm;
        unknownKeys(source, "tenant_limits[].", t, TENANT_LIMIT);
        try {
          b.tenantLimit(
              new TenantLimit(
                  str(t, "queue"),
                  str(t, "tenant"),
                  t.containsKey("cache_share") ? percent(t, "cache_share") : null,
                  t.containsKey("max_in_flight") ? integer(t, "max_in_flight") : null,
                  t.containsKey("max_rate") ? integer(t, "max_rate") : null,
                  t.containsKey("burst") ? integer(t, "burst") : null));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(source + ": " + e.getMessage(), e);
        }
      }
    }
    ChannelSections sections = new ChannelSections(this);
    sections.channels(m.get("channels"), source, b);
    sections.queues(m.get("queues"), source, b);
    try {
      return b.build();
    } catch (IllegalArgumentException e) {
      if (e.getMessage() != null && e.getMessage().startsWith("queues.")) {
        throw new IllegalArgumentException(source + ": " + e.getMessage(), e);
      }
      throw e;
    }
  }

  /** Sets {@code setting} from its text; an error names the source and the setting. */
  private static <T> void set(
      ManagerConfig.Builder b, ManagerSetting<T> setting, String text, String source) {
    T value;
    try {
      value = setting.parse(text);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(source + ": " + e.getMessage(), e);
    }
    b.set(setting, value);
  }

  /**
   * {@code grpc_bind} / {@code http_bind}: "host:port", "host" or ":port" (IPv6 in brackets), as
   * one setting instead of {@code *_host} and {@code *_port}; giving both forms is an error.
   */
  private void bind(
      Map<String, Object> m,
      String server,
      String source,
      java.util.function.Consumer<String> host,
      java.util.function.IntConsumer port) {
    String key = server + "_bind";
    if (!m.containsKey(key)) {
      return;
    }
    if (m.containsKey(server + "_host") || m.containsKey(server + "_port")) {
      throw new IllegalArgumentException(
          source + ": give " + key + " or " + server + "_host/" + server + "_port, not both");
    }
    String v = str(m, key).strip();
    int colon = v.lastIndexOf(':');
    String h = v;
    if (colon >= 0 && (v.indexOf(':') == colon || v.contains("]:"))) {
      h = v.substring(0, colon);
      String p = v.substring(colon + 1);
      try {
        port.accept(Integer.parseInt(p));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(
            source + ": " + key + " must be host:port, host or :port, was '" + v + "'");
      }
    }
    h = h.startsWith("[") && h.endsWith("]") ? h.substring(1, h.length() - 1) : h;
    if (!h.isEmpty()) {
      host.accept(h);
    }
  }

  private int percent(Map<String, Object> m, String key) {
    String v = str(m, key);
    String n = v == null ? "" : v.strip();
    n = n.endsWith("%") ? n.substring(0, n.length() - 1).strip() : n;
    try {
      return Integer.parseInt(n);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "tenant_limits[tenant="
              + str(m, "tenant")
              + "]: "
              + key
              + " must be a percentage such as 50%, was '"
              + v
              + "'");
    }
  }

  private KeyRange keyRange(Map<String, Object> s) {
    if (!s.containsKey("key_range")) {
      return KeyRange.ALL;
    }
    try {
      return KeyRange.parse(str(s, "key_range"));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "shards[" + str(s, "name") + "].key_range: " + e.getMessage(), e);
    }
  }

  static void unknownKeys(String source, String prefix, Map<String, Object> m, Set<String> known) {
    for (String k : m.keySet()) {
      if (!known.contains(k)) {
        throw new IllegalArgumentException(
            source
                + ": unknown setting '"
                + prefix
                + k
                + "' (known: "
                + String.join(", ", known.stream().sorted().toList())
                + ")");
      }
    }
  }

  String str(Map<String, Object> m, String key) {
    Object v = m.get(key);
    return v == null ? null : interpolate(key, String.valueOf(v));
  }

  private int integer(Map<String, Object> m, String key) {
    String v = str(m, key);
    try {
      return Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(key + " must be a whole number, was '" + v + "'");
    }
  }

  /** Replaces ${NAME} and ${NAME:-default} from the environment. */
  String interpolate(String key, String value) {
    Matcher mt = VAR.matcher(value);
    StringBuilder sb = new StringBuilder();
    while (mt.find()) {
      String v = env.apply(mt.group(1));
      if (v == null) {
        if (mt.group(2) == null) {
          throw new IllegalArgumentException(
              key + " refers to environment variable " + mt.group(1) + ", which is not set");
        }
        v = mt.group(3);
      }
      mt.appendReplacement(sb, Matcher.quoteReplacement(v));
    }
    mt.appendTail(sb);
    return sb.toString();
  }
}
