package dev.sluice.db.store;

import java.util.Map;

/**
 * A pending event as the poller read it.
 *
 * @param userColumns the user data columns, by name, in table order, with exact values: null, Long,
 *     BigInteger, Double, BigDecimal, String, {@link JsonText}, byte[], Boolean, LocalDate,
 *     LocalDateTime, Instant or Duration (see {@link dev.sluice.db.ColumnKind})
 */
public record EventRow(
    long id,
    long epoch,
    long timeNextNs,
    long timeCreatedNs,
    int priority,
    String tenant,
    String actor,
    String workClass,
    Map<String, Object> userColumns) {}
