package dev.sluice.core.loop;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Fault injection for demos and tests: {@link #arm} makes one worker loop of one queue throw an
 * {@link InjectedFault} (an {@link Error}, as an {@code OutOfMemoryError} would be) once, at its
 * next iteration. Nothing is armed unless a caller in the same JVM arms it (the demo's in-process
 * manager, a test); {@code sluice serve} never does.
 *
 * <p>Loops: {@value #POLLER}, {@value #DISPATCHER}, {@value #FIRER} (whichever firer thread comes
 * first), {@value #ACKS}, {@value #PURGER}; and a shard's own {@value #SCHEDULES} and {@value
 * #GROUPS}, whose queue is {@code ""}.
 *
 * <p>Cost when nothing is armed: one read of a volatile boolean per iteration. Thread-safe.
 */
public final class FaultHook {
  public static final String POLLER = "poller";
  public static final String DISPATCHER = "dispatcher";
  public static final String FIRER = "firer";
  public static final String ACKS = "acks";
  public static final String PURGER = "purger";

  /** A shard's recurring events; armed for queue {@code ""} (a shard's own loop, every shard's). */
  public static final String SCHEDULES = "schedules";

  /** A shard's event groups; armed for queue {@code ""} (a shard's own loop, every shard's). */
  public static final String GROUPS = "groups";

  /** Thrown by an armed loop. An {@code Error}, so that it goes past {@code catch (Exception)}. */
  public static final class InjectedFault extends Error {
    private static final long serialVersionUID = 1L;
    private final boolean fatal;

    InjectedFault(String loop, String queue, boolean fatal) {
      super(
          (fatal ? "injected fatal fault" : "injected fault")
              + " in the "
              + loop
              + " loop of "
              + (queue.isEmpty() ? "a shard" : "queue " + queue));
      this.fatal = fatal;
    }

    /** Armed with {@link #armFatal}: the loop's own handler lets it end the thread. */
    public boolean fatal() {
      return fatal;
    }
  }

  private static final Set<String> armed = ConcurrentHashMap.newKeySet();
  private static final Set<String> fatal = ConcurrentHashMap.newKeySet();
  private static volatile boolean any;

  private FaultHook() {}

  /** The {@code loop} of {@code queue} (on every shard) throws once at its next iteration. */
  public static void arm(String loop, String queue) {
    armed.add(key(loop, queue));
    any = true;
  }

  /**
   * Like {@link #arm}, but the loop's error handler rethrows the fault, so that its thread dies as
   * if the handler itself had failed: what the thread's uncaught-exception handler and the shard's
   * give-up are for.
   */
  public static void armFatal(String loop, String queue) {
    fatal.add(key(loop, queue));
    arm(loop, queue);
  }

  /** Whether a fault armed for this loop and queue has not been thrown yet. */
  public static boolean pending(String loop, String queue) {
    return armed.contains(key(loop, queue));
  }

  /** Disarms everything. */
  public static void reset() {
    armed.clear();
    fatal.clear();
    any = false;
  }

  /** Called by each worker loop at the top of an iteration; throws if armed for it. */
  public static void check(String loop, String queue) {
    if (any && armed.remove(key(loop, queue))) {
      any = !armed.isEmpty();
      throw new InjectedFault(loop, queue, fatal.remove(key(loop, queue)));
    }
  }

  private static String key(String loop, String queue) {
    return loop + "\u0000" + queue;
  }
}
