-- sluice_queue_control: operator switches per queue, written by the sluice CLI
-- (`sluice queue pause|resume NAME`) and read by every manager at each
-- discovery round. A queue without a row runs normally.
--
-- paused:     1 = nothing new is dispatched; acks, nacks and timeouts go on.
-- changed_ns: when the row last changed, ns since the epoch (database clock).
CREATE TABLE sluice_queue_control (
  queue        VARCHAR(64)  NOT NULL,
  paused       TINYINT      NOT NULL DEFAULT 0,
  changed_ns   BIGINT       NOT NULL DEFAULT 0,
  PRIMARY KEY (queue)
) ENGINE=InnoDB COMMENT='Sluice operator switches per queue';
