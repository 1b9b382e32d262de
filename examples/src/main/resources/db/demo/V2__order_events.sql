-- The demo's queue: a table following the Sluice convention, generated with
-- QueueConvention.createTableSql("order_events", [order_id, customer], comment).
-- Short ack_wait and backoffs keep the demo's retries visible within seconds.
CREATE TABLE `order_events` (
  `id` BIGINT NOT NULL AUTO_INCREMENT,
  `time_next` BIGINT NOT NULL DEFAULT (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000),
  `state` TINYINT NOT NULL DEFAULT 0,
  `epoch` INT NOT NULL DEFAULT 0,
  `priority` TINYINT NOT NULL DEFAULT 0,
  `tenant` VARCHAR(64) NOT NULL DEFAULT '',
  `time_created` BIGINT NOT NULL DEFAULT (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000),
  `time_acked` BIGINT NULL,
  `order_id` BIGINT NOT NULL,
  `customer` VARCHAR(64) NOT NULL,
  PRIMARY KEY (`id`),
  KEY `sluice_poll` (`state`, `time_next`),
  KEY `sluice_tenant` (`state`, `tenant`, `time_next`)
) ENGINE=InnoDB COMMENT='sluice_queue ack_wait=5s min_backoff=200ms max_backoff=2s max_attempts=8';
