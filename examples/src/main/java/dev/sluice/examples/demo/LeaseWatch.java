package dev.sluice.examples.demo;

import dev.sluice.db.QueueConvention;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * Measures failover from the outside, the way an operator would: by reading each shard's {@code
 * sluice_lease} row every {@value #POLL_MS} ms on its own connection, never by asking the managers.
 *
 * <p><b>When a shard has a dispatching leader.</b> All of: its lease row is readable (the database
 * is up); the server is not read-only; the lease is unexpired on the database's clock; its owner is
 * a manager process that is alive right now; and the lease was renewed after the shard's current
 * outage began. The last condition matters twice: a killed manager restarts under the same id and
 * may find its predecessor's lease still unexpired, and a leader that stopped dispatching because
 * the primary turned read-only still shows an unexpired lease for a while — in both cases the row
 * looks fine before anyone dispatches again.
 *
 * <p><b>The gap.</b> An outage of a shard starts at the moment the demo kills the manager that owns
 * its lease (per the last reading, at most {@value #POLL_MS} ms old), turns the server read-only,
 * or starts restarting the database — recorded by the chaos thread just before it acts, so the gap
 * includes detection time. An outage nobody announced (a lease given up to rebalance and not yet
 * taken, say) starts at the first reading without a leader. It ends at the first reading with a
 * leader again, so gaps are measured to within one poll. {@code max_failover_ms} is the longest gap
 * of any shard; a gap still open when the watch stops counts up to then.
 *
 * <p><b>Failovers.</b> The lease's {@code token} grows by one each time the lease changes owner
 * (never on renewal, nor when a manager takes back its own lease), so failovers are the sum of
 * token increases over the watch, counted from {@link #baseline()} — after the managers' initial
 * spread of leases.
 */
final class LeaseWatch implements AutoCloseable {
  static final long POLL_MS = 50;

  /** One closed (or, at stop, still open) gap of one shard. */
  record Gap(String shard, String cause, long ms, String newOwner) {}

  private static final String QUERY =
      "SELECT owner, token, expires_ns, renewed_ns, "
          + QueueConvention.NOW_NS_SQL
          + ", @@global.read_only FROM sluice_lease WHERE shard = ?";

  private final class ShardState {
    final DemoDatabase.Shard shard;
    Connection connection;
    String owner = "";
    long token = -1;
    boolean led;
    long downSinceMono = -1;
    long needRenewedAfterDbNs = Long.MIN_VALUE;
    String cause = "";

    ShardState(DemoDatabase.Shard shard) {
      this.shard = shard;
    }
  }

  private final List<ShardState> shards = new ArrayList<>();
  private final Predicate<String> alive;
  private final Thread thread = new Thread(this::loop, "demo-lease-watch");
  private final List<Gap> gaps = new ArrayList<>(); // guarded by this
  private volatile boolean running = true;
  private boolean counting; // guarded by this
  private long failovers; // guarded by this
  private long offsetNs; // guarded by this: database clock minus this host's clock

  /**
   * @param alive whether a manager id's process is running now
   */
  LeaseWatch(DemoDatabase db, Predicate<String> alive) {
    for (DemoDatabase.Shard s : db.shards()) {
      shards.add(new ShardState(s));
    }
    this.alive = alive;
    thread.setDaemon(true);
  }

  LeaseWatch start() {
    thread.start();
    return this;
  }

  /**
   * Waits until every shard has a leader and no manager holds more than its share (the managers
   * spread the leases at start), up to the timeout. True if that happened.
   */
  boolean awaitSpread(int managers, long timeoutMs) throws InterruptedException {
    int share = (shards.size() + managers - 1) / managers;
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    while (System.nanoTime() < deadline) {
      synchronized (this) {
        Map<String, Integer> held = new TreeMap<>();
        boolean allLed = true;
        for (ShardState s : shards) {
          allLed &= s.led;
          held.merge(s.owner, 1, Integer::sum);
        }
        if (allLed && held.values().stream().allMatch(n -> n <= share)) {
          return true;
        }
      }
      Thread.sleep(POLL_MS);
    }
    return false;
  }

  /** Waits until every shard has a dispatching leader, up to the timeout. True if so. */
  boolean awaitAllLed(long timeoutMs) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    while (System.nanoTime() < deadline) {
      synchronized (this) {
        if (shards.stream().allMatch(s -> s.led)) {
          return true;
        }
      }
      Thread.sleep(POLL_MS);
    }
    return false;
  }

  /** Starts counting failovers and gaps from now. */
  synchronized void baseline() {
    counting = true;
    failovers = 0;
    gaps.clear();
    for (ShardState s : shards) {
      s.downSinceMono = s.led ? -1 : System.nanoTime();
      s.cause = "no leader at start";
    }
  }

  /** The demo is about to kill this manager: every shard it leads loses its leader now. */
  synchronized void killing(String managerId) {
    for (ShardState s : shards) {
      if (s.owner.equals(managerId)) {
        begin(s, "kill -9 of " + managerId);
      }
    }
  }

  /** The demo is about to take every shard down (read-only, database restart). */
  synchronized void outage(String cause) {
    for (ShardState s : shards) {
      begin(s, cause);
    }
  }

  private void begin(ShardState s, String cause) {
    if (s.downSinceMono < 0) {
      s.downSinceMono = System.nanoTime();
      s.needRenewedAfterDbNs = wallNs() + offsetNs;
      s.cause = cause;
    }
  }

  /** "s0:m1 s1:m2", with "-" for a shard without a leader now. */
  synchronized String leaders() {
    StringBuilder b = new StringBuilder();
    for (ShardState s : shards) {
      b.append(b.length() == 0 ? "" : ",")
          .append(s.shard.name())
          .append(':')
          .append(s.led ? s.owner : "-");
    }
    return b.toString();
  }

  /** Owners of shard leases now, with how many each holds (per the last readings). */
  synchronized Map<String, Integer> owners() {
    Map<String, Integer> out = new TreeMap<>();
    for (ShardState s : shards) {
      if (s.led) {
        out.merge(s.owner, 1, Integer::sum);
      }
    }
    return out;
  }

  synchronized long failovers() {
    return failovers;
  }

  synchronized long maxGapMs() {
    return gaps.stream().mapToLong(Gap::ms).max().orElse(0);
  }

  synchronized List<Gap> gaps() {
    return List.copyOf(gaps);
  }

  private void loop() {
    while (running) {
      long t0 = System.nanoTime();
      for (ShardState s : shards) {
        poll(s);
      }
      long left = TimeUnit.MILLISECONDS.toNanos(POLL_MS) - (System.nanoTime() - t0);
      if (left > 0) {
        try {
          TimeUnit.NANOSECONDS.sleep(left);
        } catch (InterruptedException e) {
          return;
        }
      }
    }
  }

  private record Reading(
      String owner, long token, long expiresNs, long renewedNs, long nowNs, boolean readOnly) {}

  private void poll(ShardState s) {
    // The clock before the read: the offset then errs towards later database times, so an
    // outage's start on the database clock is never put before the real moment.
    long wall = wallNs();
    Reading r = read(s);
    synchronized (this) {
      if (r != null) {
        offsetNs = r.nowNs - wall;
        if (counting && s.token >= 0 && r.token > s.token) {
          failovers += r.token - s.token;
        }
        s.token = r.token;
        s.owner = r.owner;
      }
      boolean led =
          r != null
              && !r.readOnly
              && r.expiresNs > r.nowNs
              && alive.test(r.owner)
              && r.renewedNs > s.needRenewedAfterDbNs;
      s.led = led;
      if (!counting) {
        return;
      }
      long mono = System.nanoTime();
      if (led && s.downSinceMono >= 0) {
        gaps.add(
            new Gap(
                s.shard.name(),
                s.cause,
                TimeUnit.NANOSECONDS.toMillis(mono - s.downSinceMono),
                r.owner));
        s.downSinceMono = -1;
      } else if (!led && s.downSinceMono < 0) {
        s.downSinceMono = mono;
        s.needRenewedAfterDbNs = r != null ? r.nowNs : wall + offsetNs;
        s.cause = r == null ? "database unreachable" : "lease lapsed";
      }
    }
  }

  /** The lease row, or null when the database cannot be read right now. */
  private Reading read(ShardState s) {
    try {
      if (s.connection == null) {
        // Short timeouts: a reading that cannot be made is itself the answer (no leader).
        s.connection =
            DriverManager.getConnection(
                s.shard.url() + "&connectTimeout=1000&socketTimeout=2000",
                DemoDatabase.USER,
                DemoDatabase.PASSWORD);
      }
      try (PreparedStatement ps = s.connection.prepareStatement(QUERY)) {
        ps.setString(1, s.shard.name());
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            return new Reading("", 0, 0, 0, 0, false);
          }
          return new Reading(
              rs.getString(1),
              rs.getLong(2),
              rs.getLong(3),
              rs.getLong(4),
              rs.getLong(5),
              rs.getLong(6) != 0);
        }
      }
    } catch (SQLException e) {
      closeQuietly(s);
      return null;
    }
  }

  private static void closeQuietly(ShardState s) {
    if (s.connection != null) {
      try {
        s.connection.close();
      } catch (SQLException ignored) {
        // Broken anyway.
      }
      s.connection = null;
    }
  }

  private static long wallNs() {
    Instant i = Instant.now();
    return i.getEpochSecond() * 1_000_000_000L + i.getNano();
  }

  /** Stops watching; a gap still open counts up to now. */
  @Override
  public void close() {
    running = false;
    thread.interrupt();
    try {
      thread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    synchronized (this) {
      long mono = System.nanoTime();
      for (ShardState s : shards) {
        if (counting && s.downSinceMono >= 0) {
          gaps.add(
              new Gap(
                  s.shard.name(),
                  s.cause + " (still without a leader at the end)",
                  TimeUnit.NANOSECONDS.toMillis(mono - s.downSinceMono),
                  "-"));
          s.downSinceMono = -1;
        }
        closeQuietly(s);
      }
      counting = false;
    }
  }
}
