package dev.sluice.db.store;

import dev.sluice.db.EventState;
import dev.sluice.db.QueueTable;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongPredicate;
import org.jooq.DSLContext;
import org.jooq.Record;

/**
 * An ordered queue's reads of where events stand in their keys ({@link KeySql}): a poll's rows get
 * their {@link KeyPlace} from one more statement over the distinct keys they hold — one index entry
 * per key and state — so a check costs the same whatever a key's backlog; the rows the caller holds
 * as heads already are left out of it. The same per-key figures serve the halted keys. A key's
 * first pending row (a turn, the recheck of held rows) is read by primary key after them.
 *
 * <p>The place is read after the rows, in a snapshot of its own: an event of the key fired or
 * inserted in between makes the row wait (it is checked again at its turn); one settled in between
 * lets it go, as a later read would.
 *
 * <p>Thread-safe: immutable; each call uses its own pooled connection.
 */
final class KeyReads {
  /** The most keys in one statement. */
  static final int MAX_KEYS = 256;

  private final DSLContext ctx;
  private final QueueTable q;
  private final HotSql hot;
  private final KeySql sql;

  /** A key's edges: its first pending, fired and dead event and its last pending one. */
  record Edges(Object key, Long firstPending, Long firstFired, Long firstDead, Long lastPending) {
    /** Where the row {@code id} of this key stands. */
    KeyPlace place(long id, boolean halt) {
      if ((firstPending != null && firstPending < id) || (firstFired != null && firstFired < id)) {
        return KeyPlace.BEHIND;
      }
      return halt && firstDead != null && firstDead < id ? KeyPlace.HALTED : KeyPlace.FIRST;
    }
  }

  KeyReads(DSLContext ctx, QueueTable q, HotSql hot) {
    this.ctx = ctx;
    this.q = q;
    this.hot = hot;
    this.sql = hot.keys();
  }

  private Object keyOf(EventRow r) {
    return sql.oneKey() ? "" : OrderingKeys.normal(r.userColumns().get(q.orderingColumn()));
  }

  /** Each key's edges, by key ({@code dead}: with its first dead and last pending event). */
  Map<Object, Edges> edges(Set<Object> keys, boolean dead) {
    Map<Object, Edges> out = new HashMap<>();
    List<Object> batch = new ArrayList<>();
    for (Object k : keys) {
      batch.add(k);
      if (batch.size() == MAX_KEYS) {
        readEdges(batch, dead, out);
        batch.clear();
      }
    }
    if (!batch.isEmpty() || (sql.oneKey() && keys.isEmpty())) {
      readEdges(batch, dead, out);
    }
    return out;
  }

  private void readEdges(List<Object> keys, boolean dead, Map<Object, Edges> out) {
    hot.read(
        sql.firsts(keys, dead),
        rs -> {
          Object k =
              sql.oneKey() ? "" : OrderingKeys.normal(UserColumnReader.plain(rs.getObject(1)));
          Edges e = out.getOrDefault(k, new Edges(k, null, null, null, null));
          int state = rs.getInt(2);
          Long first = idOrNull(rs, 3);
          if (state == EventState.PENDING.ordinal()) {
            e = new Edges(k, first, e.firstFired(), e.firstDead(), idOrNull(rs, 4));
          } else if (state == EventState.FIRED.ordinal()) {
            e = new Edges(k, e.firstPending(), first, e.firstDead(), e.lastPending());
          } else {
            e = new Edges(k, e.firstPending(), e.firstFired(), first, e.lastPending());
          }
          out.put(k, e);
        });
  }

  private static Long idOrNull(java.sql.ResultSet rs, int column) throws java.sql.SQLException {
    long v = rs.getLong(column);
    return rs.wasNull() ? null : v;
  }

  /** {@code rows} with their places in their keys (a row with a NULL key is first). */
  List<EventRow> placed(List<EventRow> rows) {
    return placed(rows, id -> false);
  }

