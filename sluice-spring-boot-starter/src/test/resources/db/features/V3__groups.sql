-- Event groups: children in grouped_events (sendInGroup), the completion event in
-- group_done_events (sendGroupCompletion), delivered once every child is settled.
CREATE TABLE grouped_events (
  `id` BIGINT NOT NULL AUTO_INCREMENT,
  `time_next` BIGINT NOT NULL DEFAULT (CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000000 AS SIGNED)),
  `state` TINYINT NOT NULL DEFAULT 0,
  `epoch` INT NOT NULL DEFAULT 0,
  `priority` TINYINT NOT NULL DEFAULT 0,
  `tenant` VARCHAR(64) NOT NULL DEFAULT '',
  `time_created` BIGINT NOT NULL DEFAULT (CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000000 AS SIGNED)),
  `time_acked` BIGINT NULL,
  `label` VARCHAR(64) NOT NULL,
  `group_key` VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  PRIMARY KEY (`id`),
  KEY `sluice_poll` (`state`, `time_next`),
  KEY `sluice_tenant` (`state`, `tenant`, `time_next`),
  KEY `sluice_group` (`group_key`)
) ENGINE=InnoDB COMMENT='sluice_queue ack_wait=60s';

CREATE TABLE group_done_events (
  `id` BIGINT NOT NULL AUTO_INCREMENT,
  `time_next` BIGINT NOT NULL DEFAULT (CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000000 AS SIGNED)),
  `state` TINYINT NOT NULL DEFAULT 0,
  `epoch` INT NOT NULL DEFAULT 0,
  `priority` TINYINT NOT NULL DEFAULT 0,
  `tenant` VARCHAR(64) NOT NULL DEFAULT '',
  `time_created` BIGINT NOT NULL DEFAULT (CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000000 AS SIGNED)),
  `time_acked` BIGINT NULL,
  `label` VARCHAR(64) NOT NULL,
  `completes_group` VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  PRIMARY KEY (`id`),
  KEY `sluice_poll` (`state`, `time_next`),
  KEY `sluice_tenant` (`state`, `tenant`, `time_next`)
) ENGINE=InnoDB COMMENT='sluice_queue ack_wait=60s';
