-- Sluice's own tables, on every shard's primary.
--
-- sluice_lease: one row per shard. The manager holding the row's unexpired
-- lease is the only one dispatching that shard's queues. `token` is a fencing
-- token that grows on every change of owner.
CREATE TABLE sluice_lease (
  shard        VARCHAR(64)  NOT NULL,
  owner        VARCHAR(128) NOT NULL DEFAULT '',
  token        BIGINT       NOT NULL DEFAULT 0,
  expires_ns   BIGINT       NOT NULL DEFAULT 0,
  renewed_ns   BIGINT       NOT NULL DEFAULT 0,
  PRIMARY KEY (shard)
) ENGINE=InnoDB COMMENT='Sluice shard leadership leases';
