package dev.sluice.spring;

import dev.sluice.receiver.ReceiverStats;
import java.util.function.Supplier;

/** Sees what the listeners do; {@link ReceiverMeters} turns it into Micrometer meters. */
interface ListenerObserver {
  /** A listener of {@code queue} started; {@code stats} reads its receiver's counters. */
  void started(String queue, Supplier<ReceiverStats> stats);

  /** One handling ended: {@code outcome} is ack, nack or retry_later. */
  void handled(String queue, long nanos, String outcome);

  ListenerObserver NONE =
      new ListenerObserver() {
        @Override
        public void started(String queue, Supplier<ReceiverStats> stats) {}

        @Override
        public void handled(String queue, long nanos, String outcome) {}
      };
}
