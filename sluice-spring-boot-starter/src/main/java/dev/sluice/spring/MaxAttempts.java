package dev.sluice.spring;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A queue's {@code max_attempts}, to tell a listener's last attempt: the setting of {@code
 * sluice.listeners.<id>.max-attempts} if any, else the {@code max_attempts=N} of the queue table's
 * comment, read once through the application's DataSource when first needed, else 20 (the
 * convention's default). As the manager decides it: an event dies at every multiple of max_attempts
 * (a replayed dead event keeps its epoch and gets max_attempts more).
 */
final class MaxAttempts {
  private static final Logger log = LoggerFactory.getLogger(MaxAttempts.class);
  static final int DEFAULT = 20;
  private static final Pattern OPTION = Pattern.compile("(?:^|\\s)max_attempts\\s*=\\s*(\\d+)");

  private final String queue;
  private final Integer configured;
  private final DataSource dataSource; // may be null
  private volatile int known; // 0 until looked up

  MaxAttempts(String queue, Integer configured, DataSource dataSource) {
    this.queue = queue;
    this.configured = configured;
    this.dataSource = dataSource;
  }

  boolean isLastAttempt(long attempt) {
    int max = get();
    return attempt >= max && attempt % max == 0;
  }

  int get() {
    if (configured != null && configured > 0) {
      return configured;
    }
    int k = known;
    if (k == 0) {
      k = lookUp();
      known = k;
    }
    return k;
  }

  private int lookUp() {
    if (dataSource == null) {
      return DEFAULT;
    }
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT TABLE_COMMENT FROM information_schema.TABLES"
                    + " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?")) {
      ps.setString(1, queue);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? parse(rs.getString(1)) : DEFAULT;
      }
    } catch (SQLException | RuntimeException e) {
      log.warn(
          "queue {}: cannot read max_attempts from the table comment ({}); taking {}",
          queue,
          e.toString(),
          DEFAULT);
      return DEFAULT;
    }
  }

  static int parse(String comment) {
    if (comment == null) {
      return DEFAULT;
    }
    Matcher m = OPTION.matcher(comment);
    if (m.find()) {
      try {
        int n = Integer.parseInt(m.group(1));
        return n > 0 ? n : DEFAULT;
      } catch (NumberFormatException e) {
        return DEFAULT;
      }
    }
    return DEFAULT;
  }
}
