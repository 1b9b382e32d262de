package dev.sluice.spring;

import dev.sluice.receiver.ReceiverStats;
import java.util.Map;
import java.util.Set;

/**
 * The {@link SluiceListener} methods of the application, by id, to start, stop, pause and resume
 * one at a time (say, from an admin endpoint, or while a downstream system is in maintenance).
 *
 * <p>Stopping and pausing both end the listener's streams the graceful way: the managers are told
 * to send nothing new, running handlers finish within {@code sluice.receiver.shutdown-timeout} and
 * their acks are delivered; the queue's events then go to the other receivers of the queue, or wait
 * in the table. A paused listener is shown as paused (not disconnected) by health and stays paused
 * across a restart of the context's lifecycle until {@link #resume}; a stopped one starts again
 * with the context if it auto-starts. Methods block until the listener has stopped or started.
 */
public interface SluiceListenerRegistry {
  /** A listener's state. */
  enum State {
    /** Not started (auto-startup off, or stopped by the registry or the context). */
    STOPPED,
    /** Receiving: its receiver keeps streams to the managers. */
    RUNNING,
    /** Paused by {@link #pause}: no receiver until {@link #resume}. */
    PAUSED
  }

  /** The ids of every listener (disabled ones excluded). */
  Set<String> listenerIds();

  /** The listener's state; IllegalArgumentException for an unknown id. */
  State state(String id);

  /** The queue the listener receives from. */
  String queue(String id);

  /** Starts a stopped listener (resumes a paused one). */
  void start(String id);

  /** Stops a running or paused listener. */
  void stop(String id);

  /** Pauses a running listener. */
  void pause(String id);

  /** Resumes a paused listener. */
  void resume(String id);

  /** The receiver counters of each listener that has a receiver now, by id. */
  Map<String, ReceiverStats> stats();
}
