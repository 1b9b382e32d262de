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

  private final Map<Key, CompletableFuture<ExtendResult>> waiting = new ConcurrentHashMap<>();
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
    CompletableFuture<ExtendResult> f = new CompletableFuture<>();
    CompletableFuture<ExtendResult> before = waiting.put(key, f);
    if (before != null) {
      // An earlier extension of this attempt not answered yet: this one supersedes it.
      f.whenComplete((r, e) -> before.complete(r));
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
    if (!sendOn(x, origin)) {
      waiting.remove(key, f);
      f.completeExceptionally(
          new IllegalStateException(
              "no manager stream is subscribed: the extension of event "
                  + event.getId()
                  + " (shard "
                  + event.getShard()
                  + ") was not sent"));
      return f;
    }
    timer.schedule(
        () -> {
          if (waiting.remove(key, f)) {
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

  private boolean sendOn(Extend x, Outbox origin) {
    List<Route> all = routes.get();
    for (Route r : all) {
      if (r.outbox() == origin && r.connector().sendExtend(x)) {
        return true;
      }
    }
    for (Route r : all) {
      if (r.outbox() != origin && r.connector().sendExtend(x)) {
        return true;
      }
    }
    return false;
  }

  /** A manager's answer (gRPC callback thread). */
  void answered(ExtendResult r) {
    EventRef e = r.getEvent();
    CompletableFuture<ExtendResult> f =
        waiting.remove(new Key(e.getShard(), e.getId(), e.getEpoch()));
    if (f != null) {
      f.complete(r);
    }
  }
}
