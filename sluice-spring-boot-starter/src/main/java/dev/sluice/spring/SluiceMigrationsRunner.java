package dev.sluice.spring;

import dev.sluice.db.SluiceMigrations;
import java.util.List;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.InitializingBean;

/**
 * Applies Sluice's own tables (and {@code sluice.migrations.locations}) to the application's
 * DataSource when the bean is made, before the producer and the listeners: {@code
 * sluice.migrations.enabled=true}, with {@code dev.sluice:sluice-db} (and so Flyway) on the class
 * path. Sluice keeps its own history table ({@code sluice_schema_history}), apart from the
 * application's Flyway history.
 */
public class SluiceMigrationsRunner implements InitializingBean {
  private static final Logger log = LoggerFactory.getLogger(SluiceMigrationsRunner.class);

  private final DataSource dataSource;
  private final List<String> locations;

  public SluiceMigrationsRunner(DataSource dataSource, List<String> locations) {
    this.dataSource = dataSource;
    this.locations = List.copyOf(locations);
  }

  @Override
  public void afterPropertiesSet() {
    SluiceMigrations.Result r = SluiceMigrations.migrate(dataSource, locations);
    log.info(
        "Sluice migrations: {} of Sluice's own applied, {} of {} applied",
        r.sluiceApplied(),
        r.userApplied(),
        locations.isEmpty() ? "no application locations" : locations);
  }
}
