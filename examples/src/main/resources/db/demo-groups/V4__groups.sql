-- With `sluice demo --groups` only: event groups (README "Event groups"), deduplication and a
-- recurring event, in one shard.
--
-- A group's children are rows of the two grouped queues group_a_events and group_b_events (a
-- child carries its group's key in group_key); its completion is a row of group_done_events
-- (group_on_dead=wait_all, the default) or group_failfast_events (group_on_dead=fail_fast) whose
-- completes_group names the group. Children and completions carry dedup keys, so that the
-- producer's retries and its deliberate repeats insert nothing twice. The completion handlers
-- record what they saw in group_outcomes, in the transaction that acks the completion.

CREATE TABLE `group_a_events` (
  `id` BIGINT NOT NULL AUTO_INCREMENT,
  `time_next` BIGINT NOT NULL DEFAULT (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000),
  `state` TINYINT NOT NULL DEFAULT 0,
  `epoch` INT NOT NULL DEFAULT 0,
  `priority` TINYINT NOT NULL DEFAULT 0,
  `tenant` VARCHAR(64) NOT NULL DEFAULT '',
  `time_created` BIGINT NOT NULL DEFAULT (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000),
  `time_acked` BIGINT NULL,
  `group_key` VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  `dedup_key` VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  `child_no` INT NOT NULL,
  `doomed` TINYINT NOT NULL DEFAULT 0,
  `copy` TINYINT NOT NULL DEFAULT 0,
  PRIMARY KEY (`id`),
  KEY `sluice_poll` (`state`, `time_next`),
  KEY `sluice_tenant` (`state`, `tenant`, `time_next`),
  KEY `sluice_group` (`group_key`, `state`),
  UNIQUE KEY `sluice_dedup` (`dedup_key`)
) ENGINE=InnoDB COMMENT='sluice_queue ack_wait=5s min_backoff=100ms max_backoff=1s max_attempts=4';

CREATE TABLE `group_b_events` (
  `id` BIGINT NOT NULL AUTO_INCREMENT,
  `time_next` BIGINT NOT NULL DEFAULT (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000),
  `state` TINYINT NOT NULL DEFAULT 0,
  `epoch` INT NOT NULL DEFAULT 0,
  `priority` TINYINT NOT NULL DEFAULT 0,
  `tenant` VARCHAR(64) NOT NULL DEFAULT '',
  `time_created` BIGINT NOT NULL DEFAULT (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000),
  `time_acked` BIGINT NULL,
  `group_key` VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  `dedup_key` VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  `child_no` INT NOT NULL,
  `doomed` TINYINT NOT NULL DEFAULT 0,
  `copy` TINYINT NOT NULL DEFAULT 0,
  PRIMARY KEY (`id`),
  KEY `sluice_poll` (`state`, `time_next`),
  KEY `sluice_tenant` (`state`, `tenant`, `time_next`),
  KEY `sluice_group` (`group_key`, `state`),
  UNIQUE KEY `sluice_dedup` (`dedup_key`)
) ENGINE=InnoDB COMMENT='sluice_queue ack_wait=5s min_backoff=100ms max_backoff=1s max_attempts=4';

CREATE TABLE `group_done_events` (
  `id` BIGINT NOT NULL AUTO_INCREMENT,
  `time_next` BIGINT NOT NULL DEFAULT (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000),
  `state` TINYINT NOT NULL DEFAULT 0,
  `epoch` INT NOT NULL DEFAULT 0,
  `priority` TINYINT NOT NULL DEFAULT 0,
  `tenant` VARCHAR(64) NOT NULL DEFAULT '',
  `time_created` BIGINT NOT NULL DEFAULT (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000),
  `time_acked` BIGINT NULL,
  `completes_group` VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  `dedup_key` VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  `group_size` INT NOT NULL,
  `copy` TINYINT NOT NULL DEFAULT 0,
  PRIMARY KEY (`id`),
  KEY `sluice_poll` (`state`, `time_next`),
  KEY `sluice_tenant` (`state`, `tenant`, `time_next`),
  KEY `demo_completes_group` (`completes_group`),
  UNIQUE KEY `sluice_dedup` (`dedup_key`)
) ENGINE=InnoDB COMMENT='sluice_queue ack_wait=5s min_backoff=100ms max_backoff=1s max_attempts=100';

