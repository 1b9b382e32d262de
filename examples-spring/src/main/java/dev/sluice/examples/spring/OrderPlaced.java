package dev.sluice.examples.spring;

import java.math.BigDecimal;

/** The JSON payload of an {@code order_events} event. */
public record OrderPlaced(long orderId, String customer, BigDecimal amount) {}
