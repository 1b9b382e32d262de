package dev.sluice.examples.spring;

import dev.sluice.spring.SluiceProducer;
import java.math.BigDecimal;
import java.sql.PreparedStatement;
import java.sql.Statement;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.support.GeneratedKeyHolder;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Places orders; each order's event commits, or rolls back, with the order. */
@Service
public class Orders {
  private final JdbcTemplate jdbc;
  private final SluiceProducer sluice;

  public Orders(JdbcTemplate jdbc, SluiceProducer sluice) {
    this.jdbc = jdbc;
    this.sluice = sluice;
  }

  /** Inserts the order and its event in one transaction; returns the order id. */
  @Transactional
  public long place(String customer, BigDecimal amount) {
    long orderId = insertOrder(customer, amount);
    sluice
        .to("order_events")
        .tenant(customer)
        .column("order_id", orderId)
        .json("payload", new OrderPlaced(orderId, customer, amount))
        .send();
    if (amount.signum() <= 0) {
      // Thrown after the event was inserted: the whole transaction, event included, rolls back.
      throw new IllegalArgumentException("order " + orderId + ": amount must be positive");
    }
    return orderId;
  }

  private long insertOrder(String customer, BigDecimal amount) {
    GeneratedKeyHolder key = new GeneratedKeyHolder();
    jdbc.update(
        c -> {
          PreparedStatement ps =
              c.prepareStatement(
                  "INSERT INTO orders (customer, amount) VALUES (?, ?)",
                  Statement.RETURN_GENERATED_KEYS);
          ps.setString(1, customer);
          ps.setBigDecimal(2, amount);
          return ps;
        },
        key);
    return key.getKey().longValue();
  }
}