CREATE TABLE `group_failfast_events` (
  `id` BIGINT NOT NULL AUTO_INCREMENT,
  `time_next` BIGINT NOT NULL DEFAULT (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000),
  `state` TINYINT NOT NULL DEFAULT 0,
  `epoch` INT NOT NULL DEFAULT 0,
  `priority` TINYINT NOT NULL DEFAULT 0,
  `tenant` VARCHAR(64) NOT NULL DEFAULT '',
  `time_created` BIGINT NOT NULL DEFAULT (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000),
  `time_acked` BIGINT NULL,
  `completes_group` VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  `dedup_key` VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  `group_size` INT NOT NULL,
  `copy` TINYINT NOT NULL DEFAULT 0,
  PRIMARY KEY (`id`),
  KEY `sluice_poll` (`state`, `time_next`),
  KEY `sluice_tenant` (`state`, `tenant`, `time_next`),
  KEY `demo_completes_group` (`completes_group`),
  UNIQUE KEY `sluice_dedup` (`dedup_key`)
) ENGINE=InnoDB COMMENT='sluice_queue ack_wait=5s min_backoff=100ms max_backoff=1s max_attempts=100 group_on_dead=fail_fast';

-- The recurring event's queue: occurrence_ns keeps the occurrence's time (the time_next the
-- schedule inserted it with; time_next itself moves when the event fires), for the checker.
CREATE TABLE `tick_events` (
  `id` BIGINT NOT NULL AUTO_INCREMENT,
  `time_next` BIGINT NOT NULL DEFAULT (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000),
  `state` TINYINT NOT NULL DEFAULT 0,
  `epoch` INT NOT NULL DEFAULT 0,
  `priority` TINYINT NOT NULL DEFAULT 0,
  `tenant` VARCHAR(64) NOT NULL DEFAULT '',
  `time_created` BIGINT NOT NULL DEFAULT (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000),
  `time_acked` BIGINT NULL,
  `source` VARCHAR(32) NULL,
  `occurrence_ns` BIGINT NULL,
  PRIMARY KEY (`id`),
  KEY `sluice_poll` (`state`, `time_next`),
  KEY `sluice_tenant` (`state`, `tenant`, `time_next`)
) ENGINE=InnoDB COMMENT='sluice_queue ack_wait=5s min_backoff=100ms max_backoff=1s max_attempts=100';

CREATE TRIGGER `tick_events_occurrence` BEFORE INSERT ON `tick_events`
  FOR EACH ROW SET NEW.`occurrence_ns` = NEW.`time_next`;

-- What each successful handling of a completion saw, written in the transaction that acks it
-- (TransactionalAck): one row per handling, so a completion handled twice shows as two rows. The
-- children's states as the handler read them, and the counts the event carried (event.group()).
CREATE TABLE `group_outcomes` (
  `id` BIGINT NOT NULL AUTO_INCREMENT,
  `completion_queue` VARCHAR(64) NOT NULL,
  `completion_id` BIGINT NOT NULL,
  `group_key` VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  `open_children` INT NOT NULL,
  `acked` INT NOT NULL,
  `dead` INT NOT NULL,
  `cancelled` INT NOT NULL,
  `early` TINYINT NOT NULL,
  `reported` TINYINT NOT NULL,
  `reported_key` VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  `reported_acked` BIGINT NULL,
  `reported_dead` BIGINT NULL,
  `reported_cancelled` BIGINT NULL,
  `receiver` VARCHAR(64) NOT NULL,
  `attempt` INT NOT NULL,
  PRIMARY KEY (`id`),
  KEY `by_completion` (`completion_queue`, `completion_id`)
) ENGINE=InnoDB;
