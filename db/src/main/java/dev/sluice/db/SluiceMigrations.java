package dev.sluice.db;

import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;

/**
 * Applies Flyway migrations to a shard: Sluice's own tables (history in {@code
 * sluice_schema_history}) and, optionally, the user's migrations that create and change queue
 * tables (history in Flyway's default {@code flyway_schema_history}).
 */
public final class SluiceMigrations {
  /** Where Sluice's own migrations live on the classpath. */
  public static final String SLUICE_LOCATION = "classpath:db/sluice";

  public static final String SLUICE_HISTORY_TABLE = "sluice_schema_history";

  private SluiceMigrations() {}

  /** What one migrate run did. */
  public record Result(int sluiceApplied, int userApplied, String userVersion) {}

  /** Applies Sluice's own migrations. */
  public static int migrateSluice(DataSource ds) {
    MigrateResult r =
        Flyway.configure()
            .dataSource(ds)
            .locations(SLUICE_LOCATION)
            .table(SLUICE_HISTORY_TABLE)
            .baselineOnMigrate(true)
            .baselineVersion("0")
            .load()
            .migrate();
    return r.migrationsExecuted;
  }

  /**
   * Applies Sluice's migrations, then the user's from {@code userLocations} (Flyway locations such
   * as {@code filesystem:db/migration} or {@code classpath:db/app}).
   */
  public static Result migrate(DataSource ds, List<String> userLocations) {
    int own = migrateSluice(ds);
    if (userLocations == null || userLocations.isEmpty()) {
      return new Result(own, 0, null);
    }
    MigrateResult r =
        Flyway.configure()
            .dataSource(ds)
            .locations(new ArrayList<>(userLocations).toArray(String[]::new))
            .baselineOnMigrate(true)
            .baselineVersion("0")
            .load()
            .migrate();
    return new Result(own, r.migrationsExecuted, r.targetSchemaVersion);
  }
}
