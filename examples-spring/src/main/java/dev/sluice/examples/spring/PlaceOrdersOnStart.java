package dev.sluice.examples.spring;

import java.math.BigDecimal;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.stereotype.Component;

/**
 * For a first run without writing code: {@code --shop.place-orders=N} places N orders once the
 * application has started (the customers in turn, positive amounts), each through {@link
 * Orders#place}; {@link Shipping} then ships them. The default, 0, places none.
 */
@Component
public class PlaceOrdersOnStart implements ApplicationRunner {
  private static final Logger log = LoggerFactory.getLogger(PlaceOrdersOnStart.class);
  private static final List<String> CUSTOMERS = List.of("acme", "globex", "initech");

  private final Orders orders;
  private final int count;

  public PlaceOrdersOnStart(Orders orders, @Value("${shop.place-orders:0}") int count) {
    if (count < 0) {
      throw new IllegalArgumentException("shop.place-orders must be >= 0, was " + count);
    }
    this.orders = orders;
    this.count = count;
  }

  @Override
  public void run(ApplicationArguments args) {
    for (int i = 0; i < count; i++) {
      String customer = CUSTOMERS.get(i % CUSTOMERS.size());
      BigDecimal amount = new BigDecimal("10.00").add(BigDecimal.valueOf(i));
      long orderId = orders.place(customer, amount);
      log.info("placed order {} for {} ({})", orderId, customer, amount);
    }
  }
}
