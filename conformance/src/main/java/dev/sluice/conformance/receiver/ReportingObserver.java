package dev.sluice.conformance.receiver;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.receiver.ReceivedEvent;
import dev.sluice.receiver.ReceiverObserver;

/**
 * Prints what the SDK tells its observers as the contract's lines: {@code received} when a handler
 * starts, {@code handled} when it ended, {@code ack_result} for every answer of a manager, {@code
 * error} when a stream was refused or broke. Called on the handler threads and the SDK's gRPC
 * callback thread; it keeps no state.
 */
final class ReportingObserver implements ReceiverObserver {
  private final JsonLines out;

  ReportingObserver(JsonLines out) {
    this.out = out;
  }

  @Override
  public Handling handlingStarted(ReceivedEvent event) {
    ObjectNode received = event(out.line("received"), event);
    received.put("last_attempt", event.lastAttempt());
    received.set("columns", CanonicalColumns.of(event, out));
    out.write(received);
    return (outcome, error) ->
        out.write(
            event(out.line("handled"), event)
                .put("outcome", outcome == Outcome.ACKED ? "ack" : "nack"));
  }

  @Override
  public void answered(Answer answer) {
    out.write(
        out.line("ack_result")
            .put("id", Long.toString(answer.id()))
            .put("epoch", Long.toString(answer.epoch()))
            .put("shard", answer.shard())
            .put("status", answer.status().name()));
  }

  @Override
  public void streamEnded(String endpoint, String code, String description) {
    if (!code.equals("OK")) {
      out.write(
          out.line("error")
              .put("code", code)
              .put("message", endpoint + ": " + (description == null ? code : description)));
    }
  }

  private static ObjectNode event(ObjectNode line, ReceivedEvent e) {
    return line.put("id", Long.toString(e.id()))
        .put("epoch", Long.toString(e.epoch()))
        .put("shard", e.shard());
  }
}
