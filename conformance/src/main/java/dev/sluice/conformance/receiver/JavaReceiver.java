package dev.sluice.conformance.receiver;

import dev.sluice.receiver.SluiceReceiver;
import dev.sluice.receiver.SluiceReceiverBuilder;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The Java SDK's receiver process for the conformance suite ({@code conformance/CONTRACT.md}): a
 * {@link SluiceReceiver} set up from the environment, its handler doing what {@code SLUICE_MODE}
 * says, and what it sees printed as JSON lines on stdout. A line {@code stop} on stdin (or stdin
 * closing) stops it gracefully; {@code conformance/receivers/java} starts it.
 *
 * <p>Threads: main reads stdin and stops the receiver; a daemon thread waits for the first
 * subscribed stream and prints {@code ready}; the SDK's threads run the handlers and the observer.
 */
public final class JavaReceiver {
  private JavaReceiver() {}

  public static void main(String[] args) throws Exception {
    // stdout carries the JSON lines and nothing else: whatever else prints goes to stderr.
    OutputStream stdout = new FileOutputStream(FileDescriptor.out);
    System.setOut(System.err);
    JsonLines out = new JsonLines(stdout);
    ReceiverEnv env;
    try {
      env = ReceiverEnv.from(System.getenv());
    } catch (IllegalArgumentException e) {
      System.err.println("conformance receiver (java): " + e.getMessage());
      System.exit(2);
      return;
    }
    SluiceReceiverBuilder builder =
        SluiceReceiver.builder()
            .targets(env.targets())
            .queue(env.queue())
            .receiverId(env.receiverId())
            .maxInFlight(env.maxInFlight())
            .concurrency(env.concurrency())
            .handler(env.mode().handler())
            .autoExtend(env.mode().autoExtend())
            .observer(new ReportingObserver(out))
            .shutdownTimeout(Duration.ofSeconds(5));
    if (env.tlsCa() != null) {
      builder.tls(env.tlsCa());
    }
    if (env.token() != null) {
      builder.token(env.token());
    }
    SluiceReceiver receiver = builder.build().start();
    Thread ready =
        new Thread(
            () -> {
              if (receiver.awaitSubscribed(Duration.ofDays(1))) {
                out.write(out.line("ready"));
              }
            },
            "conformance-ready");
    ready.setDaemon(true);
    ready.start();

    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      if (line.strip().equals("stop")) {
        break;
      }
    }
    // Held handlers finish now (and ack); close() tells every manager, waits for the handlers,
    // sends their acks and ends the streams.
    env.mode().release();
    receiver.close();
    out.write(out.line("stopped"));
    System.exit(0);
  }
}
