package dev.sluice.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Asks for a {@link RecordingReceiver} of a queue as a test parameter, in a class using {@link
 * SluiceTest} or a registered {@link SluiceExtension}: it receives from the test's manager, records
 * every delivery and acks it.
 *
 * <pre>{@code
 * @Test
 * void delivered(@Receive("order_events") RecordingReceiver received, SluiceExtension sluice) {
 *   long id = sluice.insert("order_events", Map.of("order_id", 7));
 *   sluice.awaitAcked("order_events", id);
 * }
 * }</pre>
 *
 * <p>For a handler of your own (one that fails, say), call {@link SluiceExtension#receive} instead.
 */
@Target(ElementType.PARAMETER)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Receive {
  /** The queue (its table's name). */
  String value();
}
