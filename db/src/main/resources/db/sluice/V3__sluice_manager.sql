-- Manager processes announce themselves on every shard they can reach, so
-- that each can count the live managers (M) and hold at most ceil(S/M) of
-- the S shard leases.
CREATE TABLE sluice_manager (
  id            VARCHAR(128) NOT NULL,
  heartbeat_ns  BIGINT       NOT NULL DEFAULT 0,
  PRIMARY KEY (id)
) ENGINE=InnoDB COMMENT='Sluice manager heartbeats';
