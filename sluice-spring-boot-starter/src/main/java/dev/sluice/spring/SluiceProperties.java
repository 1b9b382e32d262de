package dev.sluice.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code sluice.*} settings. The producer writes through the application's own {@code DataSource}
 * (the database that holds the queue tables), so it has no connection settings of its own.
 */
@ConfigurationProperties(prefix = "sluice")
public class SluiceProperties {
  /** Whether the starter does anything at all. */
  private boolean enabled = true;

  private final Producer producer = new Producer();
  private final Receiver receiver = new Receiver();

  /** Per-queue overrides of the receiver settings, by queue name. */
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

  public Map<String, Listener> getListeners() {
    return listeners;
  }

  public void setListeners(Map<String, Listener> listeners) {
    this.listeners = listeners;
  }

  /** {@code sluice.producer.*}. */
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

  /** {@code sluice.receiver.*}: how {@code @SluiceListener} methods reach the managers. */
  public static class Receiver {
    /** Start the listeners with the application context. */
    private boolean autoStartup = true;

    /** Manager endpoints, one per manager process ({@code host:port}). */
    private List<String> targets = new ArrayList<>(List.of("127.0.0.1:7470"));

    /** Stable receiver identity; default hostname-pid-random. The queue name is appended. */
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

    private Duration reconnectMin = Duration.ofMillis(100);
    private Duration reconnectMax = Duration.ofSeconds(5);

    /**
     * Bearer token for managers with authentication on; sent only over TLS (set {@code
     * sluice.receiver.tls.ca-file}). Never logged.
     */
    private String token;

    private final Tls tls = new Tls();

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
   * {@code sluice.receiver.tls.*}: TLS to the managers (the CA of their certificates) and, for
   * managers that authenticate receivers by certificate, a client certificate and its key.
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

  /** {@code sluice.listeners.<queue>.*}: overrides for one queue's listener. */
  public static class Listener {
    private Integer concurrency;
    private Integer maxInFlight;
    private Boolean enabled;

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
  }
}
