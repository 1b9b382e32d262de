package dev.sluice.manager.channel;

import dev.sluice.core.loop.StackThrottle;
import dev.sluice.core.loop.Ticker;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the threads of one channel publisher count of their failures, where operators see them, and
 * how they log them: {@code sluice_channel_loop_errors_total{channel,loop}}, the unexpected errors
 * a publisher's loop caught and survived, and (a RabbitMQ channel, whose publisher thread connects
 * itself) {@code sluice_channel_connect_failures_total{channel}}, its connection attempts that
 * failed. The publisher counts from its start; {@link ChannelOutlets} registers the series, tagged
 * with the channel's name, once it has built the publisher ({@link #register}); one built alone (a
 * test, the benchmark) counts without.
 *
 * <p>Core's {@code LoopFaults} does the same for a queue's workers, but its series is per shard,
 * queue and loop, and a publisher is per channel: every queue bound to the channel, on every shard,
 * publishes through it. The logging is the same: an unexpected error is logged with its stack at
 * most every {@link StackThrottle#EVERY_NS} per loop (on the publisher's ticker), as one line
 * otherwise.
 *
 * <p>Thread-safe: each of the publisher's threads counts its own loop; {@link #register} runs once
 * on the thread that builds the channels.
 */
final class PublisherFaults {
  private static final Logger log = LoggerFactory.getLogger(PublisherFaults.class);

  private final String description;
  private final StackThrottle stacks;

  /** Per loop of this publisher, fixed at its start: unexpected errors. */
  private final Map<String, AtomicLong> loopErrors;

  /** Failed connection attempts; null when the publisher does not connect itself. */
  private final AtomicLong connectFailures;

  /**
   * @param description the publisher's, for the log ("rabbitmq amqp://127.0.0.1:5672/")
   * @param connects whether the publisher's own thread connects (and its failures are counted)
   * @param loops the names of the publisher's loops (its threads, by job)
   */
  PublisherFaults(String description, Ticker ticker, boolean connects, String... loops) {
    this.description = description;
    this.stacks = new StackThrottle(ticker);
    Map<String, AtomicLong> errors = new LinkedHashMap<>();
    for (String loop : loops) {
      errors.put(loop, new AtomicLong());
    }
    this.loopErrors = Map.copyOf(errors);
    this.connectFailures = connects ? new AtomicLong() : null;
  }

  /**
   * A loop caught what it did not expect and goes on: counted, and logged with the stack at most
   * every {@link StackThrottle#EVERY_NS} for that loop.
   */
  void caught(String loop, Throwable t) {
    AtomicLong count = loopErrors.get(loop);
    if (count == null) {
      throw new IllegalArgumentException(description + ": no loop named " + loop);
    }
    count.incrementAndGet();
    if (stacks.stackDue(loop)) {
      log.error("{}: the {} loop failed, continuing: {}", description, loop, t.toString(), t);
    } else {
      log.warn("{}: the {} loop failed again, continuing: {}", description, loop, t.toString());
    }
  }

  /** A connection attempt failed: counted (the caller logs the outage, once). */
  void connectFailed() {
    if (connectFailures == null) {
      throw new IllegalStateException(description + ": this publisher does not connect itself");
    }
    connectFailures.incrementAndGet();
  }

  long loopErrors(String loop) {
    AtomicLong count = loopErrors.get(loop);
    return count == null ? 0 : count.get();
  }

  long connectFailures() {
    return connectFailures == null ? 0 : connectFailures.get();
  }

  /** Registers the counts in {@code registry}, tagged {@code channel}: once per publisher. */
  void register(MeterRegistry registry, String channel) {
    loopErrors.forEach(
        (loop, count) ->
            FunctionCounter.builder("sluice.channel.loop.errors", count, AtomicLong::get)
                .description("unexpected errors a channel publisher's loop caught and survived")
                .tags("channel", channel, "loop", loop)
                .register(registry));
    if (connectFailures != null) {
      FunctionCounter.builder("sluice.channel.connect.failures", connectFailures, AtomicLong::get)
          .description("connection attempts of a channel publisher that failed")
          .tags("channel", channel)
          .register(registry);
    }
  }
}
