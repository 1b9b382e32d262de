package dev.sluice.examples.spring;

import dev.sluice.spring.EventMetadata;
import dev.sluice.spring.SluiceListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * Ships each placed order. {@code transactional = true}: the shipment row and the event's ack
 * commit in one transaction, so a crash before the commit leaves neither, and the retry ships the
 * order exactly once.
 */
@Component
public class Shipping {
  private static final Logger log = LoggerFactory.getLogger(Shipping.class);
  private final JdbcTemplate jdbc;

  public Shipping(JdbcTemplate jdbc) {
    this.jdbc = jdbc;
  }

  @SluiceListener(queue = "order_events", payload = "payload", transactional = true)
  public void ship(OrderPlaced order, EventMetadata meta) {
    jdbc.update(
        "INSERT INTO shipments (order_id, customer, attempt) VALUES (?, ?, ?)",
        order.orderId(),
        order.customer(),
        meta.attempt());
    log.info(
        "shipped order {} for {} (attempt {})", order.orderId(), order.customer(), meta.attempt());
  }
}
