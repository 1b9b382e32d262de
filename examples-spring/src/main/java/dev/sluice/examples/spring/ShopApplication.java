package dev.sluice.examples.spring;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A shop on Sluice: placing an order inserts an {@code order_events} event in the order's own
 * transaction ({@link Orders}); a listener ships each placed order and acks the event in the same
 * transaction as the shipment ({@link Shipping}).
 */
@SpringBootApplication
public class ShopApplication {
  public static void main(String[] args) {
    SpringApplication.run(ShopApplication.class, args);
  }
}
