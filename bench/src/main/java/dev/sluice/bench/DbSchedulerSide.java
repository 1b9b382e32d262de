package dev.sluice.bench;

import com.github.kagkarlsson.scheduler.Scheduler;
import com.github.kagkarlsson.scheduler.event.AbstractSchedulerListener;
import com.github.kagkarlsson.scheduler.jdbc.MySQL8JdbcCustomization;
import com.github.kagkarlsson.scheduler.task.ExecutionComplete;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * db-scheduler (com.github.kagkarlsson:db-scheduler) on the same server, configured as
 * BENCH-NOTES.md found best on this machine: {@code MySQL8JdbcCustomization(true)} forced (its
 * auto-detection picks a mode without lock-and-fetch on MariaDB), lock-and-fetch polling, 8
 * threads, 100 ms polling interval, timestamps persisted in UTC, a Hikari pool of 12.
 */
public final class DbSchedulerSide implements AutoCloseable {
  public static final String TASK = "bench";

  /**
   * The table as db-scheduler documents it for MariaDB (its {@code mariadb_tables.sql}), with
   * {@code datetime(6)} timestamps and the index on {@code execution_time} its poll uses.
   */
  public static final String DDL =
      """
      CREATE TABLE scheduled_tasks (
        task_name VARCHAR(100) NOT NULL,
        task_instance VARCHAR(100) NOT NULL,
        task_data BLOB,
        execution_time DATETIME(6) NOT NULL,
        picked BOOLEAN NOT NULL,
        picked_by VARCHAR(50),
        last_success DATETIME(6) NULL,
        last_failure DATETIME(6) NULL,
        consecutive_failures INT,
        last_heartbeat DATETIME(6) NULL,
        version BIGINT NOT NULL,
        priority SMALLINT,
        PRIMARY KEY (task_name, task_instance),
        INDEX execution_time_idx (execution_time),
        INDEX last_heartbeat_idx (last_heartbeat),
        INDEX priority_execution_time_idx (priority DESC, execution_time ASC)
      ) ENGINE=InnoDB
      """;

  /** The tuning stated in BENCHMARKS.md; {@code pollingInterval} is an option of the workloads. */
  public record Settings(
      int threads, Duration pollingInterval, double lowerLimit, double upperLimit, int poolSize) {
    public static Settings defaults(Duration polling) {
      return new Settings(8, polling, 0.5, 4.0, 12);
    }

    @Override
    public String toString() {
      return String.format(
          "threads=%d polling=%dms lock-and-fetch(%.1f, %.1f) MySQL8JdbcCustomization(true)"
              + " with microsecond instants, pool=%d",
          threads, pollingInterval.toMillis(), lowerLimit, upperLimit, poolSize);
    }
  }

  public final Database db;
  private final Settings settings;
  private HikariDataSource pool;
  private Scheduler scheduler;
  private final AtomicLong completed = new AtomicLong();
  private final AtomicLong firstExecutionNs = new AtomicLong();

  public DbSchedulerSide(Database db, Settings settings) {
    this.db = db;
    this.settings = settings;
  }

  public void createTable() throws SQLException {
    db.exec(DDL);
  }

  /**
   * Starts the scheduler; {@code onExecute} gets each execution's scheduled time (ns since the
   * epoch, as stored: the database's clock) when its handler runs.
   */
  public void start(LongConsumer onExecute) {
    pool = db.pool("dbs-" + db.name(), settings.poolSize());
    OneTimeTask<Void> task =
        Tasks.oneTime(TASK)
            .execute(
                (inst, ctx) -> {
                  firstExecutionNs.compareAndSet(0, System.nanoTime());
                  Instant due = ctx.getExecution().executionTime;
                  onExecute.accept(due.getEpochSecond() * 1_000_000_000L + due.getNano());
                });
    scheduler =
        Scheduler.create(pool, task)
            .threads(settings.threads())
            .pollingInterval(settings.pollingInterval())
            .pollUsingLockAndFetch(settings.lowerLimit(), settings.upperLimit())
            .jdbcCustomization(new FractionalSecondsMySql8())
            .alwaysPersistTimestampInUTC()
            .addSchedulerListener(
                new AbstractSchedulerListener() {
                  @Override
                  public void onExecutionComplete(ExecutionComplete done) {
                    completed.incrementAndGet();
                  }
                })
            .build();
    scheduler.start();
  }

  /** Executions completed: handler ran and the one-time task's row was deleted. */
  public long completed() {
    return completed.get();
  }

  /** System.nanoTime() of the first handler call, 0 before it. */
  public long firstExecutionNs() {
    return firstExecutionNs.get();
  }

  /** Inserts {@code n} tasks due now (by the database's UTC clock) with 100-row INSERTs. */
  public void insertDueNow(long n, String idPrefix, LongConsumer progress) throws SQLException {
    try (Connection c = db.connect()) {
      long done = 0;
      while (done < n) {
        int k = (int) Math.min(100, n - done);
        try (PreparedStatement ps = c.prepareStatement(insertSql(k))) {
          for (int i = 0; i < k; i++) {
            ps.setString(i + 1, idPrefix + (done + i));
          }
          ps.executeUpdate();
        }
        done += k;
        progress.accept(done);
      }
    }
  }

  /** One task due now, as an application would add it in its own transaction. */
  public static String insertOneSql() {
    return insertSql(1);
  }

  private static String insertSql(int k) {
    StringBuilder sb =
        new StringBuilder(
            "INSERT INTO scheduled_tasks (task_name, task_instance, task_data, execution_time,"
                + " picked, version, priority) VALUES ");
    for (int i = 0; i < k; i++) {
      sb.append(i == 0 ? "" : ",").append("('" + TASK + "', ?, NULL, UTC_TIMESTAMP(6), 0, 1, 0)");
    }
    return sb.toString();
  }

  /**
   * {@code MySQL8JdbcCustomization(true)} — lock-and-fetch with {@code SELECT ... FOR UPDATE SKIP
   * LOCKED}, timestamps in UTC — binding instants with their microseconds.
   *
   * <p>Connector/J sees MariaDB as version {@code 5.5.5-10.x}, older than 5.6.4, and so drops the
   * fraction of every {@code Timestamp} or {@code LocalDateTime} it binds. db-scheduler's poll
   * ({@code execution_time <= ?}) would then only see tasks due before the current whole second,
   * adding 0.5 s on average to every task inserted with a precise due time. Bound as text, the
   * value keeps its microseconds, as the driver would send it to a server it recognised.
   */
  static final class FractionalSecondsMySql8 extends MySQL8JdbcCustomization {
    private static final DateTimeFormatter MICROS =
        DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSSSSS").withZone(ZoneOffset.UTC);

    FractionalSecondsMySql8() {
      super(true);
    }

    @Override
    public void setInstant(PreparedStatement p, int index, Instant value) throws SQLException {
      if (value == null) {
        p.setNull(index, Types.TIMESTAMP);
      } else {
        p.setString(index, MICROS.format(value));
      }
    }
  }

  @Override
  public void close() {
    if (scheduler != null) {
      scheduler.stop();
    }
    if (pool != null) {
      pool.close();
    }
  }
}
