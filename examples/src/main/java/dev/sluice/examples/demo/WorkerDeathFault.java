package dev.sluice.examples.demo;

import dev.sluice.core.loop.FaultHook;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Fault 9, a worker thread that dies of an {@link Error}: {@link FaultHook} makes the poller loop
 * of the queue throw once (as an {@code OutOfMemoryError} would). Contained: events added after it
 * are delivered within {@link #RECOVER} (the worker restarted, or the shard given up and re-led);
 * the other queues' canaries show that nothing else stopped.
 */
final class WorkerDeathFault implements Fault {
  private static final String QUEUE = "poison_worker";
  static final Duration RECOVER = Duration.ofSeconds(10);
  private final List<Long> after = new ArrayList<>();
  private boolean thrown;
  private boolean recovered;
  private long recoverMs;

  @Override
  public String name() {
    return "worker thread dies of an Error";
  }

  @Override
  public String queue() {
    return QUEUE;
  }

  @Override
  public void inject(PoisonRun run) throws Exception {
    run.note("fault 9: " + QUEUE + ": the poller loop throws an Error (FaultHook)");
    FaultHook.arm(FaultHook.POLLER, QUEUE);
    thrown =
        PoisonRun.await(Duration.ofSeconds(5), () -> !FaultHook.pending(FaultHook.POLLER, QUEUE));
    long t0 = System.nanoTime();
    after.addAll(run.addMany(QUEUE, "after-fault", 5));
    recovered = PoisonRun.awaitDb(RECOVER, () -> run.allAcked(QUEUE, after));
    recoverMs = (System.nanoTime() - t0) / 1_000_000;
  }

  @Override
  public Verdict judge(PoisonRun run) throws Exception {
    if (!thrown) {
      return Verdict.of(false, "not injected: the poller of " + QUEUE + " never ran the hook");
    }
    return Verdict.of(
        recovered,
        recovered
            ? "poller died; the 5 events added after it acked within " + recoverMs + " ms"
            : "poller died; events added after it not acked within "
                + RECOVER.toSeconds()
                + " s: "
                + run.notAcked(QUEUE, after));
  }
}
