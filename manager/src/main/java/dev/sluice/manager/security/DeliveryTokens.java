package dev.sluice.manager.security;

import com.google.protobuf.ByteString;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Binds each delivery to its receiver: the token sent with an event is an HMAC-SHA256, under the
 * shard's own secret key, of (shard, queue, id, epoch, principal, receiver id), cut to {@link
 * #TOKEN_BYTES}. An ack or nack must bring it back, and it verifies only for the same principal and
 * receiver id. The key is a random secret kept in the shard's {@code sluice_secret} table, so any
 * manager of the shard verifies it after a failover without sharing memory with the one that sent
 * the event.
 *
 * <p>Thread-safe: each thread keeps one {@link Mac} and re-keys it per call, so that a large Acks
 * message (up to ~100k tokens) costs that many HMACs, not as many {@code Mac.getInstance} lookups.
 */
public final class DeliveryTokens {
  public static final int TOKEN_BYTES = 16;

  private static final LongAdder MACS_CREATED = new LongAdder();

  /** One Mac per thread, created on the thread's first token. */
  private static final ThreadLocal<Mac> MAC = ThreadLocal.withInitial(DeliveryTokens::newMac);

  /** The shard's key by shard name; null when it could not be read yet. */
  private final Function<String, byte[]> keys;

  public DeliveryTokens(Function<String, byte[]> keys) {
    this.keys = keys;
  }

  /** The token for one delivery, or empty when the shard's key is not known (then acks fail). */
  public ByteString sign(
      String shard, String queue, long id, long epoch, String principal, String receiverId) {
    byte[] key = keys.apply(shard);
    if (key == null) {
      return ByteString.EMPTY;
    }
    return ByteString.copyFrom(mac(key, shard, queue, id, epoch, principal, receiverId));
  }

  /** Whether {@code token} is this delivery's, compared in constant time. */
  public boolean verify(
      String shard,
      String queue,
      long id,
      long epoch,
      String principal,
      String receiverId,
      ByteString token) {
    byte[] key = keys.apply(shard);
    if (key == null || token.size() != TOKEN_BYTES) {
      return false;
    }
    return MessageDigest.isEqual(
        mac(key, shard, queue, id, epoch, principal, receiverId), token.toByteArray());
  }

  private static byte[] mac(
      byte[] key,
      String shard,
      String queue,
      long id,
      long epoch,
      String principal,
      String receiverId) {
    try {
      Mac m = MAC.get();
      m.init(new SecretKeySpec(key, "HmacSHA256")); // resets it, whatever a failed call left
      for (String s : new String[] {shard, queue, principal, receiverId}) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        m.update(ByteBuffer.allocate(4).putInt(b.length).array()); // length-prefixed: unambiguous
        m.update(b);
      }
      m.update(ByteBuffer.allocate(16).putLong(id).putLong(epoch).array());
      return Arrays.copyOf(m.doFinal(), TOKEN_BYTES);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is unavailable: " + e, e);
    }
  }

  private static Mac newMac() {
    try {
      Mac m = Mac.getInstance("HmacSHA256");
      MACS_CREATED.increment();
      return m;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is unavailable: " + e, e);
    }
  }

  /** Macs created in this process so far (for tests: one per thread, not one per token). */
  static long macsCreated() {
    return MACS_CREATED.sum();
  }
}
