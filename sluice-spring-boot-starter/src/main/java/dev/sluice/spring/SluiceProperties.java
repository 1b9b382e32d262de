package dev.sluice.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * sluice.* settings. The producer writes through the application's own DataSource (the database
 * that holds the queue tables), so it has no connection settings of its own.
 */
@ConfigurationProperties(prefix = "sluice")
public class SluiceProperties {
  /** Whether the starter does anything at all. */
  private boolean enabled = true;

  /** How events are added: sluice.producer.*. */
  private final Producer producer = new Producer();

  /** How @SluiceListener methods reach the managers: sluice.receiver.*. */
  private final Receiver receiver = new Receiver();

  /** The sluice health indicator: sluice.health.*. */
  private final HealthSettings health = new HealthSettings();

  /** Sluice's own tables by Flyway at startup (needs sluice-db): sluice.migrations.*. */
  private final Migrations migrations = new Migrations();

  /** The SluiceAdmin bean (the managers' admin API): sluice.admin.*. */
  private final Admin admin = new Admin();

  /**
   * Overrides for one listener, by listener id (which defaults to the queue name): concurrency,
   * max-in-flight, key-range, auto-startup, enabled.
   */
  private Map<String, Listener> listeners = new LinkedHashMap<>();

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public Producer getProducer() {
    return producer;
  }

  public Receiver getReceiver() {
    return receiver;
  }

  public HealthSettings getHealth() {
    return health;
  }

  public Migrations getMigrations() {
    return migrations;
  }

  public Admin getAdmin() {
    return admin;
  }

  public Map<String, Listener> getListeners() {
    return listeners;
  }

  public void setListeners(Map<String, Listener> listeners) {
    this.listeners = listeners;
  }

  /** sluice.producer.*. */
  public static class Producer {
    /**
     * Refuse to insert outside a Spring transaction (the event would commit on its own, whatever
     * the caller's code does next). Turn off to allow fire-and-forget inserts.
     */
    private boolean requireTransaction = true;

    public boolean isRequireTransaction() {
      return requireTransaction;
    }

    public void setRequireTransaction(boolean requireTransaction) {
      this.requireTransaction = requireTransaction;
    }
  }

  /** sluice.receiver.*: how @SluiceListener methods reach the managers. */
  public static class Receiver {
    /** Start the listeners with the application context. */
    private boolean autoStartup = true;

    /** Manager endpoints, one per manager process (host:port). */
    private List<String> targets = new ArrayList<>(List.of("127.0.0.1:7470"));

    /**
     * Stable receiver identity; default hostname-pid-random. "-" and the listener id (by default
     * its queue) are appended.
     */
    private String receiverId;

    /** Handler threads per listener (events handled at once). */
    private int concurrency = 8;

    /** Unacked events per stream; default: the concurrency. */
    private Integer maxInFlight;

    /** Only events of shards overlapping this key range ("" = all). */
    private String keyRange = "";

    /**
     * How long a stop lets running handlers finish before interrupting them. The whole stop adds at
     * most a few seconds of protocol waits, so the default fits Kubernetes' default 30 s grace
     * period together with Spring's own shutdown.
     */
    private Duration shutdownTimeout = Duration.ofSeconds(15);

    /**
     * Extend a running handler's event deadline while it runs, so that a handler longer than the
     * queue's ack_wait is not delivered again meanwhile (up to the queue's max_hold).
     */
    private boolean autoExtend = true;

    public boolean isAutoExtend() {
      return autoExtend;
    }

    public void setAutoExtend(boolean autoExtend) {
      this.autoExtend = autoExtend;
    }

    /** First wait before reconnecting to a manager whose stream ended; doubles per failure. */
    private Duration reconnectMin = Duration.ofMillis(100);

    /**
     * Longest wait between two reconnect attempts; the outage is logged once (WARN), its end once
     * (INFO).
     */
    private Duration reconnectMax = Duration.ofSeconds(5);

    /**
     * Run handlers on virtual threads when the JVM has them (Java 21 and later; at most concurrency
     * at once). On older JVMs the SDK's platform threads.
     */
    private boolean virtualThreads = true;

    /**
     * Bearer token for managers with authentication on; sent only over TLS (set
     * sluice.receiver.tls.ca-file). Never logged.
     */
    private String token;

    /** TLS to the managers: sluice.receiver.tls.*. */
    private final Tls tls = new Tls();

    public boolean isVirtualThreads() {
      return virtualThreads;
    }

    public void setVirtualThreads(boolean virtualThreads) {
      this.virtualThreads = virtualThreads;
    }

    public boolean isAutoStartup() {
      return autoStartup;
    }

    public void setAutoStartup(boolean autoStartup) {
      this.autoStartup = autoStartup;
    }

    public List<String> getTargets() {
      return targets;
    }

    public void setTargets(List<String> targets) {
      this.targets = targets;
    }

    public String getReceiverId() {
      return receiverId;
    }

    public void setReceiverId(String receiverId) {
      this.receiverId = receiverId;
    }

    public int getConcurrency() {
      return concurrency;
    }

    public void setConcurrency(int concurrency) {
      this.concurrency = concurrency;
    }

    public Integer getMaxInFlight() {
      return maxInFlight;
    }

    public void setMaxInFlight(Integer maxInFlight) {
      this.maxInFlight = maxInFlight;
    }

    public String getKeyRange() {
      return keyRange;
    }

    public void setKeyRange(String keyRange) {
      this.keyRange = keyRange;
    }

    public Duration getShutdownTimeout() {
      return shutdownTimeout;
    }

    public void setShutdownTimeout(Duration shutdownTimeout) {
      this.shutdownTimeout = shutdownTimeout;
    }

