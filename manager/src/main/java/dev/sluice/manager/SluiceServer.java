package dev.sluice.manager;

import dev.sluice.core.QueueEngine;
import dev.sluice.core.shard.ShardManager;
import dev.sluice.manager.admin.AdminActions;
import dev.sluice.manager.admin.CountsCache;
import dev.sluice.manager.channel.ChannelOutlets;
import dev.sluice.manager.config.ManagerConfig;
import dev.sluice.manager.grpc.AdminService;
import dev.sluice.manager.grpc.SluiceService;
import dev.sluice.manager.http.StatusHttpServer;
import dev.sluice.manager.http.StatusReport;
import dev.sluice.manager.metrics.ProcessMetrics;
import dev.sluice.manager.metrics.Telemetry;
import dev.sluice.manager.security.ServerSecurity;
import dev.sluice.proto.v1.SluiceGrpc;
import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.grpc.MetricCollectingServerInterceptor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Sluice manager process: the {@link QueueEngine} behind a gRPC server with health and
 * reflection, plus an HTTP port ({@link StatusHttpServer}: status page, {@code /metrics}, {@code
 * /healthz}, {@code /readyz}). {@link #start()} and {@link #stop()} are idempotent. Start: HTTP (so
 * that health answers while starting), shards (pools, discovery), gRPC, then shard leases (so a
 * shard is only taken once receivers can reach it), then ready. Stop goes in a fixed order with
 * bounded waits: not ready and health NOT_SERVING, queues drain and stop, the gRPC server, then
 * HTTP.
 */
