package dev.sluice.conformance.receiver;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;

/**
 * The process's stdout: one JSON object per line, UTF-8, flushed at once, and nothing else. Written
 * from the handler threads, the gRPC callback thread and the main thread, one line at a time (this
 * object's lock).
 */
final class JsonLines {
  private final ObjectMapper mapper = new ObjectMapper();
  private final OutputStream out;

  JsonLines(OutputStream out) {
    this.out = out;
  }

  /** A new line of {@code type}, to fill in and {@link #write}. */
  ObjectNode line(String type) {
    return mapper.createObjectNode().put("type", type);
  }

  ObjectNode object() {
    return mapper.createObjectNode();
  }

  synchronized void write(ObjectNode line) {
    try {
      out.write(mapper.writeValueAsBytes(line));
      out.write('\n');
      out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write to stdout", e);
    }
  }
}
