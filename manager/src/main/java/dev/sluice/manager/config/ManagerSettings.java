package dev.sluice.manager.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Every scalar setting of the manager's configuration, defined once ({@link ManagerSetting}): the
 * loader parses them from this list, the builder takes their defaults and checks their bounds from
 * it, {@link EnvOverrides} names their variables from it, and the README's table is rendered from
 * it ({@link #markdown()}; a test keeps the two equal). The settings that are lists or mappings
 * ({@code shards}, {@code tenant_limits}, {@code channels}, {@code queues}, {@code tls}, {@code
 * auth}) have their own parsers.
 */
public final class ManagerSettings {
  /** The line before the table in the README. */
  public static final String BEGIN =
      "<!-- manager settings: generated from ManagerSettings.ALL -->";

  /** The line after the table in the README. */
  public static final String END = "<!-- end of manager settings -->";

  private static final long NONE = Long.MAX_VALUE;

  public static final ManagerSetting<String> MANAGER_ID =
      text(
          "manager_id",
          null,
          "`<hostname>-<pid>-<random>`",
          "this process's name in logs and leases; two live processes with the same id are"
              + " refused: the second does not lead and says so in `/readyz`");

  public static final ManagerSetting<String> GRPC_HOST =
      text(
          "grpc_host",
          "127.0.0.1",
          null,
          "where receivers connect (health and reflection are served too); or `grpc_bind:"
              + " \"host:port\"` for both. Beyond loopback, see [Security](#security)");

  public static final ManagerSetting<Integer> GRPC_PORT =
      port("grpc_port", 7470, null, "the gRPC port; 0 picks a free one");

  public static final ManagerSetting<Duration> DISCOVERY_INTERVAL =
      duration(
          "discovery_interval",
          Duration.ofSeconds(5),
          Duration.ofMillis(100),
          null,
          null,
          "how often shards are searched for new or changed queue tables");

  public static final ManagerSetting<Duration> SHUTDOWN_TIMEOUT =
      duration(
          "shutdown_timeout",
          Duration.ofSeconds(10),
          Duration.ZERO,
          null,
          null,
          "bound on a graceful stop: half to let receivers finish, then held events are released");

  public static final ManagerSetting<String> HTTP_HOST =
      text(
          "http_host",
          "127.0.0.1",
          null,
          "where the [status page](#status-page-and-health), `/metrics`, `/healthz` and `/readyz`"
              + " are served; or `http_bind: \"host:port\"` for both");

  public static final ManagerSetting<Integer> HTTP_PORT =
      port(
          "http_port",
          null,
          "`7471`, or `0` when `grpc_port` is 0",
          "the HTTP port; 0 picks a free one (the default when `grpc_port` is 0, so that managers"
              + " on free ports never collide)");

  public static final ManagerSetting<Path> MIGRATIONS =
      new ManagerSetting<>(
          "migrations",
          ManagerSetting.Kind.PATH,
          Path.of("db", "migration"),
          "`db/migration`",
          0,
          0,
          null,
          "your Flyway migration directory, relative to the config file: where `sluice queue"
              + " create`/`alter` write and what `sluice migrate` applies");

  public static final ManagerSetting<Duration> LEASE_TTL =
      duration(
          "lease_ttl",
          Duration.ofSeconds(2),
          Duration.ofMillis(500),
          null,
          null,
          "how long a shard lease lasts unrenewed: about the longest a dead manager's shards go"
              + " undispatched ([why](#leases-and-failover))");

  public static final ManagerSetting<Duration> LEASE_RENEW =
      duration(
          "lease_renew",
          Duration.ofMillis(500),
          Duration.ofMillis(1),
          null,
          "at most half of `lease_ttl`",
          "how often leases are renewed and free ones sought");

  public static final ManagerSetting<Duration> FORGET_DELAY =
      duration(
          "forget_delay",
          Duration.ZERO,
          Duration.ZERO,
          null,
          null,
          "how long a receiver id keeps its place in the tenants' shuffle shards after its last"
              + " stream drops");

  public static final ManagerSetting<Duration> GRPC_KEEPALIVE_TIME =
      duration(
          "grpc_keepalive_time",
          Duration.ofSeconds(10),
          Duration.ofSeconds(10),
          Duration.ofHours(1),
          null,
          "the manager pings a receiver connection silent this long (gRPC allows no less than"
              + " 10s) and closes it if the ping goes unanswered for `grpc_keepalive_timeout`: a"
              + " receiver host that vanished (no FIN or RST) has its events released within about"
              + " their sum, not after `ack_wait`. The Java SDK pings every 10 s with a 5 s timeout"
              + " too, so it leaves a vanished manager as fast");

  public static final ManagerSetting<Duration> GRPC_KEEPALIVE_TIMEOUT =
      duration(
          "grpc_keepalive_timeout",
          Duration.ofSeconds(5),
          Duration.ofMillis(100),
          Duration.ofHours(1),
          null,
          "how long that ping may go unanswered before the connection is closed and its events"
              + " are released");

  /** Every scalar setting, in the order the README lists them. */
  public static final List<ManagerSetting<?>> ALL =
      List.of(
          MANAGER_ID,
          GRPC_HOST,
          GRPC_PORT,
          HTTP_HOST,
          HTTP_PORT,
          DISCOVERY_INTERVAL,
          SHUTDOWN_TIMEOUT,
          MIGRATIONS,
          LEASE_TTL,
          LEASE_RENEW,
          FORGET_DELAY,
          GRPC_KEEPALIVE_TIME,
          GRPC_KEEPALIVE_TIMEOUT);

  private ManagerSettings() {}

  /** The setting of that name, or null. */
  public static ManagerSetting<?> named(String name) {
    return ALL.stream().filter(s -> s.name().equals(name)).findFirst().orElse(null);
  }

  /** The README's table of these settings, ending in a newline. */
  public static String markdown() {
    StringBuilder sb = new StringBuilder();
    sb.append("| setting | environment variable | default | bounds | meaning |\n");
    sb.append("|---|---|---|---|---|\n");
    for (ManagerSetting<?> s : ALL) {
      sb.append("| `")
          .append(s.name())
          .append("` | `")
          .append(s.env())
          .append("` | ")
          .append(s.shownDefaultText())
          .append(" | ")
          .append(s.kind() == ManagerSetting.Kind.TEXT ? "" : s.bounds())
          .append(s.boundsNote() == null ? "" : ", " + s.boundsNote())
          .append(" | ")
          .append(s.doc())
          .append(" |\n");
    }
    return sb.toString();
  }

  private static ManagerSetting<String> text(
      String name, String dflt, String shownDefault, String doc) {
    return new ManagerSetting<>(
        name, ManagerSetting.Kind.TEXT, dflt, shownDefault, 0, 0, null, doc);
  }

  private static ManagerSetting<Integer> port(
      String name, Integer dflt, String shownDefault, String doc) {
    return new ManagerSetting<>(
        name, ManagerSetting.Kind.PORT, dflt, shownDefault, 0, 65535, null, doc);
  }

  private static ManagerSetting<Duration> duration(
      String name, Duration dflt, Duration min, Duration max, String boundsNote, String doc) {
    return new ManagerSetting<>(
        name,
        ManagerSetting.Kind.DURATION,
        dflt,
        null,
        min.toMillis(),
        max == null ? NONE : max.toMillis(),
        boundsNote,
        doc);
  }

  public static void main(String[] args) {
    System.out.print(markdown());
  }
}