    public Duration getReconnectMin() {
      return reconnectMin;
    }

    public void setReconnectMin(Duration reconnectMin) {
      this.reconnectMin = reconnectMin;
    }

    public Duration getReconnectMax() {
      return reconnectMax;
    }

    public void setReconnectMax(Duration reconnectMax) {
      this.reconnectMax = reconnectMax;
    }

    public String getToken() {
      return token;
    }

    public void setToken(String token) {
      this.token = token;
    }

    public Tls getTls() {
      return tls;
    }

    @Override
    public String toString() {
      return "Receiver{targets="
          + targets
          + ", concurrency="
          + concurrency
          + ", token="
          + (token == null ? "unset" : "****")
          + "}";
    }
  }

  /**
   * sluice.receiver.tls.*: TLS to the managers (the CA of their certificates) and, for managers
   * that authenticate receivers by certificate, a client certificate and its key.
   */
  public static class Tls {
    /** PEM file of the CA that signed the managers' certificates. */
    private String caFile;

    /** PEM client certificate, for managers that authenticate receivers by certificate. */
    private String certFile;

    /** PEM private key of the client certificate. */
    private String keyFile;

    public String getCaFile() {
      return caFile;
    }

    public void setCaFile(String caFile) {
      this.caFile = caFile;
    }

    public String getCertFile() {
      return certFile;
    }

    public void setCertFile(String certFile) {
      this.certFile = certFile;
    }

    public String getKeyFile() {
      return keyFile;
    }

    public void setKeyFile(String keyFile) {
      this.keyFile = keyFile;
    }

    boolean anySet() {
      return caFile != null || certFile != null || keyFile != null;
    }
  }

  /** sluice.listeners.<id>.*: overrides for one listener (id defaults to the queue). */
  public static class Listener {
    /** Handler threads of this listener. */
    /** Overrides sluice.receiver.auto-extend for this listener. */
    private Boolean autoExtend;

    public Boolean getAutoExtend() {
      return autoExtend;
    }

    public void setAutoExtend(Boolean autoExtend) {
      this.autoExtend = autoExtend;
    }

    private Integer concurrency;

    /** Unacked events per stream of this listener. */
    private Integer maxInFlight;

    /** Whether this listener exists at all. */
    private Boolean enabled;

    /** Whether this listener starts with the context (else start it by its id in the registry). */
    private Boolean autoStartup;

    /** Only events of shards overlapping this key range. */
    private String keyRange;

    public Integer getConcurrency() {
      return concurrency;
    }

    public void setConcurrency(Integer concurrency) {
      this.concurrency = concurrency;
    }

    public Integer getMaxInFlight() {
      return maxInFlight;
    }

    public void setMaxInFlight(Integer maxInFlight) {
      this.maxInFlight = maxInFlight;
    }

    public Boolean getEnabled() {
      return enabled;
    }

    public void setEnabled(Boolean enabled) {
      this.enabled = enabled;
    }

    public Boolean getAutoStartup() {
      return autoStartup;
    }

    public void setAutoStartup(Boolean autoStartup) {
      this.autoStartup = autoStartup;
    }

    public String getKeyRange() {
      return keyRange;
    }

    public void setKeyRange(String keyRange) {
      this.keyRange = keyRange;
    }
  }

  /** sluice.health.*. */
  public static class HealthSettings {
    /**
     * The status the sluice health indicator reports while a running listener has no stream to any
     * manager. UNKNOWN (the default) keeps /actuator/health UP and 200: the application still
     * serves and produces without its managers. OUT_OF_SERVICE or DOWN make readiness (and the
     * root) 503; liveness never includes sluice.
     */
    private String disconnectedStatus = "UNKNOWN";

    /**
     * Add sluice to the readiness health group (when Spring Boot's probes are on), never to
     * liveness.
     */
    private boolean readiness = true;

    public String getDisconnectedStatus() {
      return disconnectedStatus;
    }

    public void setDisconnectedStatus(String disconnectedStatus) {
      this.disconnectedStatus = disconnectedStatus;
    }

    public boolean isReadiness() {
      return readiness;
    }

    public void setReadiness(boolean readiness) {
      this.readiness = readiness;
    }
  }

  /** sluice.migrations.*: opt-in, needs dev.sluice:sluice-db on the class path. */
  public static class Migrations {
    /**
     * Apply Sluice's own tables (and locations) to the application's DataSource with Flyway at
     * startup, in Sluice's own history table. Needs sluice-db on the class path.
     */
    private boolean enabled = false;

    /** The application's queue-table migrations to apply with Sluice's (Flyway locations). */
    private List<String> locations = new ArrayList<>();

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public List<String> getLocations() {
      return locations;
    }

    public void setLocations(List<String> locations) {
      this.locations = locations;
    }
  }

  /** sluice.admin.*: opt-in. */
  public static class Admin {
    /**
     * Create the SluiceAdmin bean: a client of the managers' admin API (sluice.v1.Admin) on the
     * receivers' targets and TLS settings.
     */
    private boolean enabled = false;

    /**
     * Bearer token of the admin calls, whose principal needs the admin grant (or replay, purge,
     * cancel, pause, stats) on the queues; unset: sluice.receiver.token. Sent only over TLS.
     */
    private String token;

    /** How long one admin call may take (its gRPC deadline). */
    private Duration timeout = Duration.ofSeconds(10);

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public String getToken() {
      return token;
    }

    public void setToken(String token) {
      this.token = token;
    }

    public Duration getTimeout() {
      return timeout;
    }

    public void setTimeout(Duration timeout) {
      this.timeout = timeout;
    }
  }
}
