package dev.sluice.manager.cli;

import dev.sluice.manager.SluiceServer;
import dev.sluice.manager.config.ManagerConfig;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code sluice serve [--config FILE]}: runs a manager until SIGTERM/SIGINT, with a Prometheus
 * registry so that {@code /metrics} answers.
 */
@Command(
    name = "serve",
    mixinStandardHelpOptions = true,
    description =
        "Run a queue manager for the shards in the config file until stopped (SIGTERM): gRPC for"
            + " receivers (grpc_port, 7470), status page and /metrics (http_port, 7471).")
public final class ServeCommand implements Callable<Integer> {
  @Mixin ConfigOption config;

  @Override
  public Integer call() throws Exception {
    ManagerConfig cfg = config.load();
    SluiceServer server =
        new SluiceServer(
            cfg, Clock.systemUTC(), new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  server.stop();
                  stopped.countDown();
                },
                "sluice-shutdown"));
    server.start();
    stopped.await();
    return 0;
  }
}
