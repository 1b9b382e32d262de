package dev.sluice.manager.security;

import dev.sluice.proto.v1.AckResult;
import dev.sluice.proto.v1.AckResults;
import dev.sluice.proto.v1.AckStatus;
import dev.sluice.proto.v1.EventRef;
import dev.sluice.proto.v1.ManagerMessage;
import dev.sluice.proto.v1.Nack;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * What a principal may do with Subscribe streams, for the whole process: the subscribe grant, the
 * per-principal limits (streams, subscribe attempts per second, credits), who owns a receiver id,
 * and which acks and nacks belong to the stream that sends them (their delivery token).
 *
 * <p>Receiver ids are scoped per principal: two principals may use the same id without meeting (a
 * NotifyShutdown drains only the caller's own streams of that id, and a delivery token binds acks
 * to the principal and receiver id it was issued to). Ledgers are guarded by {@code this}; calls
 * are short and never touch the database.
 */
public final class StreamGuard {
  private final boolean enforce;
  private final AuthDenials denials;
  private final DeliveryTokens tokens;
  private final LongSupplier ticker;

  private final Map<String, Usage> usage = new HashMap<>();

  private static final class Usage {
    int streams;
    int credits;
    double bucket = -1;
    long refilledNs;
  }

  /**
   * @param enforce whether authentication is on (acks must then carry their delivery token)
   * @param ticker monotonic ns, for the subscribe rate
   */
  public StreamGuard(
      boolean enforce, AuthDenials denials, DeliveryTokens tokens, LongSupplier ticker) {
    this.enforce = enforce;
    this.denials = denials;
    this.tokens = tokens;
    this.ticker = ticker;
  }

  /**
   * Who opened the stream, which tenants it may be sent (null = all), and the signer of its
   * delivery tokens (null when authentication is off).
   */
  public record Binding(String principal, java.util.Set<String> tenants, DeliveryTokens tokens) {}

  /** What the guard needs of a Subscribe stream (the gRPC package's subscription). */
  public interface Stream {
    String queue();

    String receiverId();

    /** Sends {@code m} to the receiver; false when it could not be written. */
    boolean send(ManagerMessage m);

    /** Ties the stream to its principal, once, before it is attached to any shard. */
    void bind(Binding b);
  }

  /** One stream's view; gRPC calls it serially for its stream. */
  public Session open(Principal p) {
    return new Session(p);
  }

  public AuthDenials denials() {
    return denials;
  }

  public final class Session {
    private final Principal principal;
    private String queue;
    private int credits;
    private boolean counted;

    Session(Principal principal) {
      this.principal = principal;
    }

    public Principal principal() {
      return principal;
    }

    /**
     * Checks a Subscribe before anything about the queue is looked at, so that a denied principal
     * learns nothing of it. Returns the credits granted (at most {@code maxInFlight}).
     */
    public int subscribe(String queue, String rid, int maxInFlight) {
      if (!principal.allows(queue, Action.SUBSCRIBE)) {
        throw deny(
            "permission",
            "subscribe to queue " + queue,
            Status.PERMISSION_DENIED.withDescription(
                "principal " + principal.name() + " may not subscribe to queue '" + queue + "'"));
      }
      Limits l = principal.limits();
      synchronized (StreamGuard.this) {
        Usage u = usage.computeIfAbsent(principal.name(), k -> new Usage());
        if (l.subscribesPerSecond() > 0 && !take(u, l.subscribesPerSecond())) {
          throw deny(
              "limit",
              "subscribe to queue " + queue,
              Status.RESOURCE_EXHAUSTED.withDescription(
                  "too many subscribe attempts: at most "
                      + l.subscribesPerSecond()
                      + " a second for principal "
                      + principal.name()));
        }
        if (l.streams() > 0 && u.streams >= l.streams()) {
          throw deny(
              "limit",
              "subscribe to queue " + queue,
              Status.RESOURCE_EXHAUSTED.withDescription(
                  "principal " + principal.name() + " has its " + l.streams() + " streams open"));
        }
        int granted = maxInFlight;
        if (l.credits() > 0) {
          granted = Math.min(maxInFlight, l.credits() - u.credits);
          if (granted < 1) {
            throw deny(
                "limit",
                "subscribe to queue " + queue,
                Status.RESOURCE_EXHAUSTED.withDescription(
                    "principal " + principal.name() + " has all its " + l.credits() + " credits"));
          }
        }
        u.streams++;
        u.credits += granted;
        this.queue = queue;
        this.credits = granted;
        this.counted = true;
        return granted;
      }
    }

