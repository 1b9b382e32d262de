-- The fence of each shard's leadership: which lease token may change the
-- shard's events. Written only when the lease changes hands, in the same
-- transaction as the take that grows sluice_lease.token; never by a renewal.
--
-- Every state change a leader makes ends with
--   AND EXISTS (SELECT 1 FROM sluice_fence WHERE shard = ? AND token = ?)
-- which (under REPEATABLE READ) share-locks this row for the statement or its
-- transaction. A takeover's write of the row therefore waits for the old
-- leader's statements in progress, and once it commits every later write of
-- the old leader matches nothing. Renewals write sluice_lease only, so a
-- fenced write that waits on an application's row lock never delays one.
CREATE TABLE sluice_fence (
  shard        VARCHAR(64)  NOT NULL,
  owner        VARCHAR(128) NOT NULL DEFAULT '',
  token        BIGINT       NOT NULL DEFAULT 0,
  PRIMARY KEY (shard)
) ENGINE=InnoDB COMMENT='Sluice: the lease token allowed to write each shard';
