package dev.sluice.db;

import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * The shard's secrets in {@code sluice_secret}: created once, at random, by the first manager that
 * needs them ({@code INSERT IGNORE}, so racing managers agree on the first), then read by all.
 */
public final class ShardSecrets {
  public static final String DELIVERY_KEY = "delivery_key";
  private static final SecureRandom RANDOM = new SecureRandom();

  private ShardSecrets() {}

  /**
   * The shard's delivery-token key (32 bytes), created if missing.
   *
   * @throws IllegalStateException when the database cannot be read (the message has no secret)
   */
  public static byte[] deliveryKey(DataSource ds) {
    try {
      return readOrCreate(ds);
    } catch (SQLException e) {
      throw new IllegalStateException("cannot read sluice_secret: " + e.getMessage(), e);
    }
  }

  private static byte[] readOrCreate(DataSource ds) throws SQLException {
    byte[] fresh = new byte[32];
    RANDOM.nextBytes(fresh);
    try (Connection c = ds.getConnection()) {
      try (PreparedStatement p =
          c.prepareStatement("INSERT IGNORE INTO sluice_secret (name, value) VALUES (?, ?)")) {
        p.setString(1, DELIVERY_KEY);
        p.setBytes(2, fresh);
        p.executeUpdate();
      }
      try (PreparedStatement p =
          c.prepareStatement("SELECT value FROM sluice_secret WHERE name = ?")) {
        p.setString(1, DELIVERY_KEY);
        try (ResultSet r = p.executeQuery()) {
          if (!r.next()) {
            throw new SQLException("sluice_secret has no " + DELIVERY_KEY + " after inserting it");
          }
          return r.getBytes(1);
        }
      }
    }
  }
}
