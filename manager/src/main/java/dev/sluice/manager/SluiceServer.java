package dev.sluice.manager;

import dev.sluice.manager.config.ManagerConfig;
import dev.sluice.manager.grpc.SluiceService;
import dev.sluice.proto.v1.SluiceGrpc;
import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Sluice manager process: the {@link QueueEngine} behind a gRPC server with health and
 * reflection. {@link #start()} and {@link #stop()} are idempotent; stop goes in a fixed order with
 * bounded waits: health NOT_SERVING, queues drain and stop, then the gRPC server.
 */
public final class SluiceServer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(SluiceServer.class);

  private final ManagerConfig config;
  private final QueueEngine engine;
  private final HealthStatusManager health = new HealthStatusManager();
  private Server server;
  private boolean started;
  private boolean stopped;

  public SluiceServer(ManagerConfig config, Clock clock, MeterRegistry registry) {
    this.config = config;
    this.engine = new QueueEngine(config, clock, registry);
  }

  public synchronized SluiceServer start() {
    if (started) {
      return this;
    }
    started = true;
    engine.start();
    try {
      server =
          NettyServerBuilder.forAddress(new InetSocketAddress(config.grpcHost(), config.grpcPort()))
              .addService(new SluiceService(engine))
              .addService(health.getHealthService())
              .addService(ProtoReflectionServiceV1.newInstance())
              .maxInboundMessageSize(4 * 1024 * 1024)
              .permitKeepAliveTime(10, TimeUnit.SECONDS)
              .permitKeepAliveWithoutCalls(true)
              .build()
              .start();
    } catch (IOException e) {
      engine.stop();
      throw new UncheckedIOException(
          "cannot listen on " + config.grpcHost() + ":" + config.grpcPort() + ": " + e.getMessage(),
          e);
    }
    health.setStatus("", ServingStatus.SERVING);
    health.setStatus(SluiceGrpc.SERVICE_NAME, ServingStatus.SERVING);
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

  public QueueEngine engine() {
    return engine;
  }

  public synchronized void stop() {
    if (!started || stopped) {
      return;
    }
    stopped = true;
    health.enterTerminalState();
    engine.stop();
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
    log.info("manager {} stopped", config.managerId());
  }

  @Override
  public void close() {
    stop();
  }
}
