package dev.sluice.examples.demo;

import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * What goes wrong on purpose with {@code --chaos}, one step every {@code interval}, on its own
 * thread, until the producer is done and every one-off step has run:
 *
 * <ol>
 *   <li>kill -9 a manager that leads a shard, and start it again (same id and port, new process);
 *   <li>{@code SET GLOBAL read_only=1} for half an interval (at least a second), then back;
 *   <li>kill -9 another leader, and restart it;
 *   <li>restart the embedded MariaDB ({@code EmbeddedMariaDb.restartServer()}: every shard down);
 *   <li>then a kill -9 and restart every interval, taking turns between managers.
 * </ol>
 *
 * Each step is announced on the progress output and reported to the {@link LeaseWatch} just before
 * it acts, so that failover gaps are measured from the moment of the fault.
 */
final class Chaos implements Runnable {
  private static final Duration RESTART_PAUSE = Duration.ofSeconds(1);

  private final DemoManagers managers;
  private final DemoDatabase db;
  private final LeaseWatch watch;
  private final Progress progress;
  private final Duration interval;
  private final BooleanSupplier producerDone;
  private int nextVictim;
  private volatile int kills;
  private volatile Throwable failure;

  Chaos(
      DemoManagers managers,
      DemoDatabase db,
      LeaseWatch watch,
      Progress progress,
      Duration interval,
      BooleanSupplier producerDone) {
    this.managers = managers;
    this.db = db;
    this.watch = watch;
    this.progress = progress;
    this.interval = interval;
    this.producerDone = producerDone;
  }

  int kills() {
    return kills;
  }

  /** The first unexpected error of a step, if any (the schedule goes on regardless). */
  Throwable failure() {
    return failure;
  }

  @Override
  public void run() {
    boolean readOnlyDone = false;
    boolean restartDone = false;
    int step = 0;
    try {
      while (!(readOnlyDone && restartDone && producerDone.getAsBoolean())) {
        Thread.sleep(interval.toMillis());
        step++;
        try {
          if (step == 2) {
            readOnly();
            readOnlyDone = true;
          } else if (step == 4) {
            restartDatabase();
            restartDone = true;
          } else {
            killAndRestart();
          }
        } catch (InterruptedException e) {
          throw e;
        } catch (Exception | Error e) {
          if (failure == null) {
            failure = e;
          }
          progress.note("chaos: step " + step + " failed: " + e);
        }
      }
      progress.note("chaos: done (" + kills + " kills, one read-only flip, one database restart)");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void killAndRestart() throws InterruptedException {
    DemoManagers.Manager victim = victim();
    Map<String, Integer> owners = watch.owners();
    int leads = owners.getOrDefault(victim.id, 0);
    long pid = victim.pid();
    watch.killing(victim.id);
    managers.kill(victim);
    kills++;
    progress.note(
        "chaos: kill -9 "
            + victim.id
            + " (pid "
            + pid
            + ", leading "
            + leads
            + (leads == 1 ? " shard" : " shards")
            + "); restarting it in "
            + RESTART_PAUSE.toMillis()
            + " ms");
    Thread.sleep(RESTART_PAUSE.toMillis());
    long t0 = System.nanoTime();
    managers.restart(victim);
    progress.note(
        String.format(
            "chaos: %s back as pid %d (serving %.1f s after its start)",
            victim.id, victim.pid(), (System.nanoTime() - t0) / 1e9));
  }

  /** A manager that leads a shard now, taking turns; any manager if none does. */
  private DemoManagers.Manager victim() {
    List<DemoManagers.Manager> all = managers.all();
    Map<String, Integer> owners = watch.owners();
    for (int i = 0; i < all.size(); i++) {
      DemoManagers.Manager m = all.get((nextVictim + i) % all.size());
      if (owners.containsKey(m.id)) {
        nextVictim = (all.indexOf(m) + 1) % all.size();
        return m;
      }
    }
    DemoManagers.Manager m = all.get(nextVictim % all.size());
    nextVictim = (nextVictim + 1) % all.size();
    return m;
  }

  private void readOnly() throws Exception {
    long hold = Math.max(1_000, interval.toMillis() / 2);
    progress.note(
        "chaos: SET GLOBAL read_only=1 for "
            + hold
            + " ms (one embedded server holds every shard's database, so every shard turns"
            + " read-only: managers must stop dispatching)");
    watch.outage("read-only primary");
    db.setReadOnly(true);
    try {
      Thread.sleep(hold);
    } finally {
      writable();
    }
    progress.note("chaos: SET GLOBAL read_only=0");
  }

  /** read_only=0, retried: a server left read-only would stall the rest of the demo. */
  private void writable() throws Exception {
    for (int attempt = 1; ; attempt++) {
      try {
        db.setReadOnly(false);
        return;
      } catch (SQLException e) {
        if (attempt == 10) {
          throw e;
        }
        Thread.sleep(500);
      }
    }
  }

  private void restartDatabase() {
    progress.note("chaos: restarting the embedded MariaDB (every shard goes down)");
    watch.outage("database restart");
    long t0 = System.nanoTime();
    db.restartServer();
    progress.note(
        String.format(
            "chaos: MariaDB back after %.1f s (same port, same data)",
            (System.nanoTime() - t0) / 1e9));
  }
}
