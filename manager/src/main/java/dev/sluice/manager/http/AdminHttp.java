package dev.sluice.manager.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import dev.sluice.core.EngineException;
import dev.sluice.manager.admin.AdminActions;
import dev.sluice.manager.admin.AdminDenied;
import dev.sluice.manager.json.Json;
import dev.sluice.manager.security.Action;
import dev.sluice.manager.security.Principal;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The status page's operator endpoints, JSON over {@link AdminActions} (which checks the grants,
 * bounds and audits every call):
 *
 * <ul>
 *   <li>{@code GET
 *       /api/queues/Q/dead?shard=&reason=&tenant=&from_ms=&before_ms=&page_size=&page_token=} — a
 *       page of dead events, and what this principal {@code may} do on the queue
 *   <li>{@code GET /api/queues/Q/events/ID?shard=} — one event's columns, state and attempts
 *   <li>{@code GET /api/queues/Q/halted?shard=} — an ordered queue's keys halted at a dead event
 *       ({@code ordering_on_dead=halt}): key, dead event id, events waiting; {@code halting} says
 *       whether the queue halts at all
 *   <li>{@code POST /api/queues/Q/replay|purge|cancel|skip} with {@code {"shard": .., "ids": [..]}}
 *       ({@code skip}: a halted key's dead event becomes cancelled, the key goes on)
 *   <li>{@code POST /api/queues/Q/pause|resume} with {@code {"shard": ..}} (empty: every shard)
 * </ul>
 *
 * <p>A POST must pass {@link CrossSite} (JSON body, the {@value CrossSite#HEADER} header, same
 * origin) or is refused with 403 before anything is read. Without the grant the answer is 403, bad
 * input 400, an unknown queue, shard or event 404; the body is {@code {"error": ".."}} naming the
 * queue (and shard and id where known).
 *
 * <p>Threads: called on the HTTP server's threads; stateless. Each call reads the database once
 * through {@link AdminActions} (bounded by its page and id limits).
 */
final class AdminHttp {
  static final String PREFIX = "/api/queues/";

  /** The largest body an action may send (1,000 ids fit easily). */
  private static final int MAX_BODY = 64 * 1024;

  private static final ObjectMapper JSON = new ObjectMapper();

  private final AdminActions admin;

  AdminHttp(AdminActions admin) {
    this.admin = admin;
  }

  /** Answers a request under {@link #PREFIX}, already authenticated as {@code p}. */
  void handle(HttpExchange x, String path, Principal p) throws IOException {
    String[] parts = path.substring(PREFIX.length()).split("/");
    String method = x.getRequestMethod();
    String queue = parts.length > 0 ? decode(parts[0]) : "";
    try {
      if (parts.length == 2 && parts[1].equals("dead") && method.equals("GET")) {
        ok(x, deadPage(queue, query(x), p));
      } else if (parts.length == 2 && parts[1].equals("halted") && method.equals("GET")) {
        ok(x, halted(queue, query(x), p));
      } else if (parts.length == 3 && parts[1].equals("events") && method.equals("GET")) {
        ok(x, event(admin.showEvent(p, queue, query(x).get("shard"), id(parts[2]))));
      } else if (parts.length == 2 && method.equals("POST")) {
        String refused = CrossSite.refusal(x.getRequestHeaders());
        if (refused != null) {
          error(x, 403, refused);
          return;
        }
        ok(x, act(parts[1], queue, body(x), p));
      } else {
        x.getResponseHeaders().set("Allow", "GET, POST");
        error(
            x,
            parts.length == 2 || parts.length == 3 ? 405 : 404,
            "no such call: " + method + " " + path);
      }
    } catch (AdminDenied e) {
      error(x, 403, e.getMessage());
    } catch (EngineException e) {
      error(x, e.kind() == EngineException.Kind.NOT_FOUND ? 404 : 400, e.getMessage());
    } catch (IllegalArgumentException e) {
      error(x, 400, "queue " + queue + ": " + e.getMessage());
    }
  }

  private Map<String, Object> deadPage(String queue, Map<String, String> q, Principal p) {
    AdminActions.DeadFilter f =
        new AdminActions.DeadFilter(
            q.get("reason"),
            q.get("tenant"),
            millisToNs(q.get("from_ms"), "from_ms"),
            millisToNs(q.get("before_ms"), "before_ms"));
    AdminActions.DeadPage page =
        admin.listDead(
            p,
            queue,
            q.get("shard"),
            f,
            (int) number(q.getOrDefault("page_size", "0"), "page_size"),
            q.get("page_token"));
    List<Object> events = new ArrayList<>();
    for (AdminActions.DeadEvent e : page.events()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("id", e.id());
      m.put("shard", e.shard());
      m.put("tenant", e.tenant());
      m.put("reason", e.reason());
      m.put("attempts", e.attempts());
      m.put("time_created_ns", e.timeCreatedNs());
      m.put("columns", columns(e.columns()));
      events.add(m);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("queue", queue);
    out.put("may", may(p, queue));
    out.put("events", events);
    out.put("next_page_token", page.nextPageToken());
    return out;
  }

  private Map<String, Object> halted(String queue, Map<String, String> q, Principal p) {
    AdminActions.HaltedKeys h =
        admin.listHalted(
            p, queue, q.get("shard"), (int) number(q.getOrDefault("limit", "0"), "limit"));
    List<Object> keys = new ArrayList<>();
    for (dev.sluice.db.store.HaltedKey k : h.keys()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("key", k.key());
      m.put("dead_id", k.deadId());
      m.put("waiting", k.waiting());
      keys.add(m);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("queue", h.queue());
    out.put("shard", h.shard());
    out.put("halting", h.halting());
    out.put("may", may(p, queue));
    out.put("keys", keys);
    return out;
  }

  /** What the buttons may do for {@code p} on {@code queue} (the page hides the others). */
  static Map<String, Object> may(Principal p, String queue) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("replay", AdminActions.allows(p, queue, Action.REPLAY));
    m.put("purge", AdminActions.allows(p, queue, Action.PURGE));
    m.put("cancel", AdminActions.allows(p, queue, Action.CANCEL));
    m.put("pause", AdminActions.allows(p, queue, Action.PAUSE));
    return m;
  }

  private static Map<String, Object> event(AdminActions.EventDetail e) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("queue", e.queue());
    m.put("shard", e.shard());
    m.put("id", e.id());
    m.put("state", e.state());
    m.put("epoch", e.epoch());
    m.put("tenant", e.tenant());
    m.put("priority", e.priority());
    m.put("time_created_ns", e.timeCreatedNs());
    m.put("time_next_ns", e.timeNextNs());
    m.put("time_deadline_ns", e.deadlineNs());
    m.put("reason", e.reason());
    m.put("columns", columns(e.columns()));
    return m;
  }

  private Map<String, Object> act(String action, String queue, JsonNode body, Principal p) {
    String shard = body.hasNonNull("shard") ? body.get("shard").asText() : null;
    Map<String, Object> m = new LinkedHashMap<>();
    switch (action) {
      case "replay", "purge", "cancel", "skip" -> {
        List<Long> ids = ids(body);
        AdminActions.ChangeResult r =
            switch (action) {
              case "replay" -> admin.replay(p, queue, shard, ids);
              case "purge" -> admin.purge(p, queue, shard, ids);
              case "skip" -> admin.skipDead(p, queue, shard, ids);
              default -> admin.cancel(p, queue, shard, ids);
            };
        List<Object> left = new ArrayList<>();
        for (AdminActions.Unchanged u : r.unchanged()) {
          left.add(Map.of("id", u.id(), "why", u.why()));
        }
        m.put("queue", r.queue());
        m.put("shard", r.shard());
        m.put("changed", r.changed());
        m.put("unchanged", left);
      }
      case "pause", "resume" -> {
        AdminActions.PauseResult r =
            action.equals("pause")
                ? admin.pause(p, queue, shard == null || shard.isEmpty() ? null : shard)
                : admin.resume(p, queue, shard == null || shard.isEmpty() ? null : shard);
        m.put("queue", r.queue());
        m.put("paused", r.paused());
        m.put("shards", r.shards());
      }
      default -> throw new IllegalArgumentException("unknown action " + action);
    }
    return m;
  }

  private static List<Long> ids(JsonNode body) {
    JsonNode ids = body.get("ids");
    if (ids == null || !ids.isArray()) {
      throw new IllegalArgumentException("ids: give an array of event ids");
    }
    List<Long> out = new ArrayList<>();
    for (JsonNode n : ids) {
      if (!n.canConvertToLong()) {
        throw new IllegalArgumentException("ids: " + n + " is not an event id");
      }
      out.add(n.asLong());
    }
    return out;
  }

  /** User columns as JSON can show them: numbers, booleans and null as they are, else text. */
  private static Map<String, Object> columns(Map<String, Object> cols) {
    Map<String, Object> out = new LinkedHashMap<>();
    if (cols != null) {
      cols.forEach(
          (k, v) ->
              out.put(
                  k,
                  v == null || v instanceof Number || v instanceof Boolean
                      ? v
                      : v instanceof byte[] b
                          ? "0x" + java.util.HexFormat.of().formatHex(b)
                          : v.toString()));
    }
    return out;
  }

  private static JsonNode body(HttpExchange x) throws IOException {
    try (InputStream in = x.getRequestBody()) {
      byte[] b = in.readNBytes(MAX_BODY + 1);
      if (b.length > MAX_BODY) {
        throw new IllegalArgumentException("the body is larger than " + MAX_BODY + " bytes");
      }
      JsonNode n = b.length == 0 ? JSON.createObjectNode() : JSON.readTree(b);
      if (!n.isObject()) {
        throw new IllegalArgumentException("the body must be a JSON object");
      }
      return n;
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalArgumentException("the body is not JSON: " + e.getOriginalMessage());
    }
  }

  private static Map<String, String> query(HttpExchange x) {
    Map<String, String> q = new HashMap<>();
    String raw = x.getRequestURI().getRawQuery();
    if (raw != null) {
      for (String kv : raw.split("&")) {
        int i = kv.indexOf('=');
        if (i > 0) {
          String v = decode(kv.substring(i + 1));
          if (!v.isEmpty()) {
            q.put(decode(kv.substring(0, i)), v);
          }
        }
      }
    }
    return q;
  }

  private static String decode(String s) {
    return URLDecoder.decode(s, StandardCharsets.UTF_8);
  }

  private static long id(String s) {
    return number(decode(s), "event id");
  }

  private static long number(String s, String field) {
    try {
      return Long.parseLong(s.strip());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(field + ": '" + s + "' is not a number");
    }
  }

  private static long millisToNs(String ms, String field) {
    return ms == null ? 0 : Math.multiplyExact(number(ms, field), 1_000_000L);
  }

  private static void ok(HttpExchange x, Object body) throws IOException {
    StatusHttpServer.send(x, 200, "application/json", Json.write(body) + "\n");
  }

  private static void error(HttpExchange x, int status, String message) throws IOException {
    StatusHttpServer.send(
        x, status, "application/json", Json.write(Map.of("error", message)) + "\n");
  }
}
