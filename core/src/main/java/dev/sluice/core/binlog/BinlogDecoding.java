package dev.sluice.core.binlog;

import com.github.shyiko.mysql.binlog.event.EventType;
import com.github.shyiko.mysql.binlog.event.TableMapEventData;
import com.github.shyiko.mysql.binlog.event.deserialization.EventDataDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.EventDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.EventDeserializer.CompatibilityMode;
import com.github.shyiko.mysql.binlog.event.deserialization.EventHeaderV4Deserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.NullEventDataDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.UpdateRowsEventDataDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.WriteRowsEventDataDeserializer;
import com.github.shyiko.mysql.binlog.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.Serializable;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the binlog follower decodes, and how little: the follower needs three numbers of a queue row
 * ({@code id}, {@code state}, {@code time_next}), yet the server sends every inserted and updated
 * row of every table, updates with their before and after images. Deletes, statements and GTIDs are
 * skipped undecoded; in the rows it decodes, strings, blobs, JSON and geometry values (payloads,
 * tenants) are stepped over without being copied, and come out null. Dates and times come out as
 * numbers.
 *
 * <p>One per connection; used by the follower's thread only.
 */
final class BinlogDecoding {
  /** Table maps kept (the server numbers tables afresh after DDL and at each new binlog file). */
  static final int TABLE_MAPS = 512;

  private BinlogDecoding() {}

  static EventDeserializer deserializer() {
    Map<Long, TableMapEventData> maps =
        new LinkedHashMap<>(64, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<Long, TableMapEventData> eldest) {
            return size() > TABLE_MAPS;
          }
        };
    // The library's own deserializers for everything else (rotate, format description, heartbeat,
    // table map...): taken from a default instance, which keeps no state of its own in them.
    EventDeserializer defaults = new EventDeserializer();
    Map<EventType, EventDataDeserializer> byType = new EnumMap<>(EventType.class);
    for (EventType t : EventType.values()) {
      EventDataDeserializer d = defaults.getEventDataDeserializer(t);
      if (d != null) {
        byType.put(t, d);
      }
    }
    NullEventDataDeserializer skip = new NullEventDataDeserializer();
    for (EventType t :
        new EventType[] {
          EventType.QUERY,
          EventType.XID,
          EventType.DELETE_ROWS,
          EventType.EXT_DELETE_ROWS,
          EventType.PRE_GA_DELETE_ROWS,
          EventType.ROWS_QUERY,
          EventType.GTID,
          EventType.ANONYMOUS_GTID,
          EventType.PREVIOUS_GTIDS,
          EventType.ANNOTATE_ROWS,
          EventType.MARIADB_GTID,
          EventType.MARIADB_GTID_LIST
        }) {
      byType.put(t, skip);
    }
    byType.put(EventType.PRE_GA_WRITE_ROWS, new Written(maps));
    byType.put(EventType.WRITE_ROWS, new Written(maps));
    byType.put(EventType.EXT_WRITE_ROWS, new Written(maps).setMayContainExtraInformation(true));
    byType.put(EventType.PRE_GA_UPDATE_ROWS, new Updated(maps));
    byType.put(EventType.UPDATE_ROWS, new Updated(maps));
    byType.put(EventType.EXT_UPDATE_ROWS, new Updated(maps).setMayContainExtraInformation(true));
    EventDeserializer d =
        new EventDeserializer(new EventHeaderV4Deserializer(), skip, byType, maps);
    d.setCompatibilityMode(
        CompatibilityMode.DATE_AND_TIME_AS_LONG, CompatibilityMode.CHAR_AND_BINARY_AS_BYTE_ARRAY);
    return d;
  }

  /**
   * Steps over a value's {@code length} bytes; null in its place. Fails when the event is shorter
   * (then it counts as unreadable, and every queue reads its table again).
   */
  static byte[] skipped(ByteArrayInputStream in, int length) throws IOException {
    // skip, not fastSkip: the stream may hold a byte it peeked at, which fastSkip would miss.
    if (length > 0 && in.skip(length) != length) {
      throw new IOException("a row value ran past the end of its binlog event");
    }
    return null;
  }

  /** Inserted rows, their text and binary values stepped over. */
  static final class Written extends WriteRowsEventDataDeserializer {
    Written(Map<Long, TableMapEventData> maps) {
      super(maps);
    }

    @Override
    protected Serializable deserializeString(int length, ByteArrayInputStream in)
        throws IOException {
      return skipped(in, in.readInteger(length < 256 ? 1 : 2));
    }

    @Override
    protected Serializable deserializeVarString(int meta, ByteArrayInputStream in)
        throws IOException {
      return skipped(in, in.readInteger(meta < 256 ? 1 : 2));
    }

    @Override
    protected Serializable deserializeBlob(int meta, ByteArrayInputStream in) throws IOException {
      return skipped(in, in.readInteger(meta));
    }

    @Override
    protected Serializable deserializeGeometry(int meta, ByteArrayInputStream in)
        throws IOException {
      return skipped(in, in.readInteger(meta));
    }

    @Override
    protected byte[] deserializeJson(int meta, ByteArrayInputStream in) throws IOException {
      return skipped(in, in.readInteger(meta));
    }
  }

  /** Updated rows (both images), their text and binary values stepped over. */
  static final class Updated extends UpdateRowsEventDataDeserializer {
    Updated(Map<Long, TableMapEventData> maps) {
      super(maps);
    }

    @Override
    protected Serializable deserializeString(int length, ByteArrayInputStream in)
        throws IOException {
      return skipped(in, in.readInteger(length < 256 ? 1 : 2));
    }

    @Override
    protected Serializable deserializeVarString(int meta, ByteArrayInputStream in)
        throws IOException {
      return skipped(in, in.readInteger(meta < 256 ? 1 : 2));
    }

    @Override
    protected Serializable deserializeBlob(int meta, ByteArrayInputStream in) throws IOException {
      return skipped(in, in.readInteger(meta));
    }

    @Override
    protected Serializable deserializeGeometry(int meta, ByteArrayInputStream in)
        throws IOException {
      return skipped(in, in.readInteger(meta));
    }

    @Override
    protected byte[] deserializeJson(int meta, ByteArrayInputStream in) throws IOException {
      return skipped(in, in.readInteger(meta));
    }
  }
}
