package dev.sluice.manager.http;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Plain HTTP GETs and POSTs and a reader of Prometheus' text format, for tests. */
final class Http {
  private static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static final Pattern SAMPLE =
      Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})?\\s+(\\S+)");
  private static final Pattern LABEL =
      Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

  private Http() {}

  record Response(int status, String contentType, String body) {}

  static Response get(String url) {
    try {
      HttpResponse<String> r =
          CLIENT.send(
              HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
              HttpResponse.BodyHandlers.ofString());
      return new Response(
          r.statusCode(), r.headers().firstValue("Content-Type").orElse(""), r.body());
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** A POST of {@code body} with {@code headers} (name, value, name, value...). */
  static Response post(String url, String body, String... headers) {
    try {
      HttpRequest.Builder b =
          HttpRequest.newBuilder(URI.create(url))
              .timeout(Duration.ofSeconds(10))
              .POST(HttpRequest.BodyPublishers.ofString(body));
      for (int i = 0; i < headers.length; i += 2) {
        b.header(headers[i], headers[i + 1]);
      }
      HttpResponse<String> r = CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
      return new Response(
          r.statusCode(), r.headers().firstValue("Content-Type").orElse(""), r.body());
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** A GET with {@code headers} (name, value, name, value...). */
  static Response get(String url, String... headers) {
    try {
      HttpRequest.Builder b =
          HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10));
      for (int i = 0; i < headers.length; i += 2) {
        b.header(headers[i], headers[i + 1]);
      }
      HttpResponse<String> r = CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
      return new Response(
          r.statusCode(), r.headers().firstValue("Content-Type").orElse(""), r.body());
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * The value of the one sample named {@code name} whose labels include {@code labels}; null when
   * there is none.
   *
   * @throws AssertionError when several samples match
   */
  static Double sample(String exposition, String name, Map<String, String> labels) {
    Double found = null;
    for (String line : exposition.split("\n")) {
      if (line.startsWith("#") || line.isBlank()) {
        continue;
      }
      Matcher m = SAMPLE.matcher(line.trim());
      if (!m.matches() || !m.group(1).equals(name)) {
        continue;
      }
      Map<String, String> have = new HashMap<>();
      if (m.group(3) != null) {
        Matcher l = LABEL.matcher(m.group(3));
        while (l.find()) {
          have.put(l.group(1), l.group(2));
        }
      }
      if (have.entrySet().containsAll(labels.entrySet())) {
        if (found != null) {
          throw new AssertionError("several samples of " + name + " match " + labels);
        }
        found = Double.parseDouble(m.group(4));
      }
    }
    return found;
  }
}
