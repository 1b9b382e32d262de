package dev.sluice.core.queue;

import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.core.queue.dispatch.AttachedOutlets;
import dev.sluice.core.queue.dispatch.Dispatcher;
import dev.sluice.core.queue.dispatch.DispatcherCommand.ReleaseAll;
import dev.sluice.core.queue.dispatch.DispatcherCommand.StopSending;
import dev.sluice.core.queue.dispatch.Inbox;
import dev.sluice.core.queue.poll.Poller;
import dev.sluice.core.queue.write.AckBatcher;
import dev.sluice.core.queue.write.Firer;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The steps that stop one queue, in their order: the poller and the purger first, then no new
 * sends; then, for a graceful stop, what receivers hold is drained and the rest released; the last
 * acks are written; the outlets hear this shard no longer serves them, the dispatcher and firers
 * end; the threads are joined. After an abandon (leadership lost), the credits of what receivers
 * still hold go back once no thread of the queue runs ({@link #awaitAbandoned}), on a {@code
 * -giveback} thread of its own when one is stuck past the step-down's wait.
 *
 * <p>Threads: {@link #graceful} and {@link #abandon} run once per queue, under the {@link
 * QueueManager}'s monitor; {@link #awaitAbandoned} on the stepping-down thread, holding no lock.
 * The dispatcher's state is read here only once its threads have ended (their join hands it over).
 */
final class QueueShutdown {
  private static final Logger log = LoggerFactory.getLogger(QueueShutdown.class);

  /** How often a late give-back says it is still waiting for an ended term's thread. */
  static final long LATE_WARN_MS = 60_000;

  private final QueueContext ctx;
  private final Inbox inbox;
  private final Dispatcher dispatcher;
  private final Poller poller;
  private final Firer firer;
  private final AckBatcher acks;
  private final Purger purger;
  private final AttachedOutlets streams;
  private final QueueThreads threads;

  QueueShutdown(
      QueueContext ctx,
      Inbox inbox,
      Dispatcher dispatcher,
      Poller poller,
      Firer firer,
      AckBatcher acks,
      Purger purger,
      AttachedOutlets streams,
      QueueThreads threads) {
    this.ctx = ctx;
    this.inbox = inbox;
    this.dispatcher = dispatcher;
    this.poller = poller;
    this.firer = firer;
    this.acks = acks;
    this.purger = purger;
    this.streams = streams;
    this.threads = threads;
  }

  /**
   * A graceful stop, each step bounded: no new sends; receivers finish and ack what they hold (up
   * to half of {@code timeout}); the rest is released to pending; the last acks are written; the
   * streams are closed; the threads stopped.
   */
  void graceful(Duration timeout) {
    long deadline = ctx.clock().monoNs() + timeout.toNanos();
    long drainUntil = ctx.clock().monoNs() + timeout.toNanos() / 2;
    poller.stop();
    purger.stop();
    inbox.post(new StopSending());
    while (dispatcher.inFlightCount() > 0 && ctx.clock().monoNs() < drainUntil) {
      pause(20);
    }
    if (dispatcher.inFlightCount() > 0) {
      log.info(
          "{}: releasing {} in-flight events at shutdown", ctx.where(), dispatcher.inFlightCount());
      inbox.post(new ReleaseAll("manager stopping"));
      while (dispatcher.inFlightCount() > 0 && ctx.clock().monoNs() < deadline) {
        pause(20);
      }
    }
    acks.stop();
    signalThreads();
    joinThreads(deadline, 100);
  }

  /** The first half of an abandon: tells every thread to stop, and waits for none. */
  void abandon(String why) {
    log.warn("{}: stopping dispatch at once: {}", ctx.where(), why);
    poller.stop();
    purger.stop();
    inbox.post(new StopSending());
    acks.stop();
    signalThreads();
  }

  /**
   * The second half: waits until {@code deadline} (monotonic ns) for the queue's threads, then
   * gives back the credits of what its receivers hold.
   */
  void awaitAbandoned(long deadline) {
    // Past the deadline a stuck thread costs 1 ms, not 100: the other queues of the shard are
    // waited for on the same deadline.
    joinThreads(deadline, 1);
    // The events receivers hold stay fired, for them to ack; their credits on each stream come
    // back, since this queue will never settle them. Only once no thread of ours runs: the
    // dispatcher's state is then this thread's.
    if (threads.noneAlive()) {
      giveBackHeld("");
    } else {
      // A thread still blocked in the database (waiting for a connection while the server is
      // down, say) must not keep the credits: the receiver's stream carries on into this
      // process's next term, which could otherwise send it nothing. They come back when the last
      // thread ends, on a thread of their own.
      log.warn(
          "{}: a thread did not stop in time; the credits of held events come back when it does",
          ctx.where());
      Thread late =
          new Thread(
              this::giveBackWhenStopped, "sluice-" + ctx.shard() + "-" + ctx.queue() + "-giveback");
      late.setDaemon(true);
      late.start();
    }
  }

  /** Waits (however long) for the queue's last thread to end, then gives back held credits. */
  private void giveBackWhenStopped() {
    long waited = 0;
    while (!threads.awaitEnd(LATE_WARN_MS)) {
      if (Thread.currentThread().isInterrupted()) {
        return; // the process is going away
      }
      waited += LATE_WARN_MS;
      log.warn(
          "{}: a thread of its ended term still runs {} s later; the credits it holds wait for it",
          ctx.where(),
          waited / 1000);
    }
    giveBackHeld(" (late)");
  }

  private void giveBackHeld(String late) {
    int held = dispatcher.abandonHeld();
    if (held > 0) {
      log.info(
          "{}: gave back{} the credits of {} events its receivers hold or it was firing (they stay"
              + " fired: an ack still applies, else they come back after ack_wait)",
          ctx.where(),
          late,
          held);
    }
  }

  /** Tells the outlets this shard no longer serves them, and the dispatcher and firers to end. */
  private void signalThreads() {
    streams.detachAll();
    dispatcher.stop();
    firer.stop();
  }

  /** Waits for every thread until {@code deadline} (each at least {@code minMs}). */
  private void joinThreads(long deadline, long minMs) {
    threads.join(deadline, minMs);
    ctx.metrics().removeGauges();
    log.info("{}: stopped", ctx.where());
  }

  private static void pause(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
