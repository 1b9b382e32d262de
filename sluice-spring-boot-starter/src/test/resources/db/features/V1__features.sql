-- Queues of SluiceListenerFeaturesTest.
-- Two listeners share it.
CREATE TABLE shared_events (
  `id` BIGINT NOT NULL AUTO_INCREMENT,
  `time_next` BIGINT NOT NULL DEFAULT (CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000000 AS SIGNED)),
  `state` TINYINT NOT NULL DEFAULT 0,
  `epoch` INT NOT NULL DEFAULT 0,
  `priority` TINYINT NOT NULL DEFAULT 0,
  `tenant` VARCHAR(64) NOT NULL DEFAULT '',
  `time_created` BIGINT NOT NULL DEFAULT (CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000000 AS SIGNED)),
  `time_acked` BIGINT NULL,
  `label` VARCHAR(64) NOT NULL,
  PRIMARY KEY (`id`),
  KEY `sluice_poll` (`state`, `time_next`),
  KEY `sluice_tenant` (`state`, `tenant`, `time_next`)
) ENGINE=InnoDB COMMENT='sluice_queue ack_wait=60s';

-- Its listener does not start with the context; the test drives it through the registry.
CREATE TABLE late_events (
  `id` BIGINT NOT NULL AUTO_INCREMENT,
  `time_next` BIGINT NOT NULL DEFAULT (CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000000 AS SIGNED)),
  `state` TINYINT NOT NULL DEFAULT 0,
  `epoch` INT NOT NULL DEFAULT 0,
  `priority` TINYINT NOT NULL DEFAULT 0,
  `tenant` VARCHAR(64) NOT NULL DEFAULT '',
  `time_created` BIGINT NOT NULL DEFAULT (CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000000 AS SIGNED)),
  `time_acked` BIGINT NULL,
  `label` VARCHAR(64) NOT NULL,
  PRIMARY KEY (`id`),
  KEY `sluice_poll` (`state`, `time_next`),
  KEY `sluice_tenant` (`state`, `tenant`, `time_next`)
) ENGINE=InnoDB COMMENT='sluice_queue ack_wait=60s';

-- Its listener always fails: dead after two attempts.
CREATE TABLE doomed_events (
  `id` BIGINT NOT NULL AUTO_INCREMENT,
  `time_next` BIGINT NOT NULL DEFAULT (CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000000 AS SIGNED)),
  `state` TINYINT NOT NULL DEFAULT 0,
  `epoch` INT NOT NULL DEFAULT 0,
  `priority` TINYINT NOT NULL DEFAULT 0,
  `tenant` VARCHAR(64) NOT NULL DEFAULT '',
  `time_created` BIGINT NOT NULL DEFAULT (CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000000 AS SIGNED)),
  `time_acked` BIGINT NULL,
  `label` VARCHAR(64) NOT NULL,
  PRIMARY KEY (`id`),
  KEY `sluice_poll` (`state`, `time_next`),
  KEY `sluice_tenant` (`state`, `tenant`, `time_next`)
) ENGINE=InnoDB COMMENT='sluice_queue ack_wait=60s min_backoff=50ms max_backoff=100ms max_attempts=2';

-- Ordered by account: its listener reads the ordering key from EventMetadata.
CREATE TABLE ordered_events (
  `id` BIGINT NOT NULL AUTO_INCREMENT,
  `time_next` BIGINT NOT NULL DEFAULT (CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000000 AS SIGNED)),
  `state` TINYINT NOT NULL DEFAULT 0,
  `epoch` INT NOT NULL DEFAULT 0,
  `priority` TINYINT NOT NULL DEFAULT 0,
  `tenant` VARCHAR(64) NOT NULL DEFAULT '',
  `time_created` BIGINT NOT NULL DEFAULT (CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000000 AS SIGNED)),
  `time_acked` BIGINT NULL,
  `account` VARCHAR(64) NULL,
  `label` VARCHAR(64) NOT NULL,
  PRIMARY KEY (`id`),
  KEY `sluice_poll` (`state`, `time_next`),
  KEY `sluice_tenant` (`state`, `tenant`, `time_next`),
  KEY `sluice_ordering` (`account`, `state`, `id`)
) ENGINE=InnoDB COMMENT='sluice_queue ack_wait=60s ordering=key ordering_column=account';
