package dev.sluice.manager.channel;

import static dev.sluice.manager.channel.RabbitReplies.replyText;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.sluice.manager.channel.RabbitEvent.Confirm;
import dev.sluice.manager.channel.RabbitEvent.Returned;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The messages a {@link RabbitPublisher} holds, and how they are sent and settled: waiting to be
 * sent, sent and unconfirmed by sequence number on the current channel, nacked and waiting a moment
 * for the return that says why. Publisher thread only; the caller checks that an event is of the
 * current channel.
 */
final class RabbitConfirms {
  private static final Logger log = LoggerFactory.getLogger(RabbitPublisher.class);

  /** How long a nacked message waits for a return that tells it was unroutable. */
  static final long NACK_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

  /** Messages sent per turn of the publisher loop before it looks at its inbox again. */
  private static final int SEND_BATCH = 256;

  private final String description;
  private final ArrayDeque<RabbitPending> outbox = new ArrayDeque<>();
  private final TreeMap<Long, RabbitPending> unconfirmed = new TreeMap<>();
  private final List<RabbitPending> nacked = new ArrayList<>();
  private int probesUnconfirmed;

  RabbitConfirms(String description) {
    this.description = description;
  }

  void add(RabbitPending p) {
    outbox.addLast(p);
  }

  boolean hasUnconfirmed() {
    return !unconfirmed.isEmpty();
  }

  /** A message may go now, on an open channel: none is a probe still unconfirmed. */
  boolean canSendNext() {
    if (probesUnconfirmed > 0) {
      return false;
    }
    RabbitPending next = outbox.peekFirst();
    return next != null && (!next.probe || unconfirmed.isEmpty());
  }

  /**
   * Sends a batch on {@code channel}. Returns what a publish threw (the channel or connection
   * closed under it; the message goes first again), or null.
   */
  Exception send(Channel channel, Connection connection) {
    for (int n = 0; n < SEND_BATCH && canSendNext(); n++) {
      RabbitPending p = outbox.pollFirst();
      if (p.future.isDone()) {
        continue; // timed out while waiting
      }
      OutboundMessage m = p.message;
      Map<String, Object> headers = m.headers() == null ? null : new HashMap<>(m.headers());
      AMQP.BasicProperties props =
          new AMQP.BasicProperties.Builder()
              .deliveryMode(2)
              .messageId(m.messageId())
              .headers(headers)
              .build();
      byte[] body = m.body() == null ? new byte[0] : m.body();
      long seq = channel.getNextPublishSeqNo();
      // Handed over before the write, which may block: its timeout then cuts the connection.
      p.sentOn = connection;
      try {
        channel.basicPublish(m.target(), routingKey(m), true, props, body);
      } catch (IOException | RuntimeException e) {
        p.sentOn = null;
        outbox.addFirst(p);
        return e;
      }
      p.seq = seq;
      unconfirmed.put(seq, p);
      if (p.probe) {
        probesUnconfirmed++;
      }
    }
    return null;
  }

  private RabbitPending removeUnconfirmed(long seq) {
    RabbitPending p = unconfirmed.remove(seq);
    if (p != null && p.probe) {
      probesUnconfirmed--;
    }
    return p;
  }

  void onConfirm(Confirm c, long now) {
    List<RabbitPending> settled = new ArrayList<>();
    if (c.multiple()) {
      NavigableMap<Long, RabbitPending> head = unconfirmed.headMap(c.tag(), true);
      for (Long seq : List.copyOf(head.keySet())) {
        settled.add(removeUnconfirmed(seq));
      }
    } else {
      RabbitPending p = removeUnconfirmed(c.tag());
      if (p != null) {
        settled.add(p);
      }
    }
    for (RabbitPending p : settled) {
      if (p.returnReason != null) {
        fail(p, p.returnReason, false);
      } else if (c.ack()) {
        p.future.complete(null);
      } else {
        // Qpid sends the nack of an unroutable message before its return: wait a moment for it.
        p.nackedAt = now;
        nacked.add(p);
      }
    }
  }

