-- Secrets a shard's managers share through the shard itself, created once
-- by whichever manager comes first (INSERT IGNORE) and never shown:
-- `delivery_key` signs the delivery tokens that bind an ack to the receiver
-- its event was sent to, so any manager of the shard can verify them.
CREATE TABLE sluice_secret (
  name   VARCHAR(64)    NOT NULL,
  value  VARBINARY(64)  NOT NULL,
  PRIMARY KEY (name)
) ENGINE=InnoDB COMMENT='Sluice shard secrets';
