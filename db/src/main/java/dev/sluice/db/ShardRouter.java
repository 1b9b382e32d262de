package dev.sluice.db;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.crypto.Cipher;
import javax.crypto.spec.SecretKeySpec;
import javax.sql.DataSource;

/**
 * Tells a producer which shard an event belongs to: the keyspace id of its sharding key, then the
 * shard whose key range holds it. Numeric keys use Vitess's {@code hash} vindex (DES of the
 * big-endian 8 bytes under a zero key), so a Sluice deployment on Vitess keyspace shards routes
 * like Vitess; text keys use the first 8 bytes of MD5 of the UTF-8 text.
 *
 * <pre>{@code
 * ShardRouter router = ShardRouter.builder().shard("-80", ds1).shard("80-", ds2).build();
 * try (Connection c = router.dataSourceFor(orderId).getConnection()) { ... }
 * }</pre>
 */
public final class ShardRouter {
  private final Map<KeyRange, DataSource> shards;

  private ShardRouter(Map<KeyRange, DataSource> shards) {
    this.shards = shards;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Vitess's hash vindex: the keyspace id of a numeric key. */
  public static long keyspaceId(long key) {
    try {
      Cipher des = Cipher.getInstance("DES/ECB/NoPadding");
      des.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(new byte[8], "DES"));
      return ByteBuffer.wrap(des.doFinal(ByteBuffer.allocate(8).putLong(key).array())).getLong();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("DES is not available in this JVM", e);
    }
  }

  /** The keyspace id of a text key: the first 8 bytes of its MD5. */
  public static long keyspaceId(String key) {
    try {
      byte[] d = MessageDigest.getInstance("MD5").digest(key.getBytes(StandardCharsets.UTF_8));
      return ByteBuffer.wrap(d, 0, 8).getLong();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("MD5 is not available in this JVM", e);
    }
  }

  public DataSource dataSourceFor(long key) {
    return forKeyspaceId(keyspaceId(key));
  }

  public DataSource dataSourceFor(String key) {
    return forKeyspaceId(keyspaceId(key));
  }

  private DataSource forKeyspaceId(long ksid) {
    for (Map.Entry<KeyRange, DataSource> e : shards.entrySet()) {
      if (e.getKey().contains(ksid)) {
        return e.getValue();
      }
    }
    throw new IllegalStateException(
        "no shard covers keyspace id "
            + Long.toHexString(ksid)
            + " (shards: "
            + shards.keySet()
            + ")");
  }

  /** Builds a router; the ranges must not overlap and must cover the whole keyspace. */
  public static final class Builder {
    private final Map<KeyRange, DataSource> shards = new LinkedHashMap<>();

    public Builder shard(String keyRange, DataSource ds) {
      KeyRange r = KeyRange.parse(keyRange);
      for (KeyRange k : shards.keySet()) {
        if (k.overlaps(r)) {
          throw new IllegalArgumentException("key range " + r + " overlaps " + k);
        }
      }
      shards.put(r, ds);
      return this;
    }

    public ShardRouter build() {
      List<KeyRange> ranges = new ArrayList<>(shards.keySet());
      ranges.sort(
          (a, b) ->
              a.openStart() ? -1 : b.openStart() ? 1 : Long.compareUnsigned(a.start(), b.start()));
      boolean covered =
          !ranges.isEmpty() && ranges.get(0).openStart() && ranges.get(ranges.size() - 1).openEnd();
      for (int i = 1; covered && i < ranges.size(); i++) {
        covered = !ranges.get(i - 1).openEnd() && ranges.get(i - 1).end() == ranges.get(i).start();
      }
      if (!covered) {
        throw new IllegalArgumentException(
            "shard key ranges " + ranges + " do not cover the whole keyspace without gaps");
      }
      return new ShardRouter(Map.copyOf(shards));
    }
  }
}
