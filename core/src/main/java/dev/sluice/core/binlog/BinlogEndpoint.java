package dev.sluice.core.binlog;

import com.github.shyiko.mysql.binlog.BinaryLogClient;
import com.github.shyiko.mysql.binlog.network.SSLMode;
import dev.sluice.core.config.ShardConfig;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Where the binlog of a shard is read from: the first host of its JDBC URL, with the shard's user
 * and password (or the URL's {@code user} and {@code password} parameters), and TLS when the URL
 * asks for it.
 *
 * @param tls whether the URL asks for TLS ({@code sslMode} other than DISABLED, {@code
 *     useSSL=true}, or {@code sslmode} / {@code useSsl} of MariaDB's driver)
 */
record BinlogEndpoint(String host, int port, String user, String password, boolean tls) {
  static final int DEFAULT_PORT = 3306;

  /** The shard's endpoint; an IllegalArgumentException says what in the URL could not be read. */
  static BinlogEndpoint of(ShardConfig shard) {
    String url = shard.jdbcUrl();
    int slashes = url.indexOf("//");
    if (slashes < 0) {
      throw new IllegalArgumentException("its URL names no host (jdbc:mysql://host:port/db)");
    }
    String rest = url.substring(slashes + 2);
    int end = rest.length();
    for (char c : new char[] {'/', '?'}) {
      int i = rest.indexOf(c);
      if (i >= 0 && i < end) {
        end = i;
      }
    }
    String hosts = rest.substring(0, end);
    String first = hosts.split(",")[0].trim();
    if (first.isEmpty() || first.startsWith("(") || first.startsWith("address=")) {
      throw new IllegalArgumentException(
          "its URL's host list '" + hosts + "' is not host:port (the binlog client needs one)");
    }
    String host = first;
    int port = DEFAULT_PORT;
    if (first.startsWith("[")) {
      int close = first.indexOf(']');
      host = first.substring(1, close);
      if (close + 1 < first.length() && first.charAt(close + 1) == ':') {
        port = Integer.parseInt(first.substring(close + 2));
      }
    } else if (first.lastIndexOf(':') > 0) {
      int colon = first.lastIndexOf(':');
      host = first.substring(0, colon);
      port = Integer.parseInt(first.substring(colon + 1));
    }
    String query = rest.contains("?") ? rest.substring(rest.indexOf('?') + 1) : "";
    String user = shard.user();
    String password = shard.password();
    boolean tls = false;
    for (String pair : query.split("&")) {
      int eq = pair.indexOf('=');
      if (eq <= 0) {
        continue;
      }
      String key = pair.substring(0, eq).toLowerCase(Locale.ROOT);
      String value = URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
      switch (key) {
        case "user" -> user = user == null ? value : user;
        case "password" -> password = password == null ? value : password;
        case "sslmode" -> tls = !value.equalsIgnoreCase("disabled") && !value.equals("disable");
        case "usessl" -> tls = Boolean.parseBoolean(value);
        default -> {}
      }
    }
    return new BinlogEndpoint(host, port, user == null ? "" : user, password, tls);
  }

  /**
   * A replication client for this endpoint: a random {@code server_id} (unique among the server's
   * replicas: two clients with one id would cut each other off), no automatic reconnect (the
   * follower reconnects itself, from the current position), TLS when the URL asks for it.
   */
  BinaryLogClient client() {
    BinaryLogClient c = new BinaryLogClient(host, port, user, password);
    c.setServerId(ThreadLocalRandom.current().nextLong(1L << 16, 1L << 31));
    c.setKeepAlive(false);
    c.setSSLMode(tls ? SSLMode.REQUIRED : SSLMode.DISABLED);
    return c;
  }

  @Override
  public String toString() {
    return host + ":" + port;
  }
}
