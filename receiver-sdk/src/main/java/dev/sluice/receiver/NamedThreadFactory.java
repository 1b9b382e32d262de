package dev.sluice.receiver;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/** Daemon threads named {@code sluice-receiver-<receiverId>-<role>[-n]}. */
final class NamedThreadFactory implements ThreadFactory {
  private final String prefix;
  private final boolean numbered;
  private final AtomicInteger next = new AtomicInteger(1);

  NamedThreadFactory(String receiverId, String role, boolean numbered) {
    this.prefix = "sluice-receiver-" + receiverId + "-" + role;
    this.numbered = numbered;
  }

  @Override
  public Thread newThread(Runnable r) {
    Thread t = new Thread(r, numbered ? prefix + "-" + next.getAndIncrement() : prefix);
    // Daemon: a receiver the application forgot to close must not keep the JVM alive.
    t.setDaemon(true);
    return t;
  }
}
