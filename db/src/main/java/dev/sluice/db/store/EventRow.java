package dev.sluice.db.store;

import java.util.Map;

/**
 * A pending event as the poller read it.
 *
 * @param userColumns the user data columns, by name, in table order (values: null, Long, Double,
 *     String or byte[])
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
