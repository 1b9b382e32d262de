package dev.sluice.spring;

import dev.sluice.db.schedule.CatchUp;
import dev.sluice.db.schedule.Schedule;
import dev.sluice.db.store.JdbcScheduleStore;
import java.util.List;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.InitializingBean;

/**
 * Writes the application's {@link SluiceSchedule} beans into {@code sluice_schedule} when the bean
 * is made (after Sluice's migrations, when the starter applies them): each is checked (name, cron
 * expression, zone, columns; a bad one fails the start, naming it) and created or updated. Needs
 * {@code dev.sluice:sluice-db} on the class path.
 */
public class SluiceSchedulesRunner implements InitializingBean {
  private static final Logger log = LoggerFactory.getLogger(SluiceSchedulesRunner.class);

  private final DataSource dataSource;
  private final List<SluiceSchedule> schedules;

  public SluiceSchedulesRunner(DataSource dataSource, List<SluiceSchedule> schedules) {
    this.dataSource = dataSource;
    this.schedules = List.copyOf(schedules);
  }

  @Override
  public void afterPropertiesSet() {
    List<Schedule> checked =
        schedules.stream()
            .map(
                s ->
                    Schedule.create(
                        s.name(),
                        s.queue(),
                        s.cron(),
                        s.every(),
                        s.zone(),
                        s.columns(),
                        CatchUp.parse(s.catchUp())))
            .toList();
    JdbcScheduleStore store = new JdbcScheduleStore(dataSource);
    for (Schedule s : checked) {
      try {
        boolean changed = store.upsert(s);
        log.info(
            "Sluice schedule {} ({} into queue {}): {}",
            s.name(),
            s.describe(),
            s.queue(),
            changed ? "written" : "unchanged");
      } catch (RuntimeException e) {
        throw new IllegalStateException(
            "Sluice schedule "
                + s.name()
                + " (queue "
                + s.queue()
                + "): could not be written to sluice_schedule ("
                + e.getMessage()
                + "); are Sluice's tables there? Run 'sluice migrate' or set"
                + " sluice.migrations.enabled=true",
            e);
      }
    }
  }
}