  /**
   * The same, but the rows {@code known} accepts stay first without a read: the caller holds them
   * as their key's head already (a poll that reads the window's own rows again). Only the keys of
   * the other rows are read.
   */
  List<EventRow> placed(List<EventRow> rows, LongPredicate known) {
    if (rows.isEmpty()) {
      return rows;
    }
    Set<Object> keys = new LinkedHashSet<>();
    boolean[] skip = new boolean[rows.size()];
    for (int i = 0; i < skip.length; i++) {
      EventRow r = rows.get(i);
      Object k = keyOf(r);
      skip[i] = k == null || known.test(r.id()); // asked once: the answer may change meanwhile
      if (!skip[i]) {
        keys.add(k);
      }
    }
    if (keys.isEmpty()) {
      return rows;
    }
    boolean halt = q.options().haltOnDead();
    Map<Object, Edges> edges = edges(keys, halt);
    List<EventRow> out = new ArrayList<>(rows.size());
    for (int i = 0; i < skip.length; i++) {
      EventRow r = rows.get(i);
      Edges e = skip[i] ? null : edges.get(keyOf(r));
      KeyPlace place = e == null ? KeyPlace.FIRST : e.place(r.id(), halt);
      out.add(r.withPlace(place));
    }
    return out;
  }

  /**
   * Each key's first pending row (held or not), with its place: the keys' edges ({@link
   * KeySql#firsts}), then their first pending rows by primary key; two statements per 256 keys.
   * Their place is the edges': a row that stopped being pending in between is left out (it was in
   * the window, not held; its key is freed again when it settles).
   */
  List<EventRow> firstPending(List<Object> keys) {
    boolean halt = q.options().haltOnDead();
    Map<Long, Edges> byFirst = new HashMap<>();
    for (Edges e : edges(new LinkedHashSet<>(keys), halt).values()) {
      if (e.firstPending() != null) {
        byFirst.put(e.firstPending(), e);
      }
    }
    List<EventRow> rows = new ArrayList<>();
    List<Long> ids = new ArrayList<>(byFirst.keySet());
    for (int at = 0; at < ids.size(); at += MAX_KEYS) {
      List<Long> batch = ids.subList(at, Math.min(ids.size(), at + MAX_KEYS));
      for (EventRow r : hot.query(sql.pendingRows(hot.selectColumns(), batch))) {
        rows.add(r.withPlace(byFirst.get(r.id()).place(r.id(), halt)));
      }
    }
    rows.sort(Comparator.comparingLong(EventRow::id));
    return rows;
  }

  /** Up to {@code limit} distinct keys of held rows (normalized). */
  List<Object> heldKeys(int limit) {
    return keysIn(EventState.PENDING, true, limit);
  }

  private List<Object> keysIn(EventState state, boolean held, int limit) {
    List<Object> out = new ArrayList<>();
    for (Record r : ctx.fetch(sql.keysIn(state, held), limit)) {
      out.add(sql.oneKey() ? "" : OrderingKeys.normal(UserColumnReader.plain(r.get(0))));
    }
    return out;
  }

  /**
   * Keys stopped at a dead event (halting queues): a key whose first dead event has pending events
   * after it, by the dead event's id; with {@code counted}, how many.
   */
  List<HaltedKey> halted(int limit, boolean counted) {
    List<HaltedKey> out = new ArrayList<>();
    for (Edges e :
        edges(new LinkedHashSet<>(keysIn(EventState.DEAD, false, 10_000)), true).values()) {
      if (e.firstDead() == null || e.lastPending() == null || e.lastPending() < e.firstDead()) {
        continue;
      }
      long waiting = 1;
      if (counted) {
        Object[] values =
            sql.oneKey() ? new Object[] {e.firstDead()} : new Object[] {e.key(), e.firstDead()};
        Long n = ctx.fetchOne(sql.waitingAfter(), values).get(0, Long.class);
        waiting = n == null ? 0 : n;
      }
      out.add(new HaltedKey(String.valueOf(e.key()), e.firstDead(), waiting));
    }
    out.sort(Comparator.comparingLong(HaltedKey::deadId));
    return out.size() > limit ? List.copyOf(out.subList(0, limit)) : out;
  }
}
