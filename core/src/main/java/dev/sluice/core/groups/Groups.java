package dev.sluice.core.groups;

import dev.sluice.db.QueueTable;
import dev.sluice.db.store.GroupStore;
import java.util.Collection;

/**
 * A queue's link to its shard's event groups (README, "Event groups"): where the queue says that
 * events of a grouped table settled, and the store its poller seals groups with. Implemented by the
 * shard's group closer, one per leadership term; {@link #NONE} before one is given.
 *
 * <p>Any thread may call it; nothing here blocks or reads the database.
 */
public interface Groups {
  /** No groups: nothing is heard, and completion events are not sealed. */
  Groups NONE =
      new Groups() {
        @Override
        public void settled(QueueTable table, Collection<Long> ids) {}

        @Override
        public void childrenSettled(Collection<String> keys) {}

        @Override
        public void sealed(String key) {}

        @Override
        public GroupStore store() {
          return null;
        }
      };

  /**
   * Events {@code ids} of {@code table} became acked, dead or cancelled; their groups are read from
   * the table ({@link #childrenSettled} when the caller knows them).
   */
  void settled(QueueTable table, Collection<Long> ids);

  /**
   * Children of the groups {@code keys} became acked, dead or cancelled (the keys read from the
   * events the queue holds: no read of the table).
   */
  void childrenSettled(Collection<String> keys);

  /** Group {@code key} was just sealed: it may complete at once (an empty group, say). */
  void sealed(String key);

  /** The leader's group store (fenced by the term), or null when there is none. */
  GroupStore store();
}
