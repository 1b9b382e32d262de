-- The process behind a manager id: a random nonce per process start. Two live
-- processes started with the same manager_id (a copied config, one pid in
-- every container) are told apart by it: the row belongs to the first while
-- it keeps its heartbeat fresh, and the second refuses to lead.
ALTER TABLE sluice_manager ADD COLUMN instance VARCHAR(64) NOT NULL DEFAULT '';
