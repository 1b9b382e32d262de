-- With `sluice demo --long` only: jobs that take longer than their queue's ack_wait.
--
-- ack_wait is 2 s, but each job's handler works work_ms (4 to 20 s, 2-10 times ack_wait), so it
-- finishes only because the receiver extends its deadline while it works (up to max_hold, 60 s
-- from the fire). Some jobs snooze first (snoozes_wanted times, up to 4, a few seconds each) as if
-- they waited on something outside; the snoozes column counts them, so they spend no attempt:
-- a job snoozed 4 times still has all of its max_attempts=3.
CREATE TABLE `long_events` (
  `id` BIGINT NOT NULL AUTO_INCREMENT,
  `time_next` BIGINT NOT NULL DEFAULT (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000),
  `state` TINYINT NOT NULL DEFAULT 0,
  `epoch` INT NOT NULL DEFAULT 0,
  `priority` TINYINT NOT NULL DEFAULT 0,
  `tenant` VARCHAR(64) NOT NULL DEFAULT '',
  `time_created` BIGINT NOT NULL DEFAULT (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000),
  `time_acked` BIGINT NULL,
  `job_no` INT NOT NULL,
  `work_ms` INT NOT NULL,
  `snoozes_wanted` INT NOT NULL DEFAULT 0,
  `snoozes` INT NOT NULL DEFAULT 0,
  PRIMARY KEY (`id`),
  KEY `sluice_poll` (`state`, `time_next`),
  KEY `sluice_tenant` (`state`, `tenant`, `time_next`)
) ENGINE=InnoDB COMMENT='sluice_queue ack_wait=2s min_backoff=200ms max_backoff=2s max_attempts=3 max_hold=60s';
