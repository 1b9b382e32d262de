-- Why an event is dead, one row per dead event of any queue table on the shard.
-- Written in the same transaction as the event's change to dead (max_attempts
-- reached, a row Sluice cannot read or fire), read by `sluice dead list`, and
-- removed when the event is replayed or purged.
--
-- epoch:   the event's epoch when it was made dead.
-- reason:  a short text, truncated to fit.
-- time_ns: when it was made dead, ns since the epoch (database clock).
CREATE TABLE sluice_dead_reason (
  queue        VARCHAR(64)   NOT NULL,
  id           BIGINT        NOT NULL,
  epoch        BIGINT        NOT NULL DEFAULT 0,
  reason       VARCHAR(1024) NOT NULL DEFAULT '',
  time_ns      BIGINT        NOT NULL DEFAULT 0,
  PRIMARY KEY (queue, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='Sluice: why each dead event died';
