package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;

/** The migrations opt-in, on a fresh database: off by default, Sluice's own tables when on. */
class SluiceMigrationsTest {
  private static final String COUNT =
      "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()"
          + " AND TABLE_NAME IN ('sluice_schema_history', 'sluice_lease')";

  private ApplicationContextRunner runner(TestDatabase db) {
    return new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(DataSourceAutoConfiguration.class, SluiceAutoConfiguration.class))
        .withPropertyValues(
            "spring.datasource.url=" + db.url(),
            "spring.datasource.username=" + db.user(),
            "spring.datasource.password=" + (db.password() == null ? "" : db.password()));
  }

  @Test
  void offByDefaultAndSluiceTablesWhenOn() {
    TestDatabase db = TestDatabases.fresh(SluiceMigrationsTest.class);
    runner(db)
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed().doesNotHaveBean(SluiceMigrationsRunner.class);
              assertThat(
                      new JdbcTemplate(ctx.getBean(javax.sql.DataSource.class))
                          .queryForObject(COUNT, Integer.class))
                  .isZero();
            });
    runner(db)
        .withPropertyValues("sluice.migrations.enabled=true")
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed().hasSingleBean(SluiceMigrationsRunner.class);
              assertThat(
                      new JdbcTemplate(ctx.getBean(javax.sql.DataSource.class))
                          .queryForObject(COUNT, Integer.class))
                  .isEqualTo(2);
            });
  }
}
