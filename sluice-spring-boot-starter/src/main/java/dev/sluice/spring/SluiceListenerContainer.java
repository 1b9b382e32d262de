package dev.sluice.spring;

import dev.sluice.receiver.ReceiverStats;
import dev.sluice.receiver.SluiceReceiver;
import dev.sluice.receiver.SluiceReceiverBuilder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Runs one {@link SluiceReceiver} per {@link SluiceListener} method, started and stopped with the
 * application context ({@link SmartLifecycle}).
 *
 * <p>Stop: every receiver closes at once, on its own thread: it tells its managers to send nothing
 * new, lets running handlers finish within {@code sluice.receiver.shutdown-timeout} (then
 * interrupts them), and delivers their acks. The callback runs when all are closed, so Spring's
 * shutdown (and Kubernetes' grace period) waits for the slowest handler, not the sum.
 *
 * <p>Threads: {@link #start} and {@link #stop} run on Spring's lifecycle thread, under this
 * object's lock; the receivers' own threads run the handlers.
 */
public class SluiceListenerContainer implements SmartLifecycle {
  private static final Logger log = LoggerFactory.getLogger(SluiceListenerContainer.class);

  /** Stops before the web server's graceful shutdown phase ends, and before the DataSource. */
  public static final int PHASE = Integer.MAX_VALUE - 2048;

  private final SluiceListenerRegistrar registrar;
  private final SluiceProperties properties;
  private final Function<ListenerEndpoint, ListenerInvoker> invokers;
  private final ListenerObserver observer;
  // Written under this object's lock (start, stop); read without it by health and meters.
  private final Map<String, SluiceReceiver> receivers = new ConcurrentHashMap<>();
  private volatile boolean running;

  SluiceListenerContainer(
      SluiceListenerRegistrar registrar,
      SluiceProperties properties,
      Function<ListenerEndpoint, ListenerInvoker> invokers,
      ListenerObserver observer) {
    this.registrar = registrar;
    this.properties = properties;
    this.invokers = invokers;
    this.observer = observer;
  }

  @Override
  public synchronized void start() {
    if (running) {
      return;
    }
    List<ListenerEndpoint> endpoints = registrar.endpoints();
    if (!endpoints.isEmpty()) {
      checkSecurity();
    }
    try {
      for (ListenerEndpoint e : endpoints) {
        SluiceProperties.Listener over =
            properties.getListeners().getOrDefault(e.queue(), new SluiceProperties.Listener());
        if (Boolean.FALSE.equals(over.getEnabled())) {
          log.info("@SluiceListener {} is disabled by sluice.listeners", e.describe());
          continue;
        }
        SluiceReceiver r = receiver(e, over).start();
        receivers.put(e.queue(), r);
        String queue = e.queue();
        observer.started(queue, () -> stats(queue));
        log.info(
            "@SluiceListener {} receiving from {} as {}",
            e.describe(),
            properties.getReceiver().getTargets(),
            r.receiverId());
      }
    } catch (RuntimeException ex) {
      closeAll();
      throw ex;
    }
    running = true;
  }

  private SluiceReceiver receiver(ListenerEndpoint e, SluiceProperties.Listener over) {
    SluiceProperties.Receiver p = properties.getReceiver();
    int concurrency =
        e.concurrency() > 0
            ? e.concurrency()
            : over.getConcurrency() != null ? over.getConcurrency() : p.getConcurrency();
    Integer maxInFlight =
        over.getMaxInFlight() != null ? over.getMaxInFlight() : p.getMaxInFlight();
    ListenerInvoker invoker = invokers.apply(e);
    String queue = e.queue();
    SluiceReceiverBuilder b =
        SluiceReceiver.builder()
            .targets(p.getTargets())
            .queue(queue)
            .concurrency(concurrency)
            .keyRange(p.getKeyRange())
            .reconnectBackoff(p.getReconnectMin(), p.getReconnectMax())
            .shutdownTimeout(p.getShutdownTimeout())
            .handler(invoker);
    observer.building(queue, b);
    if (maxInFlight != null) {
      b.maxInFlight(maxInFlight);
    }
    if (p.getToken() != null && !p.getToken().isBlank()) {
      b.token(p.getToken());
    }
    SluiceProperties.Tls tls = p.getTls();
    if (tls.getCaFile() != null) {
      b.tls(Path.of(tls.getCaFile()));
    }
    if (tls.getCertFile() != null) {
      b.clientCertificate(Path.of(tls.getCertFile()), Path.of(tls.getKeyFile()));
    }
    if (p.getReceiverId() != null && !p.getReceiverId().isBlank()) {
      b.receiverId(p.getReceiverId() + "-" + queue);
    }
    try {
      return b.build();
    } catch (IllegalArgumentException ex) {
      throw new IllegalStateException(
          "@SluiceListener " + e.describe() + ": bad sluice.receiver settings: " + ex.getMessage(),
          ex);
    }
  }

  /**
   * The security settings hang together: a client certificate needs its key and a CA to trust the
   * managers by; a token is sent only over TLS, never in plain text to whoever listens.
   */
  private void checkSecurity() {
    SluiceProperties.Receiver p = properties.getReceiver();
    SluiceProperties.Tls tls = p.getTls();
    if ((tls.getCertFile() == null) != (tls.getKeyFile() == null)) {
      throw new IllegalStateException(
          "sluice.receiver.tls.cert-file and sluice.receiver.tls.key-file go together: set both"
              + " or neither");
    }
    if (tls.getCertFile() != null && tls.getCaFile() == null) {
      throw new IllegalStateException(
          "sluice.receiver.tls.cert-file is set without sluice.receiver.tls.ca-file: a client"
              + " certificate needs TLS, and TLS needs the CA of the managers' certificates");
    }
    if (p.getToken() != null && !p.getToken().isBlank() && tls.getCaFile() == null) {
      throw new IllegalStateException(
          "sluice.receiver.token is set without sluice.receiver.tls.ca-file: refusing to send the"
              + " token in plain text");
    }
  }

  @Override
  public void stop() {
    stop(() -> {});
  }

  @Override
  public synchronized void stop(Runnable callback) {
    try {
      if (running) {
        running = false;
        closeAll();
      }
    } finally {
      callback.run();
    }
  }

  /** Closes every receiver at once, each on its own thread; returns when all are closed. */
  private void closeAll() {
    List<Thread> closing = new ArrayList<>();
    for (Map.Entry<String, SluiceReceiver> e : receivers.entrySet()) {
      Thread t = new Thread(e.getValue()::close, "sluice-listener-stop-" + e.getKey());
      t.start();
      closing.add(t);
    }
    // Each close() bounds itself (shutdown-timeout for the handlers, then a few protocol waits);
    // this bound only guards against a receiver that ignores its own.
    Duration bound = properties.getReceiver().getShutdownTimeout().plusSeconds(15);
    long deadline = System.nanoTime() + bound.toNanos();
    for (Thread t : closing) {
      try {
        t.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
      } catch (InterruptedException ex) {
        Thread.currentThread().interrupt();
        break;
      }
      if (t.isAlive()) {
        log.warn("{} did not finish within {}; leaving it", t.getName(), bound);
      }
    }
    receivers.clear();
  }

  @Override
  public boolean isRunning() {
    return running;
  }

  @Override
  public boolean isAutoStartup() {
    return properties.getReceiver().isAutoStartup();
  }

  @Override
  public int getPhase() {
    return PHASE;
  }

  /** Each running listener's receiver counters, by queue. */
  public Map<String, ReceiverStats> stats() {
    Map<String, ReceiverStats> out = new TreeMap<>();
    receivers.forEach((q, r) -> out.put(q, r.stats()));
    return out;
  }

  /** The counters of the listener of {@code queue}, or null while it is not running. */
  ReceiverStats stats(String queue) {
    SluiceReceiver r = receivers.get(queue);
    return r == null ? null : r.stats();
  }

  /** How many targets each receiver streams from (for health). */
  int targets() {
    return properties.getReceiver().getTargets().size();
  }
}
