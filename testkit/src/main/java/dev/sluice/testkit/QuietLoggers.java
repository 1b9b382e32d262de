package dev.sluice.testkit;

import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Quietens an embedded server's own loggers without shipping a logging configuration. */
final class QuietLoggers {
  private static final Logger log = LoggerFactory.getLogger(QuietLoggers.class);

  private QuietLoggers() {}

  /**
   * Sets the named loggers to WARN when the logging backend is logback and the application set no
   * level for them; done by reflection, since the testkit does not depend on logback.
   */
  static void warn(List<String> names) {
    for (String name : names) {
      Logger logger = LoggerFactory.getLogger(name);
      if (!logger.getClass().getName().equals("ch.qos.logback.classic.Logger")) {
        return;
      }
      try {
        Object level = logger.getClass().getMethod("getLevel").invoke(logger);
        if (level == null) {
          Class<?> levelClass =
              Class.forName(
                  "ch.qos.logback.classic.Level", true, logger.getClass().getClassLoader());
          Object warn = levelClass.getField("WARN").get(null);
          logger.getClass().getMethod("setLevel", levelClass).invoke(logger, warn);
        }
      } catch (ReflectiveOperationException | RuntimeException e) {
        log.debug("could not quieten logger {}: {}", name, e.toString());
        return;
      }
    }
  }
}
