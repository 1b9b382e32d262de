package dev.sluice.manager.channel;

import dev.sluice.core.loop.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which topics of a Kafka channel exist, so that the publisher's send thread never waits for the
 * metadata of a topic that is not there: Kafka's producer would block its caller for {@code
 * max.block.ms} on such a topic, holding up every other destination of the channel.
 *
 * <p>The first message for a topic waits (off the send thread) for an {@link Admin#describeTopics}
 * answer: the topic exists, or it does not (or may not be described, or its name is invalid) — a
 * fault of that destination, with Kafka's reason — or no answer (the cluster is unreachable). What
 * exists is remembered and looked at again in the background every {@link #PRESENT_REFRESH}; what
 * does not is asked again at most every {@link #MISSING_REFRESH}, so a topic created later is
 * published to.
 *
 * <h2>Threads</h2>
 *
 * {@link #lookup} runs on the publisher's send thread; the answers arrive on the admin client's
 * network thread, which stores them and hands the messages that waited back through the callback
 * given to {@link #lookup}. {@link #waiting} is the one lock: a leaf (nothing else is locked and
 * nothing blocks under it), so that a message is never parked after its topic's answer was handed
 * out.
 */
final class KafkaTopics implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(KafkaTopics.class);

  /**
   * How long a topic known to exist is trusted before it is described again (in the background).
   */
  static final long PRESENT_REFRESH = TimeUnit.SECONDS.toNanos(30);

  /** How long a topic known to be missing is, before a message for it asks again. */
  static final long MISSING_REFRESH = TimeUnit.SECONDS.toNanos(1);

  /**
   * What is known of a topic.
   *
   * @param exists whether messages may be sent to it
   * @param reason why not (Kafka's exception and text); null when it exists
   */
  record Known(boolean exists, String reason, long checkedAt) {}

  private final String description;
  private final Admin admin;
  private final Ticker ticker;
  private final Map<String, Known> known = new ConcurrentHashMap<>();
  private final Set<String> describing = ConcurrentHashMap.newKeySet();

  /** Per topic being described: the items that wait for its answer. Guarded by itself. */
  private final Map<String, List<Object>> waiting = new java.util.HashMap<>();

  private volatile boolean closed;

  KafkaTopics(String description, Map<String, ?> clientConfig, Duration timeout, Ticker ticker) {
    this.description = description;
    this.ticker = ticker;
    Map<String, Object> config = new java.util.HashMap<>();
    // The producer's connection and security settings, without the producer's own.
    Set<String> adminNames = AdminClientConfig.configNames();
    clientConfig.forEach(
        (k, v) -> {
          if (adminNames.contains(k)) {
            config.put(k, v);
          }
        });
    Object clientId = clientConfig.get(AdminClientConfig.CLIENT_ID_CONFIG);
    config.put(AdminClientConfig.CLIENT_ID_CONFIG, clientId + "-topics");
    int ms = (int) Math.min(Integer.MAX_VALUE, timeout.toMillis());
    config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, ms);
    config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, ms);
    try {
      this.admin = Admin.create(config);
    } catch (KafkaException e) {
      throw new IllegalArgumentException(
          description + ": cannot create the admin client that checks topics: " + e.getMessage(),
          e);
    }
  }

  /**
   * What is known of {@code topic}, to send to it or refuse the message now; or null: {@code item}
   * waits for the topic's answer, and {@code resume} is called with it once that is in (on the
   * admin client's thread). Send thread.
   */
  <T> Known lookup(String topic, T item, Resume<T> resume) {
    long now = ticker.nanos();
    Known k = known.get(topic);
    if (k != null && k.exists()) {
      if (now - k.checkedAt() >= PRESENT_REFRESH) {
        describe(topic, resume); // in the background; it exists meanwhile
      }
      return k;
    }
    if (k != null && now - k.checkedAt() < MISSING_REFRESH) {
      return k;
    }
    synchronized (waiting) {
      k = known.get(topic);
      if (k != null && (k.exists() || now - k.checkedAt() < MISSING_REFRESH)) {
        return k; // answered meanwhile
      }
      waiting.computeIfAbsent(topic, t -> new ArrayList<>()).add(item);
    }
    describe(topic, resume);
    return null;
  }

  /** Hands back the items that waited for a topic's answer. */
  @FunctionalInterface
  interface Resume<T> {
    /**
     * @param known what is now known of the topic; null when the cluster did not answer
     * @param reason why there is no answer (when {@code known} is null)
     */
    void resume(T item, Known known, String reason);
  }

  private <T> void describe(String topic, Resume<T> resume) {
    if (closed || !describing.add(topic)) {
      return;
    }
    try {
      admin
          .describeTopics(Set.of(topic), new DescribeTopicsOptions())
          .allTopicNames()
          .whenComplete((names, e) -> answered(topic, e, resume));
    } catch (RuntimeException e) {
      answered(topic, e, resume);
    }
  }

  /** Admin client's thread (or the send thread, when the admin client refused at once). */
  @SuppressWarnings("unchecked")
  private <T> void answered(String topic, Throwable e, Resume<T> resume) {
    Throwable cause = e instanceof java.util.concurrent.CompletionException c ? c.getCause() : e;
    Known k;
    String noAnswer = null;
    long now = ticker.nanos();
    if (cause == null) {
      k = new Known(true, null, now);
    } else if (definite(cause)) {
      k = new Known(false, KafkaFailures.reason(cause), now);
    } else {
      k = null;
      noAnswer = KafkaFailures.reason(cause);
    }
    List<Object> items;
    synchronized (waiting) {
      if (k != null) {
        Known before = known.put(topic, k);
        if (before != null && before.exists() != k.exists()) {
          log.info(
              "{}: topic {} {}",
              description,
              topic,
              k.exists() ? "exists now" : "is gone: " + k.reason());
        }
      }
      items = waiting.remove(topic);
      describing.remove(topic);
    }
    if (k == null) {
      log.debug("{}: could not learn whether topic {} exists: {}", description, topic, noAnswer);
    }
    if (items != null) {
      for (Object item : items) {
        resume.resume((T) item, k, noAnswer);
      }
    }
  }

  /**
   * Kafka said something about the topic itself: it does not exist, may not be described, or has no
   * valid name. Anything else (a timeout, a connection error) says nothing of the topic.
   */
  static boolean definite(Throwable e) {
    return e instanceof UnknownTopicOrPartitionException
        || e instanceof TopicAuthorizationException
        || e instanceof InvalidTopicException;
  }

  /** Fails nothing itself: the publisher fails what is still parked as it closes. */
  @Override
  public void close() {
    closed = true;
    try {
      admin.close(Duration.ofSeconds(1));
    } catch (RuntimeException e) {
      log.debug("{}: admin client did not close cleanly: {}", description, e.toString());
    }
  }
}
