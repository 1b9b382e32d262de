package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.time.Duration;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

/** {@link SluiceSchedule} beans are written into {@code sluice_schedule} at startup. */
class SluiceSchedulesTest {
  private ApplicationContextRunner runner(TestDatabase db) {
    return new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(DataSourceAutoConfiguration.class, SluiceAutoConfiguration.class))
        .withPropertyValues(
            "spring.datasource.url=" + db.url(),
            "spring.datasource.username=" + db.user(),
            "spring.datasource.password=" + (db.password() == null ? "" : db.password()),
            "sluice.migrations.enabled=true");
  }

  @Configuration(proxyBeanMethods = false)
  static class Schedules {
    @Bean
    SluiceSchedule nightly() {
      return SluiceSchedule.cron("nightly-report", "reports", "30 2 * * *")
          .zone("Europe/Berlin")
          .column("report", "daily")
          .catchUp("none");
    }

    @Bean
    SluiceSchedule heartbeat() {
      return SluiceSchedule.every("heartbeat", "pings", Duration.ofSeconds(10));
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class Changed {
    @Bean
    SluiceSchedule heartbeat() {
      return SluiceSchedule.every("heartbeat", "pings", Duration.ofSeconds(30));
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class Bad {
    @Bean
    SluiceSchedule bad() {
      return SluiceSchedule.cron("bad", "reports", "61 * * * *");
    }
  }

  @Test
  void beansAreWrittenAndUpdatedAtStartup() {
    TestDatabase db = TestDatabases.fresh(SluiceSchedulesTest.class);
    runner(db)
        .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(SluiceSchedulesRunner.class));
    runner(db)
        .withUserConfiguration(Schedules.class)
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed().hasSingleBean(SluiceSchedulesRunner.class);
              JdbcTemplate sql = new JdbcTemplate(ctx.getBean(DataSource.class));
              Map<String, Object> row =
                  sql.queryForMap(
                      "SELECT queue, cron, zone, event_columns, catch_up FROM sluice_schedule"
                          + " WHERE name = 'nightly-report'");
              assertThat(row)
                  .containsEntry("queue", "reports")
                  .containsEntry("cron", "30 2 * * *")
                  .containsEntry("zone", "Europe/Berlin")
                  .containsEntry("event_columns", "{\"report\":\"daily\"}")
                  .containsEntry("catch_up", "none");
              assertThat(
                      sql.queryForObject(
                          "SELECT every_ms FROM sluice_schedule WHERE name = 'heartbeat'",
                          Long.class))
                  .isEqualTo(10_000L);
              // The leader started both (as it would): next_ns set.
              sql.update("UPDATE sluice_schedule SET next_ns = 123");
            });
    // Restarted unchanged: each keeps its place. Changed: restarted from now (next_ns 0).
    runner(db)
        .withUserConfiguration(Schedules.class)
        .run(
            ctx ->
                assertThat(
                        new JdbcTemplate(ctx.getBean(DataSource.class))
                            .queryForObject(
                                "SELECT COUNT(*) FROM sluice_schedule WHERE next_ns = 123",
                                Integer.class))
                    .isEqualTo(2));
    runner(db)
        .withUserConfiguration(Changed.class)
        .run(
            ctx -> {
              JdbcTemplate sql = new JdbcTemplate(ctx.getBean(DataSource.class));
              assertThat(
                      sql.queryForMap(
                          "SELECT every_ms, next_ns FROM sluice_schedule WHERE name = 'heartbeat'"))
                  .containsEntry("every_ms", 30_000L)
                  .containsEntry("next_ns", 0L);
              assertThat(
                      sql.queryForObject(
                          "SELECT next_ns FROM sluice_schedule WHERE name = 'nightly-report'",
                          Long.class))
                  .as("a bean removed leaves its row")
                  .isEqualTo(123L);
            });
  }

  @Test
  void aBadScheduleFailsTheStartNamingIt() {
    TestDatabase db = TestDatabases.fresh(SluiceSchedulesTest.class);
    runner(db)
        .withUserConfiguration(Bad.class)
        .run(
            ctx ->
                assertThat(ctx)
                    .hasFailed()
                    .getFailure()
                    .hasStackTraceContaining("bad cron expression '61 * * * *'"));
  }
}
