package dev.sluice.examples.demo;

import ch.qos.logback.classic.Level;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the demo's stdout readable: the manager's INFO logs (stderr) would drown the progress
 * lines. Done in code rather than in logback.xml, because the same jar also runs {@code sluice
 * serve}, whose INFO logs are wanted.
 */
final class DemoLogging {
  private DemoLogging() {}

  /** Root level WARN, unless the user chose a level with SLUICE_LOG_LEVEL. */
  static void quiet() {
    if (System.getenv("SLUICE_LOG_LEVEL") != null) {
      return;
    }
    setLevel(Logger.ROOT_LOGGER_NAME, Level.WARN);
    // The receiver SDK warns, with a stack trace, about every handler that throws. The demo's
    // failures are on purpose and counted in the progress lines, so they would only be noise.
    setLevel("dev.sluice.receiver.Dispatcher", Level.ERROR);
    // With --chaos, managers and the database go away on purpose: receivers reconnecting, pools
    // dropping dead connections and the server's own complaints are expected, and the progress
    // lines say what happened. The managers' logs (in their own files) keep every detail.
    setLevel("dev.sluice.receiver.Connector", Level.ERROR);
    setLevel("com.zaxxer.hikari", Level.ERROR);
    setLevel("ch.vorburger", Level.OFF);
    // With --outlet, the broker is stopped on purpose: its clients' reconnect warnings and the
    // channel's "broker down" are expected, and the progress lines say what happened.
    setLevel("org.apache.kafka", Level.ERROR);
    setLevel("kafka", Level.ERROR);
    setLevel("org.apache.qpid", Level.ERROR);
    setLevel("com.rabbitmq", Level.ERROR);
    setLevel("dev.sluice.manager.channel", Level.ERROR);
  }

  private static void setLevel(String logger, Level level) {
    // Another SLF4J backend may be bound when the demo is embedded elsewhere; leave it alone.
    if (LoggerFactory.getLogger(logger) instanceof ch.qos.logback.classic.Logger logback) {
      logback.setLevel(level);
    }
  }
}
