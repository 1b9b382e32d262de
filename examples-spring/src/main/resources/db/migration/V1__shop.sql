-- The shop's own tables and its queue, in one migration: `sluice migrate` or Spring's Flyway
-- applies it in production; the tests' SluiceExtension applies it to a fresh database.
CREATE TABLE orders (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  customer VARCHAR(64) NOT NULL,
  amount DECIMAL(10, 2) NOT NULL
) ENGINE=InnoDB;

-- No unique key on order_id on purpose: the listener's transactional ack keeps it to one row.
CREATE TABLE shipments (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  order_id BIGINT NOT NULL,
  customer VARCHAR(64) NOT NULL,
  attempt INT NOT NULL
) ENGINE=InnoDB;

CREATE TABLE order_events (
  `id` BIGINT NOT NULL AUTO_INCREMENT,
  `time_next` BIGINT NOT NULL DEFAULT (CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000000 AS SIGNED)),
  `state` TINYINT NOT NULL DEFAULT 0,
  `epoch` INT NOT NULL DEFAULT 0,
  `priority` TINYINT NOT NULL DEFAULT 0,
  `tenant` VARCHAR(64) NOT NULL DEFAULT '',
  `time_created` BIGINT NOT NULL DEFAULT (CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000000 AS SIGNED)),
  `time_acked` BIGINT NULL,
  `order_id` BIGINT NOT NULL,
  `payload` TEXT NOT NULL,
  PRIMARY KEY (`id`),
  KEY `sluice_poll` (`state`, `time_next`),
  KEY `sluice_tenant` (`state`, `tenant`, `time_next`)
) ENGINE=InnoDB COMMENT='sluice_queue ack_wait=30s min_backoff=100ms max_backoff=1s max_attempts=5';
