package dev.sluice.manager.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * Headless Chromium driven over the DevTools protocol (a WebSocket, with the JDK's client), for
 * tests that click: navigate, evaluate a script in the page (to click a button, read the DOM), set
 * the window's size, take a screenshot. {@link Chromium#assumeInstalled()} first.
 *
 * <p>Threads: the WebSocket's listener completes the pending calls; the test's thread sends them
 * and waits. One page per browser.
 */
final class Browser implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final Process process;
  private final Path work;
  private final WebSocket socket;
  private final AtomicInteger ids = new AtomicInteger();
  private final Map<Integer, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();

  private Browser(Process process, Path work, WebSocket socket) {
    this.process = process;
    this.work = work;
    this.socket = socket;
  }

  /** A new headless Chromium with one blank page, {@code width} × {@code height} CSS pixels. */
  static Browser open(int width, int height) throws Exception {
    Path work = Files.createTempDirectory("sluice-browser");
    Process p =
        new ProcessBuilder(
                Chromium.executable().toString(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                "--user-data-dir=" + work.resolve("profile"),
                "--window-size=" + width + "," + height,
                "--remote-debugging-port=0",
                "about:blank")
            .redirectOutput(work.resolve("stdout.txt").toFile())
            .redirectError(work.resolve("stderr.txt").toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
            .start();
    Path portFile = work.resolve("profile").resolve("DevToolsActivePort");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!Files.exists(portFile) || Files.readAllLines(portFile).size() < 2) {
      if (System.nanoTime() > deadline || !p.isAlive()) {
        p.destroyForcibly();
        throw new AssertionError(
            "chromium did not open its DevTools port; stderr: "
                + Files.readString(work.resolve("stderr.txt")));
      }
      Thread.sleep(50);
    }
    int port = Integer.parseInt(Files.readAllLines(portFile).get(0).strip());
    String pageSocket = null;
    for (JsonNode t : JSON.readTree(Http.get("http://127.0.0.1:" + port + "/json/list").body())) {
      if (t.get("type").asText().equals("page")) {
        pageSocket = t.get("webSocketDebuggerUrl").asText();
      }
    }
    if (pageSocket == null) {
      p.destroyForcibly();
      throw new AssertionError("chromium shows no page target");
    }
    Browser[] self = new Browser[1];
    CompletableFuture<Void> ready = new CompletableFuture<>();
    WebSocket ws =
        HttpClient.newHttpClient()
            .newWebSocketBuilder()
            .connectTimeout(Duration.ofSeconds(10))
            .buildAsync(URI.create(pageSocket), new Listener(self, ready))
            .get(20, TimeUnit.SECONDS);
    self[0] = new Browser(p, work, ws);
    ready.complete(null);
    self[0].call("Page.enable", Map.of());
    self[0].call("Runtime.enable", Map.of());
    self[0].call("Network.enable", Map.of());
    return self[0];
  }

  /** Sends {@code header} with every request of the page from now on (e.g. Authorization). */
  void header(String name, String value) throws Exception {
    call("Network.setExtraHTTPHeaders", Map.of("headers", Map.of(name, value)));
  }

  /** Loads {@code url}; returns when its document has loaded. */
  void navigate(String url) throws Exception {
    call("Page.navigate", Map.of("url", url));
    waitUntil(
        "the page " + url + " loads", () -> "complete".equals(evalQuietly("document.readyState")));
  }

  /** The value of a JavaScript expression in the page (promises awaited), as JSON. */
  JsonNode eval(String expression) throws Exception {
    JsonNode r =
        call(
            "Runtime.evaluate",
            Map.of("expression", expression, "awaitPromise", true, "returnByValue", true));
    if (r.has("exceptionDetails")) {
      throw new AssertionError("script failed: " + expression + ": " + r.get("exceptionDetails"));
    }
    JsonNode v = r.get("result").get("value");
    return v == null ? JSON.nullNode() : v;
  }

  private String evalQuietly(String expression) {
    try {
      return eval(expression).asText();
    } catch (Exception | AssertionError e) {
      return null;
    }
  }

  /** Waits (up to 30 s) until {@code expression} is true in the page. */
  void waitFor(String expression) throws Exception {
    try {
      waitUntil(expression, () -> "true".equals(evalQuietly("!!(" + expression + ")")));
    } catch (AssertionError e) {
      String text = evalQuietly("document.body ? document.body.innerText : ''");
      throw new AssertionError(
          e.getMessage()
              + "; the page says: "
              + (text == null ? "(nothing)" : text.substring(0, Math.min(text.length(), 1500))));
    }
  }

  private static void waitUntil(String what, BooleanSupplier ok) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!ok.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("in 30 s the page never had: " + what);
      }
      Thread.sleep(100);
    }
  }

  /** Resizes the page's viewport to {@code width} × {@code height} CSS pixels. */
  void resize(int width, int height) throws Exception {
    call(
        "Emulation.setDeviceMetricsOverride",
        Map.of("width", width, "height", height, "deviceScaleFactor", 1, "mobile", false));
  }

  /** A PNG of the whole page (beyond the viewport too) saved at {@code file}. */
  void screenshot(Path file) throws Exception {
    JsonNode r =
        call("Page.captureScreenshot", Map.of("format", "png", "captureBeyondViewport", true));
    Files.createDirectories(file.toAbsolutePath().getParent());
    Files.write(file, Base64.getDecoder().decode(r.get("data").asText()));
  }

  private JsonNode call(String method, Map<String, Object> params) throws Exception {
    int id = ids.incrementAndGet();
    ObjectNode msg = JSON.createObjectNode();
    msg.put("id", id).put("method", method).set("params", JSON.valueToTree(params));
    CompletableFuture<JsonNode> f = new CompletableFuture<>();
    pending.put(id, f);
    socket.sendText(JSON.writeValueAsString(msg), true).get(10, TimeUnit.SECONDS);
    JsonNode reply = f.get(60, TimeUnit.SECONDS);
    if (reply.has("error")) {
      throw new AssertionError(method + " failed: " + reply.get("error"));
    }
    return reply.get("result");
  }

  @Override
  public void close() throws IOException {
    socket.abort();
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
  }

  /** Collects a message's parts and completes the call it answers. */
  private static final class Listener implements WebSocket.Listener {
    private final Browser[] browser;
    private final CompletableFuture<Void> ready;
    private final List<CharSequence> parts = new ArrayList<>();

    Listener(Browser[] browser, CompletableFuture<Void> ready) {
      this.browser = browser;
      this.ready = ready;
    }

    @Override
    public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
      parts.add(data);
      if (last) {
        String text = String.join("", parts);
        parts.clear();
        ready.join();
        try {
          JsonNode m = JSON.readTree(text);
          if (m.has("id")) {
            CompletableFuture<JsonNode> f = browser[0].pending.remove(m.get("id").asInt());
            if (f != null) {
              f.complete(m);
            }
          }
        } catch (IOException e) {
          // not JSON: ignore
        }
      }
      ws.request(1);
      return null;
    }
  }
}
