package dev.sluice.manager.cli;

import dev.sluice.manager.SluiceServer;
import dev.sluice.manager.config.ConfigLoader;
import dev.sluice.manager.config.ManagerConfig;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code sluice serve --config FILE}: runs a manager until SIGTERM/SIGINT. */
@Command(
    name = "serve",
    mixinStandardHelpOptions = true,
    description = "Run a queue manager for the shards in the config file until stopped (SIGTERM).")
public final class ServeCommand implements Callable<Integer> {
  @Option(
      names = {"-c", "--config"},
      required = true,
      paramLabel = "FILE",
      description = "YAML config: shards, ports, intervals. $${VAR} is read from the environment.")
  Path config;

  @Override
  public Integer call() throws Exception {
    ManagerConfig cfg = ConfigLoader.fromEnvironment().load(config);
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
