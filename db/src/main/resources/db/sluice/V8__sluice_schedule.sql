-- Recurring events: one row per schedule of the shard. The shard's leader
-- inserts each occurrence, ahead of time, as an ordinary event row of `queue`
-- with time_next = the occurrence time, in the same transaction as its
-- compare-and-set of next_ns (conditioned on sluice_fence), so each occurrence
-- is inserted exactly once whoever leads. Written by `sluice schedule ...`,
-- by a migration (a plain INSERT of name, queue, cron or every_ms, and the
-- columns wanted; next_ns 0) or by the Spring starter.
--
-- name:         the schedule's name (a label: letters, digits, _ . : -).
-- queue:        the queue table each occurrence is inserted into.
-- cron:         a cron expression: 5 fields (minute hour day-of-month month
--               day-of-week, as crontab) or 6 (seconds first, as Spring's);
--               NULL for an interval schedule.
-- every_ms:     the interval of an interval schedule, in ms (NULL for cron).
-- zone:         the time zone the cron expression is read in (an IANA id).
-- event_columns: the user columns of each occurrence, a JSON object of
--               column -> value ('{}': none; tenant and priority allowed).
-- catch_up:     occurrences missed while no leader ran: 'one' inserts one for
--               them all, 'all' each (at most 1000), 'none' skips them.
-- paused:       1 = no occurrence is inserted; resuming starts from now.
-- next_ns:      the next occurrence to insert, ns since the epoch; 0 = not
--               started yet (the leader computes it from now).
-- last_ns:      the last occurrence inserted (0: none yet).
-- last_id:      the id of the event of that occurrence.
-- changed_ns:   when the row was last changed by an operator (database clock).
CREATE TABLE sluice_schedule (
  name          VARCHAR(128)  NOT NULL,
  queue         VARCHAR(64)   NOT NULL,
  cron          VARCHAR(255)  NULL,
  every_ms      BIGINT        NULL,
  zone          VARCHAR(64)   NOT NULL DEFAULT 'UTC',
  event_columns TEXT          NULL,
  catch_up      VARCHAR(8)    NOT NULL DEFAULT 'one',
  paused        TINYINT       NOT NULL DEFAULT 0,
  next_ns       BIGINT        NOT NULL DEFAULT 0,
  last_ns       BIGINT        NOT NULL DEFAULT 0,
  last_id       BIGINT        NULL,
  changed_ns    BIGINT        NOT NULL DEFAULT 0,
  PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='Sluice recurring events';
