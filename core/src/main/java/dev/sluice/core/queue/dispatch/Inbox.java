package dev.sluice.core.queue.dispatch;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * The dispatcher thread's inbox: the {@link DispatcherCommand}s any thread posts, taken in order by
 * the dispatcher thread between dispatch rounds, and the wake-up that ends its sleep. It is all the
 * workers (poller, firer, ack batcher, outlets, the queue's manager) know of the dispatcher. Safe
 * from any thread (a concurrent queue and a volatile thread).
 */
public final class Inbox {
  private final ConcurrentLinkedQueue<DispatcherCommand> commands = new ConcurrentLinkedQueue<>();
  private volatile Thread owner;

  /** The thread that runs the commands and sleeps in {@link #sleep}. */
  void ownedBy(Thread t) {
    owner = t;
  }

  /** Queues {@code command} for the owner thread and wakes it. */
  public void post(DispatcherCommand command) {
    commands.add(command);
    wake();
  }

  void wake() {
    Thread t = owner;
    if (t != null) {
      LockSupport.unpark(t);
    }
  }

  /** Hands {@code handler} the commands posted so far, and any posted meanwhile (owner thread). */
  void runAll(Consumer<DispatcherCommand> handler) {
    DispatcherCommand c;
    while ((c = commands.poll()) != null) {
      handler.accept(c);
    }
  }

  /** Sleeps up to {@code ns} unless a command waits; a {@link #wake} ends it (owner thread). */
  void sleep(Object blocker, long ns) {
    if (commands.isEmpty() && ns > 0) {
      LockSupport.parkNanos(blocker, ns);
    }
  }
}
