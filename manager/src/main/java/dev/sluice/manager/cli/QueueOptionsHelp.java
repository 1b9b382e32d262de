package dev.sluice.manager.cli;

/** Help text about queue options, as a compile-time constant for annotations. */
final class QueueOptionsHelp {
  /** {@code QueueOptions.NAMES}, spelled out (a test keeps the two equal). */
  static final String KNOWN =
      "ack_wait, max_hold, min_backoff, max_backoff, max_attempts, max_snoozes, purge_after,"
          + " dedup_window,"
          + " cache_size, poll_interval, max_qps, max_concurrency, max_receivers_per_tenant, fair,"
          + " tenant_cache_share, tenant_max_in_flight, tenant_max_rate, tenant_burst, tenant_reserve,"
          + " actor_max_depth,"
          + " class_shares, max_event_bytes, cache_bytes, channel, channel_target,"
          + " channel_routing_key, channel_target_column, channel_key_column, channel_body,"
          + " channel_receivers, ordering, ordering_column, key_max_in_flight, ordering_on_dead,"
          + " group_on_dead.";

  private QueueOptionsHelp() {}
}
