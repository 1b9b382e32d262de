package dev.sluice.manager.queue;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Fault injection for demos and tests: {@link #arm} makes one worker loop of one queue throw an
 * {@link InjectedFault} (an {@link Error}, as an {@code OutOfMemoryError} would be) once, at its
 * next iteration. Nothing is armed unless a caller in the same JVM arms it (the demo's in-process
 * manager, a test); {@code sluice serve} never does.
 *
 * <p>Loops: {@value #POLLER}, {@value #DISPATCHER}, {@value #FIRER} (whichever firer thread comes
 * first), {@value #ACKS}, {@value #PURGER}.
 *
 * <p>Cost when nothing is armed: one read of a volatile boolean per iteration. Thread-safe.
 */
public final class FaultHook {
  public static final String POLLER = "poller";
  public static final String DISPATCHER = "dispatcher";
  public static final String FIRER = "firer";
  public static final String ACKS = "acks";
  public static final String PURGER = "purger";

  /** Thrown by an armed loop. An {@code Error}, so that it goes past {@code catch (Exception)}. */
  public static final class InjectedFault extends Error {
    private static final long serialVersionUID = 1L;

    InjectedFault(String loop, String queue) {
      super("injected fault in the " + loop + " loop of queue " + queue);
    }
  }

  private static final Set<String> armed = ConcurrentHashMap.newKeySet();
  private static volatile boolean any;

  private FaultHook() {}

  /** The {@code loop} of {@code queue} (on every shard) throws once at its next iteration. */
  public static void arm(String loop, String queue) {
    armed.add(key(loop, queue));
    any = true;
  }

  /** Whether a fault armed for this loop and queue has not been thrown yet. */
  public static boolean pending(String loop, String queue) {
    return armed.contains(key(loop, queue));
  }

  /** Disarms everything. */
  public static void reset() {
    armed.clear();
    any = false;
  }

  /** Called by each worker loop at the top of an iteration; throws if armed for it. */
  static void check(String loop, String queue) {
    if (any && armed.remove(key(loop, queue))) {
      any = !armed.isEmpty();
      throw new InjectedFault(loop, queue);
    }
  }

  private static String key(String loop, String queue) {
    return loop + "\u0000" + queue;
  }
}
