package dev.sluice.db;

import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.conf.Settings;
import org.jooq.impl.DSL;

/** The one place jOOQ is configured for Sluice: MySQL dialect (MariaDB speaks it), no logging. */
public final class Jooq {
  static {
    System.setProperty("org.jooq.no-logo", "true");
    System.setProperty("org.jooq.no-tips", "true");
  }

  private static final Settings SETTINGS =
      new Settings().withExecuteLogging(false).withRenderSchema(false).withFetchWarnings(false);

  private Jooq() {}

  public static DSLContext context(DataSource dataSource) {
    return DSL.using(dataSource, SQLDialect.MYSQL, SETTINGS);
  }
}
