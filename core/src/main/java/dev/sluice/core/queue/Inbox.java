package dev.sluice.core.queue;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * The {@link Dispatcher} thread's inbox: commands any thread posts, run in order by the dispatcher
 * thread between dispatch rounds, and the wake-up that ends its sleep. Safe from any thread (a
 * concurrent queue and a volatile thread).
 */
final class Inbox {
  private final ConcurrentLinkedQueue<Runnable> commands = new ConcurrentLinkedQueue<>();
  private volatile Thread owner;

  /** The thread that runs the commands and sleeps in {@link #sleep}. */
  void ownedBy(Thread t) {
    owner = t;
  }

  /** Queues {@code command} for the owner thread and wakes it. */
  void post(Runnable command) {
    commands.add(command);
    wake();
  }

  void wake() {
    Thread t = owner;
    if (t != null) {
      LockSupport.unpark(t);
    }
  }

  /** Runs the commands posted so far, and any posted meanwhile (owner thread). */
  void runAll() {
    Runnable r;
    while ((r = commands.poll()) != null) {
      r.run();
    }
  }

  /** Sleeps up to {@code ns} unless a command waits; a {@link #wake} ends it (owner thread). */
  void sleep(Object blocker, long ns) {
    if (commands.isEmpty() && ns > 0) {
      LockSupport.parkNanos(blocker, ns);
    }
  }
}
