package dev.sluice.test;

import dev.sluice.receiver.EventHandler;
import dev.sluice.receiver.ReceivedEvent;
import dev.sluice.receiver.SluiceReceiver;
import dev.sluice.receiver.SluiceReceiverBuilder;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A receiver started by {@link SluiceExtension#receive}: every delivery is recorded before the
 * handler runs, whatever the handler then does. Closed with the extension.
 */
public final class RecordingReceiver implements AutoCloseable {
  private final List<ReceivedEvent> delivered = new CopyOnWriteArrayList<>();
  private final SluiceReceiver receiver;

  RecordingReceiver(SluiceReceiverBuilder builder, EventHandler handler) {
    this.receiver =
        builder
            .handler(
                event -> {
                  delivered.add(event);
                  handler.handle(event);
                })
            .build();
  }

  RecordingReceiver start() {
    receiver.start();
    return this;
  }

  /** Every delivery so far, in order (a retried event appears once per attempt). */
  public List<ReceivedEvent> delivered() {
    return List.copyOf(delivered);
  }

  /** The underlying receiver (for its stats). */
  public SluiceReceiver receiver() {
    return receiver;
  }

  @Override
  public void close() {
    receiver.close();
  }
}
