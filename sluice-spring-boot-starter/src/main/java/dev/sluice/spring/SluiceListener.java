package dev.sluice.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a bean method as the handler of a queue's events. A normal return acks the event; an
 * exception nacks it ({@link dev.sluice.receiver.RetryLater} with its delay, anything else with the
 * queue's backoff), after the {@link SluiceErrorHandler} had its say.
 *
 * <p>Parameters, in any order:
 *
 * <ul>
 *   <li>the event's data: a record or class mapped from the user columns by name ({@code order_id}
 *       fills {@code orderId} or {@code order_id}), or, with {@link #payload()}, read as JSON from
 *       that column; or a {@code Map<String, Object>} of the columns;
 *   <li>{@link EventMetadata}: id, attempt, queue, shard, tenant, priority, times and, for an
 *       ordered queue, the ordering key;
 *   <li>{@link dev.sluice.receiver.ReceivedEvent}: the delivery itself.
 * </ul>
 *
 * <pre>{@code
 * @SluiceListener(queue = "order_events", payload = "payload", transactional = true)
 * void ship(OrderPlaced order, EventMetadata meta) {
 *   jdbc.update("INSERT INTO shipments (order_id) VALUES (?)", order.orderId());
 * }
 * }</pre>
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface SluiceListener {
  /**
   * The listener's id, for {@link SluiceListenerRegistry} and {@code sluice.listeners.<id>.*};
   * placeholders are resolved. Default: the queue name, so a queue with several listeners needs an
   * id for each but one.
   */
  String id() default "";

  /** The queue table; {@code ${...}} placeholders are resolved. */
  String queue();

  /** Handler threads; 0 takes {@code sluice.listeners.<id>.concurrency} or the default. */
  int concurrency() default 0;

  /** The column holding a JSON document to map the data parameter from; "" maps the columns. */
  String payload() default "";

  /**
   * Runs the method in a Spring transaction on the application's {@code DataSource} and acks the
   * event in that same transaction (the manager's compare-and-set on id, state and epoch), so that
   * the method's writes and the ack commit together or not at all. The DataSource must hold the
   * queue table. If the attempt no longer applies (it timed out meanwhile), the transaction rolls
   * back.
   */
  boolean transactional() default false;

  /**
   * Whether the listener starts with the context: "true", "false" or a placeholder; "" takes {@code
   * sluice.listeners.<id>.auto-startup}, else {@code sluice.receiver.auto-startup}. A listener that
   * did not start is started by {@link SluiceListenerRegistry#start(String)}.
   */
  String autoStartup() default "";

  /**
   * The name of a {@link SluiceErrorHandler} bean for this listener; "" uses the application's
   * single {@code SluiceErrorHandler} bean if there is one, else the exception nacks the event.
   */
  String errorHandler() default "";

  /**
   * The name of a {@link SluiceDeadLetterHandler} bean, called when this listener fails the event's
   * last attempt (the queue's {@code max_attempts}), just before the nack that makes the event
   * dead.
   */
  String deadLetterHandler() default "";
}
