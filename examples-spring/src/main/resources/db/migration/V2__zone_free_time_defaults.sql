-- The time defaults of V1 read UNIX_TIMESTAMP(NOW(6)), which depends on the inserting session's
-- time zone: in a zone with daylight saving, the repeated autumn hour is read an hour early.
-- A released migration is never edited: this one changes the defaults.
-- `sluice check` warns of the old form and prints this ALTER.
ALTER TABLE order_events
  MODIFY `time_next` BIGINT NOT NULL
    DEFAULT (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000),
  MODIFY `time_created` BIGINT NOT NULL
    DEFAULT (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000);
