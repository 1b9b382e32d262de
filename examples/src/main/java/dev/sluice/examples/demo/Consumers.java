package dev.sluice.examples.demo;

/**
 * What the progress line shows of whoever consumes the demo's events: receivers, or a broker's
 * consumer.
 */
interface Consumers {
  /** Consumers connected now. */
  int liveCount();

  /** Events handed to them and not yet settled, as far as they know. */
  int inFlight();
}