public final class SluiceServer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(SluiceServer.class);

  private final ManagerConfig config;
  private final QueueEngine engine;
  private final ChannelOutlets channels;
  private final AdminActions admin;
  private final HealthStatusManager health = new HealthStatusManager();
  private final MeterRegistry registry;
  private final Telemetry telemetry;
  private final StatusHttpServer http;
  private final ServerSecurity security;
  private volatile List<String> warnings = List.of();
  private Server server;
  private ProcessMetrics processMetrics;
  private boolean started;
  private boolean stopped;

  /** Ready: started and not stopping (read by /readyz from HTTP threads). */
  private volatile boolean ready;

  private volatile String state = "starting";

  /**
   * Table counts for QueueStats and the admin API's ListQueues: one cache, so that the two never
   * scan the same table twice within its second.
   */
  private final CountsCache counts = new CountsCache(System::nanoTime);

  public SluiceServer(ManagerConfig config, Clock clock, MeterRegistry registry) {
    this.config = config;
    this.registry = registry;
    this.engine = new QueueEngine(config.engine(), clock, registry);
    this.channels = new ChannelOutlets(config, engine, registry);
    engine.listen(channels);
    this.admin = new AdminActions(engine, registry, counts);
    this.telemetry = new Telemetry(engine, registry, clock);
    this.security =
        new ServerSecurity(
            config.security(),
            registry,
            shard -> engine.shard(shard).map(ShardManager::deliveryKey).orElse(null));
    this.http =
        new StatusHttpServer(
            config.httpHost(),
            config.httpPort(),
            registry,
            () ->
                StatusReport.of(config.managerId(), ready, state, engine, telemetry, clock)
                    .withWarnings(warnings)
                    .withChannels(channels.status()),
            new StatusHttpServer.Readiness() {
              @Override
              public boolean ready() {
                return SluiceServer.this.ready();
              }

              @Override
              public String state() {
                Map<String, String> faults = engine.faults();
                return faults.isEmpty() ? state : "shard not served: " + faults;
              }
            });
    http.secure(
        security.tls() == null ? null : security.tls().sslContext(),
        security.tls() != null && security.tls().config().mutual(),
        security.tls() != null && security.tls().config().requireClientCert(),
        security.http());
    http.admin(admin); // the status page's operator endpoints, the same facade as gRPC
    engine.onHealthChange(this::refreshHealth);
  }

  /** gRPC health follows readiness: NOT_SERVING while a shard is given up for a fault. */
  private void refreshHealth() {
    if (!ready) {
      return; // starting (start sets it) or stopping (terminal)
    }
    ServingStatus s = engine.faults().isEmpty() ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
    health.setStatus("", s);
    health.setStatus(SluiceGrpc.SERVICE_NAME, s);
  }

  public synchronized SluiceServer start() {
    if (started) {
      return this;
    }
    started = true;
    try {
      warnings = security.checkExposure(config.grpcHost(), config.httpHost());
    } catch (IllegalStateException e) {
      security.close();
      throw e;
    }
    processMetrics = new ProcessMetrics(registry);
    http.start();
    engine.start();
    try {
      server =
          security
              .grpcServer(new InetSocketAddress(config.grpcHost(), config.grpcPort()))
              .addService(new SluiceService(engine, security.guard(), channels, counts))
              .addService(new AdminService(admin))
              .addService(health.getHealthService())
              .addService(ProtoReflectionServiceV1.newInstance())
              // grpc_server_processing_duration_seconds, grpc_server_requests_received_messages,
              // grpc_server_responses_sent_messages, by service, method and status code.
              .intercept(new MetricCollectingServerInterceptor(registry))
              .maxInboundMessageSize(4 * 1024 * 1024)
              // A receiver host that vanished (no FIN or RST) is found by these pings: its
              // streams break and their events are released, instead of waiting out ack_wait.
              .keepAliveTime(config.grpcKeepaliveTime().toMillis(), TimeUnit.MILLISECONDS)
              .keepAliveTimeout(config.grpcKeepaliveTimeout().toMillis(), TimeUnit.MILLISECONDS)
              // Receivers may ping this often: half the Java SDK's 10 s, so that a ping a little
              // early is no strike against it.
              .permitKeepAliveTime(5, TimeUnit.SECONDS)
              .permitKeepAliveWithoutCalls(true)
              .build()
              .start();
    } catch (IOException e) {
      engine.stop();
      channels.close();
      http.stop();
      security.close();
      throw new UncheckedIOException(
          "cannot listen on " + config.grpcHost() + ":" + config.grpcPort() + ": " + e.getMessage(),
          e);
    }
    engine.lead(); // only now: a shard taken over must be reachable by receivers at once
    telemetry.start();
    state = "serving";
    ready = true;
    refreshHealth();
    log.info(
        "manager {} listening for receivers on {}:{}",
        config.managerId(),
        config.grpcHost(),
        port());
    return this;
  }

  /** The gRPC port actually bound (useful with port 0). */
  public int port() {
    return server.getPort();
  }

  /** The HTTP port actually bound (useful with http_port 0). */
  public int httpPort() {
    return http.port();
  }

  public QueueEngine engine() {
    return engine;
  }

  /** Every operator action, checked, bounded and audited (the Admin API, the status page). */
  public AdminActions admin() {
    return admin;
  }

  /** The channels queues publish to, and their figures. */
  public ChannelOutlets channels() {
    return channels;
  }

  /** The meter registry every meter of this manager is in; /metrics serves it when Prometheus. */
  public MeterRegistry registry() {
    return registry;
  }

  /** Started, not stopping, and no shard given up for a fault: what /readyz reports. */
  public boolean ready() {
    return ready && engine.faults().isEmpty();
  }

  public synchronized void stop() {
    if (!started || stopped) {
      return;
    }
    stopped = true;
    ready = false;
    state = "stopping";
    health.enterTerminalState();
    telemetry.stop(); // before the pools close: its queries would count as database errors
    if (processMetrics != null) {
      processMetrics.close();
    }
    engine.stop();
    channels.close();
    if (server == null) {
      return; // start failed before the gRPC server was up
    }
    server.shutdown();
    try {
      if (!server.awaitTermination(5, TimeUnit.SECONDS)) {
        log.warn("gRPC server did not stop in 5 s; forcing");
        server.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      server.shutdownNow();
    }
    http.stop();
    security.close();
    state = "stopped";
    log.info("manager {} stopped", config.managerId());
  }

  @Override
  public void close() {
    stop();
  }
}
