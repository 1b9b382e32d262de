-- The group index without `state` (README "Event groups"): a child's fire and ack then leave it
-- alone, and the manager's check of a group reads on from the group's first open child. This is
-- how a DBA moves a grouped queue created by an earlier version; group_b_events keeps its
-- (group_key, state) index, which still works (each check reads one entry of it, but it moves at
-- every fire and ack), so the demo's groups, whose children are in both tables, check both kinds.
ALTER TABLE `group_a_events` DROP KEY `sluice_group`, ADD KEY `sluice_group` (`group_key`);
