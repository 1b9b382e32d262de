package dev.sluice.spring;

import dev.sluice.receiver.ReceiverStats;
import dev.sluice.receiver.SluiceReceiver;
import dev.sluice.receiver.SluiceReceiverBuilder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ThreadFactory;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Runs one {@link SluiceReceiver} per {@link SluiceListener} method, started and stopped with the
 * application context ({@link SmartLifecycle}), and one at a time through {@link
 * SluiceListenerRegistry}.
 *
 * <p>Stop: every receiver closes at once, on its own thread: it tells its managers to send nothing
 * new, lets running handlers finish within {@code sluice.receiver.shutdown-timeout} (then
 * interrupts them), and delivers their acks. The callback runs when all are closed, so Spring's
 * shutdown (and Kubernetes' grace period) waits for the slowest handler, not the sum.
 *
 * <p>Threads: {@link #start}, {@link #stop} and the registry's methods run under this object's lock
 * (Spring's lifecycle thread, or the caller's); the receivers' own threads run the handlers. Health
 * and meters read {@link #stats()} and {@link #state} without the lock.
 */
public class SluiceListenerContainer implements SmartLifecycle, SluiceListenerRegistry {
  private static final Logger log = LoggerFactory.getLogger(SluiceListenerContainer.class);

  /** Stops before the web server's graceful shutdown phase ends, and before the DataSource. */
  public static final int PHASE = Integer.MAX_VALUE - 2048;

  private final SluiceListenerRegistrar registrar;
  private final SluiceProperties properties;
  private final SluiceConnectionDetails connection;
  private final Function<ListenerEndpoint, ListenerInvoker> invokers;
  private final ListenerObserver observer;

  /** Built at the first start, by id; the map is not changed after that. */
  private volatile Map<String, Unit> units;

  private volatile boolean running;

  /** One listener: its endpoint, settings, state and current receiver. */
  private static final class Unit {
    final ListenerEndpoint endpoint;
    final SluiceProperties.Listener over;
    final ListenerInvoker invoker;
    volatile State state = State.STOPPED;
    volatile SluiceReceiver receiver;

    Unit(ListenerEndpoint endpoint, SluiceProperties.Listener over, ListenerInvoker invoker) {
      this.endpoint = endpoint;
      this.over = over;
      this.invoker = invoker;
    }
  }

  SluiceListenerContainer(
      SluiceListenerRegistrar registrar,
      SluiceProperties properties,
      SluiceConnectionDetails connection,
      Function<ListenerEndpoint, ListenerInvoker> invokers,
      ListenerObserver observer) {
    this.registrar = registrar;
    this.properties = properties;
    this.connection = connection;
    this.invokers = invokers;
    this.observer = observer;
  }

  @Override
  public synchronized void start() {
    if (running) {
      return;
    }
    Map<String, Unit> all = units();
    try {
      for (Unit u : all.values()) {
        if (u.state == State.STOPPED && autoStartup(u)) {
          startUnit(u);
        } else if (u.state == State.STOPPED) {
          log.info(
              "@SluiceListener {} does not start with the context (auto-startup false)",
              u.endpoint.describe());
        }
      }
    } catch (RuntimeException ex) {
      closeAll(List.copyOf(all.values()), State.STOPPED);
      throw ex;
    }
    running = true;
  }

  private Map<String, Unit> units() {
    if (units == null) {
      List<ListenerEndpoint> endpoints = registrar.endpoints();
      if (!endpoints.isEmpty()) {
        checkSecurity();
      }
      Map<String, Unit> built = new LinkedHashMap<>();
      for (ListenerEndpoint e : endpoints) {
        SluiceProperties.Listener over = override(e);
        if (Boolean.FALSE.equals(over.getEnabled())) {
          log.info("@SluiceListener {} is disabled by sluice.listeners", e.describe());
          continue;
        }
        built.put(e.id(), new Unit(e, over, invokers.apply(e)));
      }
      units = built;
    }
    return units;
  }

  /** {@code sluice.listeners.<id>}, else {@code sluice.listeners.<queue>}, else none. */
  private SluiceProperties.Listener override(ListenerEndpoint e) {
    Map<String, SluiceProperties.Listener> all = properties.getListeners();
    SluiceProperties.Listener byId = all.get(e.id());
    if (byId != null) {
      return byId;
    }
    return all.getOrDefault(e.queue(), new SluiceProperties.Listener());
  }

  private boolean autoStartup(Unit u) {
    if (u.endpoint.autoStartup() != null) {
      return u.endpoint.autoStartup();
    }
    if (u.over.getAutoStartup() != null) {
      return u.over.getAutoStartup();
    }
    return true; // sluice.receiver.auto-startup applies to the container itself
  }

  private void startUnit(Unit u) {
    SluiceReceiver r = receiver(u).start();
    u.receiver = r;
    u.state = State.RUNNING;
    String id = u.endpoint.id();
    observer.started(id, () -> stats(id));
    log.info(
        "@SluiceListener {} receiving from {} as {}",
        u.endpoint.describe(),
        connection.getTargets(),
        r.receiverId());
  }

  private SluiceReceiver receiver(Unit u) {
    ListenerEndpoint e = u.endpoint;
    SluiceProperties.Listener over = u.over;
    SluiceProperties.Receiver p = properties.getReceiver();
    int concurrency =
        e.concurrency() > 0
            ? e.concurrency()
            : over.getConcurrency() != null ? over.getConcurrency() : p.getConcurrency();
    Integer maxInFlight =
        over.getMaxInFlight() != null ? over.getMaxInFlight() : p.getMaxInFlight();
    SluiceReceiverBuilder b =
        SluiceReceiver.builder()
            .targets(connection.getTargets())
            .queue(e.queue())
            .concurrency(concurrency)
            .keyRange(over.getKeyRange() != null ? over.getKeyRange() : p.getKeyRange())
            .reconnectBackoff(p.getReconnectMin(), p.getReconnectMax())
            .shutdownTimeout(p.getShutdownTimeout())
            .autoExtend(over.getAutoExtend() != null ? over.getAutoExtend() : p.isAutoExtend())
            .handler(u.invoker);
    observer.building(e.id(), b);
    if (maxInFlight != null) {
      b.maxInFlight(maxInFlight);
    }
    if (p.isVirtualThreads()) {
      ThreadFactory threads = VirtualThreads.factory("sluice-" + e.id() + "-handler-");
      if (threads != null) {
        b.handlerThreads(threads);
      }
    }
    String token = connection.getToken();
    if (token != null && !token.isBlank()) {
      b.token(token);
    }
    SluiceProperties.Tls tls = p.getTls();
    if (tls.getCaFile() != null) {
      b.tls(Path.of(tls.getCaFile()));
    }
    if (tls.getCertFile() != null) {
      b.clientCertificate(Path.of(tls.getCertFile()), Path.of(tls.getKeyFile()));
    }
    if (p.getReceiverId() != null && !p.getReceiverId().isBlank()) {
      b.receiverId(p.getReceiverId() + "-" + e.id());
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
    String token = connection.getToken();
    if (token != null && !token.isBlank() && tls.getCaFile() == null) {
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
        List<Unit> open = new ArrayList<>();
        for (Unit u : units().values()) {
          if (u.state == State.RUNNING) {
            open.add(u);
          }
        }
        closeAll(open, State.STOPPED);
      }
    } finally {
      callback.run();
    }
  }

  /**
   * Closes the receivers of {@code units} at once, each on its own thread, and leaves them in
   * {@code then} (a paused unit stays paused); returns when all are closed.
   */
  private void closeAll(List<Unit> closing, State then) {
    List<Thread> threads = new ArrayList<>();
    for (Unit u : closing) {
      SluiceReceiver r = u.receiver;
      if (r == null) {
        continue;
      }
      Thread t = new Thread(r::close, "sluice-listener-stop-" + u.endpoint.id());
      t.start();
      threads.add(t);
    }
    // Each close() bounds itself (shutdown-timeout for the handlers, then a few protocol waits);
    // this bound only guards against a receiver that ignores its own.
    Duration bound = properties.getReceiver().getShutdownTimeout().plusSeconds(15);
    long deadline = System.nanoTime() + bound.toNanos();
    for (Thread t : threads) {
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
    for (Unit u : closing) {
      u.receiver = null;
      if (u.state != State.PAUSED) {
        u.state = then;
      }
    }
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

  // --- SluiceListenerRegistry ---

  @Override
  public Set<String> listenerIds() {
    Map<String, Unit> u = units;
    return u == null ? Set.of() : Set.copyOf(u.keySet());
  }

  @Override
  public State state(String id) {
    return unit(id).state;
  }

  @Override
  public String queue(String id) {
    return unit(id).endpoint.queue();
  }

  @Override
  public synchronized void start(String id) {
    Unit u = unit(id);
    if (u.state != State.RUNNING) {
      startUnit(u);
    }
  }

  @Override
  public synchronized void stop(String id) {
    Unit u = unit(id);
    if (u.state == State.PAUSED) {
      u.state = State.STOPPED;
    } else if (u.state == State.RUNNING) {
      closeAll(List.of(u), State.STOPPED);
      log.info("@SluiceListener {} stopped", u.endpoint.describe());
    }
  }

  @Override
  public synchronized void pause(String id) {
    Unit u = unit(id);
    if (u.state == State.RUNNING) {
      closeAll(List.of(u), State.PAUSED);
      u.state = State.PAUSED;
      log.info("@SluiceListener {} paused", u.endpoint.describe());
    }
  }

  @Override
  public synchronized void resume(String id) {
    Unit u = unit(id);
    if (u.state == State.PAUSED) {
      startUnit(u);
      log.info("@SluiceListener {} resumed", u.endpoint.describe());
    }
  }

  private Unit unit(String id) {
    Map<String, Unit> all = units;
    Unit u = all == null ? null : all.get(id);
    if (u == null) {
      throw new IllegalArgumentException(
          "no @SluiceListener with id '"
              + id
              + "'; the ids are "
              + (all == null ? "not known before the listeners start" : all.keySet()));
    }
    return u;
  }

  /** Each listener's receiver counters while it has a receiver, by id. */
  @Override
  public Map<String, ReceiverStats> stats() {
    Map<String, ReceiverStats> out = new TreeMap<>();
    Map<String, Unit> all = units;
    if (all != null) {
      all.forEach(
          (id, u) -> {
            SluiceReceiver r = u.receiver;
            if (r != null) {
              out.put(id, r.stats());
            }
          });
    }
    return out;
  }

  /** The counters of listener {@code id}, or null while it has no receiver. */
  ReceiverStats stats(String id) {
    Map<String, Unit> all = units;
    Unit u = all == null ? null : all.get(id);
    SluiceReceiver r = u == null ? null : u.receiver;
    return r == null ? null : r.stats();
  }

  /** How many targets each receiver streams from (for health). */
  int targets() {
    return connection.getTargets().size();
  }
}