  void onReturn(Returned r) {
    // 506: a queue it routes to is full and rejects publishes (Qpid returns such a message).
    boolean full = r.code() == AMQP.RESOURCE_ERROR;
    String reason =
        (full ? "rabbitmq returned message " : "rabbitmq could not route message ")
            + r.messageId()
            + " to exchange '"
            + r.exchange()
            + "' with routing key '"
            + r.routingKey()
            + "': "
            + replyText(r.code(), r.text());
    for (Iterator<RabbitPending> it = nacked.iterator(); it.hasNext(); ) {
      RabbitPending p = it.next();
      if (matches(p, r)) {
        it.remove();
        fail(p, reason, false);
        return;
      }
    }
    for (RabbitPending p : unconfirmed.values()) {
      if (p.returnReason == null && matches(p, r)) {
        p.returnReason = reason; // failed when its confirm comes
        return;
      }
    }
    log.debug("{}: a return matched no unconfirmed message: {}", description, reason);
  }

  private static boolean matches(RabbitPending p, Returned r) {
    return Objects.equals(p.message.target(), r.exchange())
        && Objects.equals(routingKey(p.message), r.routingKey())
        && Objects.equals(p.message.messageId(), r.messageId());
  }

  /** Fails the nacked messages whose grace is over. */
  void expireNackGrace(long now) {
    for (Iterator<RabbitPending> it = nacked.iterator(); it.hasNext(); ) {
      RabbitPending p = it.next();
      if (now - p.nackedAt >= NACK_GRACE_NANOS) {
        it.remove();
        failNacked(p);
      }
    }
  }

  /** {@code wait}, or less when a nacked message's grace ends sooner. */
  long nackWait(long now, long wait) {
    for (RabbitPending p : nacked) {
      wait = Math.min(wait, Math.max(0, p.nackedAt + NACK_GRACE_NANOS - now));
    }
    return wait;
  }

  /**
   * A nack: a queue the message routes to is full and rejects publishes, or could not store it.
   * That destination's fault, not the broker's: the broker confirms other messages meanwhile.
   */
  private void failNacked(RabbitPending p) {
    fail(
        p,
        description
            + " refused "
            + p.message.describe()
            + " (nack): a queue it routes to is full and rejects publishes (x-overflow"
            + " reject-publish), or could not store it",
        false);
  }

  /**
   * The broker closed the channel ({@code why}) because of a message: when one was unconfirmed it
   * fails with that reason; several are sent again, one at a time, to find the one it refuses.
   */
  void channelClosed(String why) {
    List<RabbitPending> suspects = new ArrayList<>();
    for (RabbitPending p : unconfirmed.values()) {
      if (!p.future.isDone()) {
        suspects.add(p);
      }
    }
    unconfirmed.clear();
    probesUnconfirmed = 0;
    if (suspects.size() == 1) {
      RabbitPending p = suspects.get(0);
      log.warn(
          "{}: the broker closed the channel on {}: {}; opening a new one",
          description,
          p.message.describe(),
          why);
      fail(p, description + " refused " + p.message.describe() + ": " + why, false);
      return;
    }
    log.warn(
        "{}: the broker closed the channel: {}; opening a new one{}",
        description,
        why,
        suspects.isEmpty()
            ? ""
            : " and sending the "
                + suspects.size()
                + " unconfirmed messages again, one at a time, to find the one it refuses");
    for (int i = suspects.size() - 1; i >= 0; i--) {
      RabbitPending p = suspects.get(i);
      p.probe = true;
      p.sentOn = null;
      p.returnReason = null;
      outbox.addFirst(p);
    }
  }

  /** The connection went ({@code why}): what it had not confirmed fails. How many that failed. */
  int connectionLost(String why) {
    int failed = 0;
    for (RabbitPending p : unconfirmed.values()) {
      if (fail(
          p,
          description
              + ": connection lost before the broker confirmed "
              + p.message.describe()
              + ": "
              + why,
          true)) {
        failed++;
      }
    }
    unconfirmed.clear();
    probesUnconfirmed = 0;
    for (RabbitPending p : nacked) {
      failNacked(p);
    }
    nacked.clear();
    return failed;
  }

  /** Everything still held, in no particular order; it holds nothing after. */
  List<RabbitPending> takeAll() {
    List<RabbitPending> left = new ArrayList<>(unconfirmed.values());
    left.addAll(nacked);
    left.addAll(outbox);
    unconfirmed.clear();
    nacked.clear();
    outbox.clear();
    probesUnconfirmed = 0;
    return left;
  }

  private boolean fail(RabbitPending p, String reason, boolean brokerDown) {
    boolean done = p.fail(reason, brokerDown);
    if (done) {
      log.debug("{}: {} failed: {}", description, p.message.messageId(), reason);
    }
    return done;
  }

  static String routingKey(OutboundMessage m) {
    return m.routingKey() == null ? "" : m.routingKey();
  }
}
