-- Event groups: one row per sealed group of the shard (README, "Event
-- groups"). Children are rows of any queue table with a `group_key` column;
-- the completion event is a row of a queue table with a `completes_group`
-- column. The shard's leader writes this row when its poll first reads the
-- completion event (the group is sealed: the completion event is held, out
-- of every poll's range), and completes it once no child of the group is
-- pending or fired any more: counts, state 'completed' and the release of
-- the completion event, in one transaction conditioned on sluice_fence, so
-- the completion event is released exactly once.
--
-- group_key:        the group's key (the children's group_key).
-- state:            'sealed' (waiting for its children) or 'completed'.
-- completion_queue: the queue table of the completion event.
-- completion_id:    its id; completion_epoch: its epoch when it was held.
-- on_dead:          the completion queue's group_on_dead when sealed:
--                   'wait_all' or 'fail_fast'.
-- sealed_ns, completed_ns: when (database clock, ns since the epoch).
-- acked, dead, cancelled: the children in each end state at completion.
CREATE TABLE sluice_group (
  group_key        VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  state            VARCHAR(16)   NOT NULL,
  completion_queue VARCHAR(64)   NOT NULL,
  completion_id    BIGINT        NOT NULL,
  completion_epoch BIGINT        NOT NULL,
  on_dead          VARCHAR(16)   NOT NULL DEFAULT 'wait_all',
  sealed_ns        BIGINT        NOT NULL,
  completed_ns     BIGINT        NULL,
  acked            BIGINT        NOT NULL DEFAULT 0,
  dead             BIGINT        NOT NULL DEFAULT 0,
  cancelled        BIGINT        NOT NULL DEFAULT 0,
  PRIMARY KEY (group_key),
  KEY sluice_group_state (state, sealed_ns)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='Sluice event groups';
