package dev.sluice.manager.queue;

import dev.sluice.proto.v1.ManagerMessage;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One receiver's Subscribe stream on one queue.
 *
 * <p>Threads: {@link #inFlight} is owned by the queue's dispatcher thread. {@link #maxInFlight},
 * {@link #draining} and {@link #closed} are volatile flags set by gRPC threads. Writes to the gRPC
 * stream come from the dispatcher (events) and the ack batcher (ack results), so {@link #send} is
 * synchronized: gRPC observers are not thread-safe.
 */
public final class ReceiverStream {
  private static final Logger log = LoggerFactory.getLogger(ReceiverStream.class);

  private final String receiverId;
  private final String queue;
  private final long streamId;
  private final ServerCallStreamObserver<ManagerMessage> out;
  private volatile int maxInFlight;
  private volatile boolean draining;

  /** No more sends: the stream ended or broke, from either side. */
  private volatile boolean closed;

  /** The server has ended the call (onCompleted or onError); guarded by this. */
  private boolean ended;

  /** Events sent and not yet settled; dispatcher thread only. */
  int inFlight;

  /** In-flight events per work class; dispatcher thread only. */
  final java.util.Map<String, Integer> classInFlight = new java.util.HashMap<>();

  public ReceiverStream(
      String receiverId,
      String queue,
      long streamId,
      int maxInFlight,
      ServerCallStreamObserver<ManagerMessage> out) {
    this.receiverId = receiverId;
    this.queue = queue;
    this.streamId = streamId;
    this.maxInFlight = maxInFlight;
    this.out = out;
  }

  public String receiverId() {
    return receiverId;
  }

  public String queue() {
    return queue;
  }

  public long streamId() {
    return streamId;
  }

  public int maxInFlight() {
    return maxInFlight;
  }

  public void setMaxInFlight(int n) {
    this.maxInFlight = n;
  }

  public boolean draining() {
    return draining;
  }

  /** Stops new sends to this stream (graceful shutdown); in-flight events may still be acked. */
  public void drain() {
    this.draining = true;
  }

  public boolean closed() {
    return closed;
  }

  /** Free credits, as the dispatcher sees them (dispatcher thread). */
  int freeSlots() {
    if (closed || draining || !out.isReady()) {
      return 0;
    }
    return Math.max(0, maxInFlight - inFlight);
  }

  /** Sends one message; returns false when the stream is gone. */
  public synchronized boolean send(ManagerMessage m) {
    if (closed) {
      return false;
    }
    try {
      out.onNext(m);
      return true;
    } catch (RuntimeException e) {
      log.debug(
          "queue {}: receiver {} stream {} send failed: {}",
          queue,
          receiverId,
          streamId,
          e.toString());
      closed = true;
      return false;
    }
  }

  /**
   * Ends the call from the server side with a status (e.g. the manager is stopping, or OK after the
   * receiver half-closed). Ends it once, even if the stream was already marked closed.
   */
  public synchronized void close(Status status) {
    closed = true;
    if (ended) {
      return;
    }
    ended = true;
    try {
      if (status.isOk()) {
        out.onCompleted();
      } else {
        out.onError(status.asRuntimeException());
      }
    } catch (RuntimeException e) {
      log.debug("queue {}: closing stream {}: {}", queue, streamId, e.toString());
    }
  }

  /** The client side ended or broke the stream. */
  void markClosed() {
    closed = true;
  }

  @Override
  public String toString() {
    return "receiver " + receiverId + " (stream " + streamId + ")";
  }
}
