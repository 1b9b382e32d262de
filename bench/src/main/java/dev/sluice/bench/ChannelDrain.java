package dev.sluice.bench;

import dev.sluice.core.queue.QueueManager;
import dev.sluice.manager.channel.ChannelMessages;
import dev.sluice.manager.channel.ChannelPublisher;
import dev.sluice.manager.channel.OutboundMessage;
import dev.sluice.manager.config.ChannelConfig;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * {@code drain --outlet K}'s peers: the drain published through a channel outlet to broker K
 * ({@code sluice_K}), and the broker's own floor ({@code K_floor}): the same messages published
 * straight through the same publisher.
 */
final class ChannelDrain {
  private final int poolSize;
  private final CpuMeter cpu;

  ChannelDrain(int poolSize, CpuMeter cpu) {
    this.poolSize = poolSize;
    this.cpu = cpu;
  }

  static OutletBroker startBroker(ChannelConfig.Kind kind) throws Exception {
    long t0 = System.nanoTime();
    OutletBroker b = OutletBroker.start(kind);
    Progress.note(
        String.format(
            Locale.ROOT,
            "%s broker: %s (ready in %.1f s); channel %s: max_in_flight=%d publish_timeout=%s",
            kind.word(),
            b.describe(),
            (System.nanoTime() - t0) / 1e9,
            b.channel().name(),
            b.channel().maxInFlight(),
            dev.sluice.db.Durations.format(b.channel().publishTimeout())));
    return b;
  }

  /**
   * The same drain with the queue bound to the broker's channel: no receivers; the manager
   * publishes each due event through its channel outlet and acks it once the broker confirmed.
   * Counts, like the gRPC run, from the resume to the last ack written.
   */
  double runOutlet(BenchServer server, ServerStatus status, long n, OutletBroker broker)
      throws Exception {
    String name = "sluice_" + broker.kind.word();
    Database db = server.createDatabase("bench_" + name);
    try (SluiceSide s = new SluiceSide(db)) {
      s.createQueue();
      broker.reset();
      long heldBefore = broker.held();
      QueueManager q = s.startManager(poolSize, broker.channel(), broker.queueOptions());
      s.setPaused(true);
      DrainCommand.load(name, n, p -> s.insertDueNow(n, p));
      Progress.note(
          name
              + ": queue bound with queues."
              + SluiceSide.QUEUE
              + "="
              + broker.queueOptions()
              + ", paused with the events loaded; resuming");
      Map<String, Long> before = status.read();
      cpu.start();
      long t0 = System.nanoTime();
      s.setPaused(false);
      var ackedCounter = s.counterOf("sluice.events.acked");
      var publishedCounter = s.counterOf("sluice.channel.published");
      LongSupplier acked = () -> (long) ackedCounter.count();
      double rate =
          DrainCommand.await(
              name,
              n,
              acked,
              t0,
              () -> {
                QueueManager.LiveStats live = q.live();
                return String.format(
                    Locale.ROOT,
                    "published=%,.0f window=%,d in_flight=%,d",
                    publishedCounter.count(),
                    live.cached(),
                    live.inFlight());
              });
      DrainCommand.report(cpu, name, ServerStatus.Delta.between(before, status.read()), n);
      long ackedRows =
          db.queryLong(
              "SELECT COUNT(*) FROM " + SluiceSide.QUEUE + " WHERE state = ?",
              dev.sluice.db.EventState.ACKED.code());
      long held = broker.held() - heldBefore;
      Progress.note(
          String.format(
              Locale.ROOT,
              "%s: %,d of %,d events acked in the table; the broker's %s got %,d messages",
              name,
              ackedRows,
              n,
              broker.destination(),
              held));
      if (ackedRows != n || held < n) {
        throw new IllegalStateException(
            name
                + ": "
                + ackedRows
                + " of "
                + n
                + " events acked in the table, "
                + held
                + " messages on the broker's "
                + broker.destination());
      }
      return rate;
    } finally {
      server.drop(db);
    }
  }

  /**
   * The broker's floor for the channel peer: N messages like Sluice's (made by {@link
   * ChannelMessages} from the same binding and deliveries of the same shape) published straight
   * through the same publisher class with the manager's settings, at most the channel's {@code
   * max_in_flight} unconfirmed at once. Counts from the first publish to the last confirm.
   */
  double runBrokerFloor(long n, OutletBroker broker) throws Exception {
    String name = broker.kind.word() + "_floor";
    broker.reset();
    long heldBefore = broker.held();
    ChannelMessages messages = new ChannelMessages(broker.binding());
    int credits = broker.channel().maxInFlight();
    AtomicLong confirmed = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    AtomicReference<String> firstFailure = new AtomicReference<>();
    double rate;
    try (ChannelPublisher publisher = broker.publisher(SluiceSide.MANAGER_ID)) {
      // The manager's publisher has had the load's seconds to connect when its queue resumes.
      long until = System.nanoTime() + 10_000_000_000L;
      while (!publisher.connected() && System.nanoTime() < until) {
        Thread.sleep(10);
      }
      long dueNs = System.currentTimeMillis() * 1_000_000L;
      OutboundMessage sample = OutletBroker.message(messages, 1, 0, dueNs);
      Progress.note(
          String.format(
              Locale.ROOT,
              "%s: %s%s; %,d messages like Sluice's (body %d bytes, %d headers), at most %d"
                  + " unconfirmed",
              name,
              publisher.describe(),
              publisher.connected() ? " connected" : " not connected after 10 s",
              n,
              sample.body().length,
              sample.headers().size(),
              credits));
      Semaphore inFlight = new Semaphore(credits);
      cpu.start();
      long t0 = System.nanoTime();
      Thread runner =
          new Thread(
              () -> {
                for (long i = 0; i < n; i++) {
                  inFlight.acquireUninterruptibly();
                  publisher
                      .publish(OutletBroker.message(messages, i + 1, i, dueNs + i))
                      .whenComplete(
                          (ok, e) -> {
                            if (e == null) {
                              confirmed.incrementAndGet();
                            } else {
                              failed.incrementAndGet();
                              firstFailure.compareAndSet(
                                  null,
                                  String.valueOf(
                                      e instanceof CompletionException && e.getCause() != null
                                          ? e.getCause().getMessage()
                                          : e.getMessage()));
                            }
                            inFlight.release();
                          });
                }
              },
              "bench-floor-publisher");
      runner.setDaemon(true);
      runner.start();
      rate =
          DrainCommand.await(
              name,
              n,
              () -> confirmed.get() + failed.get(),
              t0,
              () ->
                  String.format(
                      Locale.ROOT,
                      "confirmed=%,d failed=%,d in_flight=%,d",
                      confirmed.get(),
                      failed.get(),
                      credits - inFlight.availablePermits()));
      runner.join();
      Progress.note(name + ": CPU per message: " + cpu.perEvent(n));
      if (failed.get() > 0) {
        throw new IllegalStateException(
            name
                + ": "
                + failed.get()
                + " of "
                + n
                + " publishes failed; the first: "
                + firstFailure.get());
      }
    }
    Progress.note(
        String.format(
            Locale.ROOT,
            "%s: the broker's %s got %,d messages",
            name,
            broker.destination(),
            broker.held() - heldBefore));
    return rate;
  }
}
