package dev.sluice.manager.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.sluice.manager.admin.AdminActions;
import dev.sluice.manager.json.Json;
import dev.sluice.manager.security.HttpAccess;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The manager's HTTP port, on the JDK's built-in server:
 *
 * <ul>
 *   <li>{@code /} — the live status page (HTML, JS and CSS from this package's resources)
 *   <li>{@code /api/status} — the JSON behind it ({@link StatusReport})
 *   <li>{@code /metrics} — Prometheus text format, when the registry is a {@link
 *       PrometheusMeterRegistry}; 503 otherwise
 *   <li>{@code /api/queues/...} — the operator's reads and actions ({@code AdminHttp}), when an
 *       {@link AdminActions} was given; actions are POSTs guarded by {@code CrossSite}
 *   <li>{@code /healthz} — 200 while the process runs; {@code /readyz} — 200 when started and not
 *       stopping, else 503
 * </ul>
 *
 * <p>Threads: requests run on up to {@link #THREADS} daemon threads, {@code sluice-http-N}, with at
 * most {@link #QUEUED} more waiting (beyond that a connection is closed at once). The JDK server
 * reads a request on the thread that will handle it, so a client that sends its request slowly
 * holds a thread: each request must arrive within {@link #REQUEST_SECONDS} and its answer be taken
 * within {@link #RESPONSE_SECONDS}, or the server closes the connection (two slow clients used to
 * take both threads and hang /healthz). Handlers only read published snapshots and meters, except
 * the operator's {@code /api/queues/...} calls: each reads or changes the database once, bounded by
 * {@link AdminActions}' page and id limits. {@link #start()} and {@link #stop()} are idempotent.
 *
 * <p>The JDK server takes those bounds from the system properties {@code
 * sun.net.httpserver.maxReqTime} and {@code maxRspTime}, read once per process when its first
 * server starts; they are set here unless the operator set them (with {@code -D}).
 */
public final class StatusHttpServer {
  private static final Logger log = LoggerFactory.getLogger(StatusHttpServer.class);

  /** Where the page's files live on the classpath. */
  static final String RESOURCES = "/dev/sluice/manager/http/";

  /** Whether the manager is ready, and if not, why (e.g. "starting", "stopping"). */
  public interface Readiness {
    boolean ready();

    String state();
  }

  /** The most requests handled at once. */
  static final int THREADS = 8;

  /** The most requests waiting for a thread. */
  static final int QUEUED = 64;

  /** The longest a client may take to send its request. */
  static final int REQUEST_SECONDS = 5;

  /** The longest a client may take to read its answer (a large /metrics too). */
  static final int RESPONSE_SECONDS = 30;

  static {
    setUnlessGiven("sun.net.httpserver.maxReqTime", REQUEST_SECONDS);
    setUnlessGiven("sun.net.httpserver.maxRspTime", RESPONSE_SECONDS);
  }

  private static void setUnlessGiven(String property, int seconds) {
    if (System.getProperty(property) == null) {
      System.setProperty(property, Integer.toString(seconds));
    }
  }

  private final String host;
  private final int port;
  private final MeterRegistry registry;
  private final Supplier<StatusReport> report;
  private final Readiness readiness;
  private HttpServer server;
  private ExecutorService executor;
  private SSLContext ssl;
  private boolean wantClientCert;
  private boolean needClientCert;
  private HttpAccess access = HttpAccess.open();
  private AdminHttp admin;

  /**
   * Serves the operator's endpoints over {@code actions} (without it, {@code /api/queues/...} is
   * 404 and the page shows no queue actions). Call before {@link #start()}.
   */
  public synchronized StatusHttpServer admin(AdminActions actions) {
    this.admin = actions == null ? null : new AdminHttp(actions);
    return this;
  }

  /**
   * Serves HTTPS with {@code ssl} (null = plain HTTP) and checks each request with {@code access}.
   * Call before {@link #start()}.
   */
  public synchronized StatusHttpServer secure(
      SSLContext ssl, boolean wantClientCert, HttpAccess access) {
    return secure(ssl, wantClientCert, false, access);
  }

  /**
   * As {@link #secure(SSLContext, boolean, HttpAccess)}; with {@code needClientCert} (tls {@code
   * client_auth: require}) a client without a certificate of the configured CA fails the handshake.
   */
  public synchronized StatusHttpServer secure(
      SSLContext ssl, boolean wantClientCert, boolean needClientCert, HttpAccess access) {
    this.ssl = ssl;
    this.wantClientCert = wantClientCert;
    this.needClientCert = needClientCert;
    this.access = access;
    return this;
  }

  public StatusHttpServer(
      String host,
      int port,
      MeterRegistry registry,
      Supplier<StatusReport> report,
      Readiness readiness) {
    this.host = host;
    this.port = port;
    this.registry = registry;
    this.report = report;
    this.readiness = readiness;
  }

  public synchronized StatusHttpServer start() {
    if (server != null) {
      return this;
    }
    try {
      server =
          SecureHttp.create(
              new InetSocketAddress(host, port), 64, ssl, wantClientCert, needClientCert);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot listen for HTTP on " + host + ":" + port + ": " + e.getMessage(), e);
    }
    AtomicInteger n = new AtomicInteger();
    // The JDK server closes a connection whose request the executor refuses.
    executor =
        new ThreadPoolExecutor(
            THREADS,
            THREADS,
            30,
            TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(QUEUED),
            r -> {
              Thread t = new Thread(r, "sluice-http-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            },
            new ThreadPoolExecutor.AbortPolicy());
    ((ThreadPoolExecutor) executor).allowCoreThreadTimeOut(true);
    server.setExecutor(executor);
    server.createContext("/", this::handle);
    server.start();
    log.info(
        "status page and /metrics on {}://{}:{}/", ssl == null ? "http" : "https", host, port());
    return this;
  }

  /** The port actually bound (useful with port 0). */
  public int port() {
    return server.getAddress().getPort();
  }

  public synchronized void stop() {
    if (server == null) {
      return;
    }
    server.stop(0);
    executor.shutdownNow();
    try {
      executor.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    server = null;
  }

  private void handle(HttpExchange x) throws IOException {
    try (x) {
      String method = x.getRequestMethod();
      String path = x.getRequestURI().getPath();
      boolean operator = admin != null && path.startsWith(AdminHttp.PREFIX);
      if (!method.equals("GET") && !method.equals("HEAD") && !(operator && method.equals("POST"))) {
        x.getResponseHeaders().set("Allow", operator ? "GET, POST" : "GET, HEAD");
        send(x, 405, "text/plain", "only GET and HEAD are served here\n");
        return;
      }
      if (!SecureHttp.admit(x, path, access)) {
        return;
      }
      if (operator) {
        admin.handle(
            x,
            path,
            access.principal(
                x.getRequestHeaders().getFirst("Authorization"),
                x instanceof com.sun.net.httpserver.HttpsExchange h ? h.getSSLSession() : null));
        return;
      }
      switch (path) {
        case "/healthz" -> send(x, 200, "text/plain", "ok\n");
        case "/readyz" ->
            send(
                x,
                readiness.ready() ? 200 : 503,
                "text/plain",
                (readiness.ready() ? "ready" : "not ready: " + readiness.state()) + "\n");
        case "/metrics" -> metrics(x);
        case "/api/status" ->
            send(x, 200, "application/json", Json.write(report.get().toMap()) + "\n");
        case "/", "/index.html" -> resource(x, "index.html", "text/html");
        case "/status.js" -> resource(x, "status.js", "text/javascript");
        case "/actions.js" -> resource(x, "actions.js", "text/javascript");
        case "/status.css" -> resource(x, "status.css", "text/css");
        default -> send(x, 404, "text/plain", "not found: " + path + "\n");
      }
    } catch (RuntimeException e) {
      log.warn("HTTP {} failed: {}", x.getRequestURI(), e.toString(), e);
      send(x, 500, "text/plain", "internal error: " + e + "\n");
    }
  }

  private void metrics(HttpExchange x) throws IOException {
    if (registry instanceof PrometheusMeterRegistry p) {
      send(x, 200, "text/plain; version=0.0.4", p.scrape());
    } else {
      send(
          x,
          503,
          "text/plain",
          "/metrics is unavailable: this manager was started with a "
              + registry.getClass().getSimpleName()
              + ", not a PrometheusMeterRegistry (sluice serve uses one).\n");
    }
  }

  private void resource(HttpExchange x, String name, String type) throws IOException {
    try (var in = StatusHttpServer.class.getResourceAsStream(RESOURCES + name)) {
      if (in == null) {
        send(x, 404, "text/plain", "missing resource " + name + "\n");
        return;
      }
      send(x, 200, type, new String(in.readAllBytes(), StandardCharsets.UTF_8));
    }
  }

  static void send(HttpExchange x, int status, String type, String body) throws IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    x.getResponseHeaders().set("Content-Type", type + "; charset=utf-8");
    x.getResponseHeaders().set("Cache-Control", "no-store");
    boolean head = x.getRequestMethod().equals("HEAD");
    x.sendResponseHeaders(status, head ? -1 : b.length);
    if (!head) {
      try (OutputStream out = x.getResponseBody()) {
        out.write(b);
      }
    }
  }
}
