package dev.sluice.receiver;

import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.EventRef;
import dev.sluice.proto.v1.Extend;
import dev.sluice.proto.v1.ExtendResult;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * Sends one receiver's deadline extensions and matches the managers' answers (ExtendResults) to
 * them. An extension goes on the stream of the manager that delivered the event when that stream is
 * subscribed, else on any subscribed stream: every manager applies an extension on the shard the
 * event came from, so one killed manager does not stop its events' extensions. An extension not
 * answered within {@link #ANSWER_TIMEOUT} fails (the handler's next try sends it again).
 *
 * <p>Thread-safe: handler threads and the auto-extension timer call {@link #send}; the gRPC
 * callback thread calls {@link #answered}.
 */
final class Extender {
  static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(10);

  /** One endpoint as the extender sees it: where its acks go, and its stream. */
  record Route(Outbox outbox, Connector connector) {}

  private record Key(String shard, long id, long epoch) {}

  /**
   * An extension waiting for its answer, and the connector it went on (set once sent): that
   * stream's end fails it at once.
   */
  private static final class Waiting {
    final CompletableFuture<ExtendResult> answer = new CompletableFuture<>();
    volatile Connector on;
  }

  private final Map<Key, Waiting> waiting = new ConcurrentHashMap<>();

  private final ScheduledExecutorService timer;
  private volatile Supplier<List<Route>> routes = List::of;

  Extender(ScheduledExecutorService timer) {
    this.timer = timer;
  }

  void routes(Supplier<List<Route>> routes) {
    this.routes = routes;
  }

  ScheduledExecutorService timer() {
    return timer;
  }

  /** Asks to move {@code event}'s deadline to now + {@code by}; {@code origin}: its endpoint. */
  CompletableFuture<ExtendResult> send(Event event, Outbox origin, Duration by) {
    Key key = new Key(event.getShard(), event.getId(), event.getEpoch());
    Waiting w = new Waiting();
    CompletableFuture<ExtendResult> f = w.answer;
    Waiting before = waiting.put(key, w);
    if (before != null) {
      // An earlier extension of this attempt not answered yet: this one supersedes it.
      f.whenComplete((r, e) -> before.answer.complete(r));
    }
    Extend x =
        Extend.newBuilder()
            .setEvent(
                EventRef.newBuilder()
                    .setId(event.getId())
                    .setEpoch(event.getEpoch())
                    .setShard(event.getShard())
                    .setDeliveryToken(event.getDeliveryToken()))
            .setExtendByMs(Math.max(1, by.toMillis()))
            .setTimeFiredNs(event.getTimeFiredNs())
            .build();
    Connector on = sendOn(x, origin);
    if (on == null) {
      waiting.remove(key, w);
      f.completeExceptionally(
          new IllegalStateException(
              "no manager stream is subscribed: the extension of event "
                  + event.getId()
                  + " (shard "
                  + event.getShard()
                  + ") was not sent"));
      return f;
    }
    w.on = on;
    timer.schedule(
        () -> {
          if (waiting.remove(key, w)) {
            f.completeExceptionally(
                new TimeoutException(
                    "no answer to the extension of event "
                        + event.getId()
                        + " within "
                        + ANSWER_TIMEOUT.toSeconds()
                        + " s"));
          }
        },
        ANSWER_TIMEOUT.toMillis(),
        TimeUnit.MILLISECONDS);
    return f;
  }

  /** The connector that took it: the origin's if subscribed, else any subscribed; or null. */
  private Connector sendOn(Extend x, Outbox origin) {
    List<Route> all = routes.get();
    for (Route r : all) {
      if (r.outbox() == origin && r.connector().sendExtend(x)) {
        return r.connector();
      }
    }
    for (Route r : all) {
      if (r.outbox() != origin && r.connector().sendExtend(x)) {
        return r.connector();
      }
    }
    return null;
  }

  /**
   * {@code connector}'s stream ended (its manager stopped or was killed): the extensions waiting
   * for its answer fail now, so that they are sent again on another stream before the deadline, not
   * after {@link #ANSWER_TIMEOUT}.
   */
  void streamEnded(Connector connector) {
    for (Map.Entry<Key, Waiting> e : waiting.entrySet()) {
      Waiting w = e.getValue();
      if (w.on == connector && waiting.remove(e.getKey(), w)) {
        w.answer.completeExceptionally(
            new IllegalStateException(
                "the stream the extension of event " + e.getKey().id() + " went on ended"));
      }
    }
  }

  /** A manager's answer (gRPC callback thread). */
  void answered(ExtendResult r) {
    EventRef e = r.getEvent();
    Waiting w = waiting.remove(new Key(e.getShard(), e.getId(), e.getEpoch()));
    if (w != null) {
      w.answer.complete(r);
    }
  }
}
