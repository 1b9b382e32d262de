package dev.sluice.spring;

import dev.sluice.receiver.ReceiverStats;
import dev.sluice.receiver.SluiceReceiverBuilder;
import java.util.function.Supplier;

/** Sees what the listeners do; {@link ReceiverMeters} turns it into Micrometer meters. */
interface ListenerObserver {
  /** The receiver of {@code queue}'s listener is about to be built: add observers to it. */
  void building(String queue, SluiceReceiverBuilder receiver);

  /** A listener of {@code queue} started; {@code stats} reads its receiver's counters. */
  void started(String queue, Supplier<ReceiverStats> stats);

  ListenerObserver NONE =
      new ListenerObserver() {
        @Override
        public void building(String queue, SluiceReceiverBuilder receiver) {}

        @Override
        public void started(String queue, Supplier<ReceiverStats> stats) {}
      };
}