    /** A Flow asking {@code n} credits: returns what is granted within the principal's limit. */
    public int flow(int n) {
      Limits l = principal.limits();
      if (l.credits() <= 0) {
        return n;
      }
      synchronized (StreamGuard.this) {
        Usage u = usage.get(principal.name());
        int granted = Math.max(1, Math.min(n, l.credits() - (u.credits - credits)));
        u.credits += granted - credits;
        credits = granted;
        return granted;
      }
    }

    /** Ties the subscription to this principal: its deliveries carry tokens only it can return. */
    public void bind(Stream sub) {
      sub.bind(new Binding(principal.name(), principal.tenantsFor(queue), enforce ? tokens : null));
    }

    /**
     * The refs among {@code refs} this stream may settle: with authentication on, those whose
     * delivery token is this principal's and receiver's. The others are answered UNKNOWN at once
     * (nothing changes) and counted.
     */
    public List<EventRef> own(Stream sub, List<EventRef> refs) {
      if (!enforce) {
        return refs;
      }
      List<EventRef> ok = new ArrayList<>(refs.size());
      AckResults.Builder refused = AckResults.newBuilder();
      for (EventRef r : refs) {
        if (tokens.verify(
            r.getShard(),
            sub.queue(),
            r.getId(),
            r.getEpoch(),
            principal.name(),
            sub.receiverId(),
            r.getDeliveryToken())) {
          ok.add(r);
        } else {
          refused.addResults(
              AckResult.newBuilder().setEvent(r).setStatus(AckStatus.ACK_STATUS_UNKNOWN));
        }
      }
      if (refused.getResultsCount() > 0) {
        denials.deny(
            principal.name(),
            "foreign_ack",
            refused.getResultsCount() + " acks/nacks on queue " + sub.queue() + " not its own");
        sub.send(ManagerMessage.newBuilder().setAckResults(refused).build());
      }
      return ok;
    }

    /** {@link #own} for nacks. */
    public List<Nack> ownNacks(Stream sub, List<Nack> nacks) {
      if (!enforce) {
        return nacks;
      }
      List<EventRef> own = own(sub, nacks.stream().map(Nack::getEvent).toList());
      if (own.size() == nacks.size()) {
        return nacks;
      }
      java.util.Set<EventRef> keep = new java.util.HashSet<>(own);
      return nacks.stream().filter(n -> keep.contains(n.getEvent())).toList();
    }

    /** The stream ended: its receiver id, stream and credits are given back. */
    public void close() {
      synchronized (StreamGuard.this) {
        if (!counted) {
          return;
        }
        counted = false;
        Usage u = usage.get(principal.name());
        u.streams--;
        u.credits -= credits;
      }
    }

    private StatusRuntimeException deny(String reason, String what, Status status) {
      denials.deny(principal.name(), reason, what);
      return status.asRuntimeException();
    }
  }

  /** Token bucket: a burst of {@code rate}, refilled at {@code rate} a second. Under the lock. */
  private boolean take(Usage u, double rate) {
    long now = ticker.getAsLong();
    if (u.bucket < 0) {
      u.bucket = rate;
      u.refilledNs = now;
    }
    u.bucket = Math.min(rate, u.bucket + (now - u.refilledNs) / 1e9 * rate);
    u.refilledNs = now;
    if (u.bucket < 1) {
      return false;
    }
    u.bucket -= 1;
    return true;
  }
}
