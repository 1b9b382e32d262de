-- With `sluice demo --ordered` only: the demo's queue becomes ordered by key. Each event carries
-- its key (an account, say) and its number within that key; the manager delivers a key's events
-- one at a time, in id order, and the demo checks that from the receivers' side.
ALTER TABLE `order_events`
  ADD COLUMN `ordering_key` VARCHAR(255) NULL,
  ADD COLUMN `key_seq` BIGINT NULL,
  ADD INDEX `sluice_ordering` (`ordering_key`, `state`, `id`),
  COMMENT = 'sluice_queue ack_wait=5s min_backoff=200ms max_backoff=2s max_attempts=8 ordering=key';
