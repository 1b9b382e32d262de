package dev.sluice.spring;

import dev.sluice.receiver.ReceiverStats;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.lang.Nullable;

/**
 * The {@code sluice} Actuator endpoint: the application's {@link SluiceListener}s, and pause and
 * resume of one or all of them, over {@link SluiceListenerRegistry}.
 *
 * <ul>
 *   <li>{@code GET /actuator/sluice}: every listener (id, queue, state, in flight, counters);
 *   <li>{@code GET /actuator/sluice/{id}}: one listener, 404 for an unknown id;
 *   <li>{@code POST /actuator/sluice} with {@code {"action":"pause"}} or {@code "resume"}: every
 *       listener;
 *   <li>{@code POST /actuator/sluice/{id}} with the same body: one listener (400 for an unknown id
 *       or action).
 * </ul>
 *
 * <p>A pause is the registry's: the managers are told to send the listener nothing new, its running
 * handlers finish (within {@code sluice.receiver.shutdown-timeout}) and their acks are delivered;
 * the call returns then. Resume takes events again. Pausing a listener that is not running, or
 * resuming one that is not paused, changes nothing.
 *
 * <p>Threads: operations run on the web server's request threads; the registry serialises them.
 */
@Endpoint(id = "sluice")
public class SluiceListenersEndpoint {
  private final SluiceListenerRegistry registry;

  public SluiceListenersEndpoint(SluiceListenerRegistry registry) {
    this.registry = registry;
  }

  /** Every listener, by id. */
  @ReadOperation
  public Listeners listeners() {
    List<Listener> out = new ArrayList<>();
    for (String id : new TreeSet<>(registry.listenerIds())) {
      out.add(describe(id));
    }
    return new Listeners(out);
  }

  /** One listener, or null (404) for an unknown id. */
  @ReadOperation
  @Nullable
  public Listener listener(@Selector String id) {
    return registry.listenerIds().contains(id) ? describe(id) : null;
  }

  /** Pauses or resumes every listener; {@code action} is {@code pause} or {@code resume}. */
  @WriteOperation
  public Listeners changeAll(String action) {
    Action a = Action.of(action);
    for (String id : new TreeSet<>(registry.listenerIds())) {
      a.apply(registry, id);
    }
    return listeners();
  }

  /** Pauses or resumes one listener; an unknown id is a bad request (400). */
  @WriteOperation
  public Listener change(@Selector String id, String action) {
    Action a = Action.of(action);
    if (!registry.listenerIds().contains(id)) {
      throw new InvalidEndpointRequestException(
          "no @SluiceListener with id '"
              + id
              + "'; the ids are "
              + new TreeSet<>(registry.listenerIds()),
          "no @SluiceListener with that id");
    }
    a.apply(registry, id);
    return describe(id);
  }

  private Listener describe(String id) {
    ReceiverStats s = registry.stats().get(id);
    return new Listener(
        id,
        registry.queue(id),
        registry.state(id),
        s == null ? 0 : s.inFlight(),
        s == null ? null : s.streamsConnected(),
        s == null ? null : s.received(),
        s == null ? null : s.acked(),
        s == null ? null : s.nacked());
  }

  private enum Action {
    PAUSE,
    RESUME;

    static Action of(String action) {
      if (action != null) {
        for (Action a : values()) {
          if (a.name().equalsIgnoreCase(action.strip())) {
            return a;
          }
        }
      }
      throw new InvalidEndpointRequestException(
          "action must be 'pause' or 'resume', not '" + action + "'",
          "action must be 'pause' or 'resume'");
    }

    void apply(SluiceListenerRegistry registry, String id) {
      switch (this) {
        case PAUSE -> registry.pause(id);
        case RESUME -> registry.resume(id);
      }
    }
  }

  /** The endpoint's answer for all listeners. */
  public record Listeners(List<Listener> listeners) implements OperationResponseBody {}

  /**
   * One listener. The counters are its receiver's since it last started, null while it has no
   * receiver (paused or stopped).
   *
   * @param id the listener id
   * @param queue the queue it receives from
   * @param state {@code RUNNING}, {@code PAUSED} or {@code STOPPED}
   * @param inFlight events received whose handler has not finished (0 without a receiver)
   * @param streamsConnected managers it has a subscribed stream to
   * @param received events delivered to it
   * @param acked handlings that ended in an ack
   * @param nacked handlings that ended in a nack
   */
  public record Listener(
      String id,
      String queue,
      SluiceListenerRegistry.State state,
      int inFlight,
      Integer streamsConnected,
      Long received,
      Long acked,
      Long nacked)
      implements OperationResponseBody {}
}
