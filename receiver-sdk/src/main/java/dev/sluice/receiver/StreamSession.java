package dev.sluice.receiver;

import dev.sluice.proto.v1.AckResult;
import dev.sluice.proto.v1.Acks;
import dev.sluice.proto.v1.EventBatch;
import dev.sluice.proto.v1.EventRef;
import dev.sluice.proto.v1.ManagerMessage;
import dev.sluice.proto.v1.Nack;
import dev.sluice.proto.v1.Nacks;
import dev.sluice.proto.v1.ReceiverMessage;
import dev.sluice.proto.v1.ShardChange;
import dev.sluice.proto.v1.Subscribe;
import dev.sluice.proto.v1.Subscribed;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * One Subscribe stream to one endpoint. gRPC's request observer is not thread-safe, and several
 * threads write to it (Subscribe from the connector, acks from the sender, half-close from close(),
 * cancel from abort()), so every write goes through a method synchronized on this session. The same
 * lock guards the sent-but-unanswered completions, so that an AckResult can never be matched before
 * its send was recorded, and a stream's end hands back exactly what it left unanswered.
 */
final class StreamSession implements ClientResponseObserver<ReceiverMessage, ManagerMessage> {
  /** Stream-level callbacks, run on the gRPC callback thread. */
  interface Listener {
    void subscribed(StreamSession session, Subscribed subscribed);

    void events(EventBatch batch);

    void shardChange(ShardChange change);

    void ended(StreamSession session, Status status);

    /** A manager's answer to a deadline extension. */
    default void extended(dev.sluice.proto.v1.ExtendResult result) {}
  }

  private final long generation;
  private final Listener listener;
  private final Outbox outbox;
  private final StatsCounters stats;
  private final AtomicBoolean silenced; // set by abort(): nothing may be written after it
  private final Consumer<AckResult> answers; // each AckResult, for the observers
  private final Map<Completion.Ref, ArrayDeque<Completion>> awaiting = new HashMap<>();
  private ClientCallStreamObserver<ReceiverMessage> requests; // set in beforeStart
  private boolean ended; // guarded by this
  private boolean halfClosed; // guarded by this
  private volatile boolean subscribed;

  StreamSession(
      long generation,
      Listener listener,
      Outbox outbox,
      StatsCounters stats,
      AtomicBoolean silenced,
      Consumer<AckResult> answers) {
    this.generation = generation;
    this.answers = answers;
    this.listener = listener;
    this.outbox = outbox;
    this.stats = stats;
    this.silenced = silenced;
  }

  long generation() {
    return generation;
  }

  boolean isSubscribed() {
    return subscribed;
  }

  synchronized boolean isEnded() {
    return ended;
  }

  @Override
  public synchronized void beforeStart(ClientCallStreamObserver<ReceiverMessage> requestStream) {
    this.requests = requestStream;
  }

  synchronized void sendSubscribe(Subscribe subscribe) {
    if (writable()) {
      requests.onNext(ReceiverMessage.newBuilder().setSubscribe(subscribe).build());
    }
  }

  /** Sends one deadline extension; false, sending nothing, if this stream cannot carry it. */
  synchronized boolean sendExtend(dev.sluice.proto.v1.Extend x) {
    if (!writable() || !subscribed) {
      return false;
    }
    requests.onNext(
        ReceiverMessage.newBuilder()
            .setExtends(dev.sluice.proto.v1.Extends.newBuilder().addExtends(x))
            .build());
    return true;
  }

  /**
   * Sends one Acks and/or one Nacks message for the batch and remembers it until answered. Returns
   * false, sending nothing, if this stream can no longer carry it.
   */
  synchronized boolean sendCompletions(List<Completion> batch) {
    if (!writable()) {
      return false;
    }
    Acks.Builder acks = Acks.newBuilder();
    Nacks.Builder nacks = Nacks.newBuilder();
    int committed = 0;
    for (Completion c : batch) {
      EventRef ref =
          EventRef.newBuilder()
              .setId(c.id())
              .setEpoch(c.epoch())
              .setShard(c.shard())
              .setDeliveryToken(c.token())
              .build();
      if (c.committed()) {
        acks.addCommitted(ref);
        committed++;
      } else if (c.ack()) {
        acks.addEvents(ref);
      } else {
        nacks.addNacks(
            Nack.newBuilder()
                .setEvent(ref)
                .setRetryAfterMs(c.retryAfterMs())
                .setReason(c.reason())
                .setSnooze(c.snooze()));
      }
    }
    if (acks.getEventsCount() > 0 || acks.getCommittedCount() > 0) {
      requests.onNext(ReceiverMessage.newBuilder().setAcks(acks).build());
    }
    if (nacks.getNacksCount() > 0) {
      requests.onNext(ReceiverMessage.newBuilder().setNacks(nacks).build());
    }
    for (Completion c : batch) {
      if (!c.committed()) {
        awaiting.computeIfAbsent(c.ref(), r -> new ArrayDeque<>(1)).add(c);
      }
    }
    if (committed > 0) {
      // A committed ack is a notice, not a request: the database already holds the outcome, and
      // the manager sends no answer. (Outbox's lock is taken after this session's, never before.)
      outbox.answered(committed);
    }
    return true;
  }

  /** Half-closes the request side: tells the manager this receiver sends nothing more. */
  synchronized void halfClose() {
    if (writable()) {
      halfClosed = true;
      requests.onCompleted();
    }
  }

  /** Cancels the call; safe at any time, also after abort(). */
  synchronized void cancel(String why) {
    if (requests != null && !ended) {
      requests.cancel(why, null);
    }
  }

  private boolean writable() {
    return requests != null && !ended && !halfClosed && !silenced.get();
  }

  @Override
  public void onNext(ManagerMessage message) {
    switch (message.getKindCase()) {
      case SUBSCRIBED -> {
        subscribed = true;
        listener.subscribed(this, message.getSubscribed());
      }
      case EVENTS -> listener.events(message.getEvents());
      case SHARD_CHANGE -> listener.shardChange(message.getShardChange());
      case ACK_RESULTS -> {
        for (AckResult result : message.getAckResults().getResultsList()) {
          stats.result(result.getStatus());
          answers.accept(result);
          if (matchAnswer(result.getEvent())) {
            outbox.answered(1);
          }
        }
      }
      case EXTEND_RESULTS -> {
        for (dev.sluice.proto.v1.ExtendResult r : message.getExtendResults().getResultsList()) {
          listener.extended(r);
        }
      }
      default -> {
        // A message kind newer than this SDK: ignore it rather than break the stream.
      }
    }
  }

  private synchronized boolean matchAnswer(EventRef ref) {
    Completion.Ref key = new Completion.Ref(ref.getId(), ref.getEpoch(), ref.getShard());
    ArrayDeque<Completion> sent = awaiting.get(key);
    if (sent == null) {
      return false;
    }
    sent.poll();
    if (sent.isEmpty()) {
      awaiting.remove(key);
    }
    return true;
  }

  @Override
  public void onError(Throwable t) {
    end(Status.fromThrowable(t));
  }

  @Override
  public void onCompleted() {
    end(Status.OK);
  }

  private void end(Status status) {
    List<Completion> unanswered = new ArrayList<>();
    synchronized (this) {
      if (ended) {
        return;
      }
      ended = true;
      awaiting.values().forEach(unanswered::addAll);
      awaiting.clear();
    }
    // Whether they were applied is unknown: send them again on the next stream, where the
    // manager answers STALE for any that already took effect.
    if (!silenced.get()) {
      outbox.requeue(unanswered);
    }
    listener.ended(this, status);
  }
}
