package dev.sluice.manager.config;

import dev.sluice.db.Durations;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The configuration file's {@code channels} (the brokers channel-bound queues publish to) and
 * {@code queues} (per-queue channel options) sections, for {@link ConfigLoader}: each error names
 * the source, the entry and the setting.
 */
final class ChannelSections {
  /** A channel entry's settings. */
  private static final Set<String> CHANNEL =
      Set.of(
          "name",
          "kind",
          "bootstrap_servers",
          "properties",
          "uri",
          "publish_timeout",
          "max_in_flight",
          "allowed_targets");

  private final ConfigLoader loader;

  ChannelSections(ConfigLoader loader) {
    this.loader = loader;
  }

  /** {@code channels}: a list of brokers; each error names the entry and the setting. */
  @SuppressWarnings("unchecked")
  void channels(Object channels, String source, ManagerConfig.Builder b) {
    if (channels == null) {
      return;
    }
    if (!(channels instanceof List<?> list)) {
      throw new IllegalArgumentException(source + ": 'channels' must be a list of channels");
    }
    for (int i = 0; i < list.size(); i++) {
      if (!(list.get(i) instanceof Map<?, ?> cm)) {
        throw new IllegalArgumentException(
            source + ": channels[" + i + "] must be a mapping (name, kind, ...)");
      }
      Map<String, Object> c = (Map<String, Object>) cm;
      String name = c.get("name") == null ? null : loader.str(c, "name");
      String where = "channels[" + (name == null || name.isBlank() ? i : name) + "]";
      ConfigLoader.unknownKeys(source, where + ".", c, CHANNEL);
      if (name == null) {
        throw new IllegalArgumentException(source + ": " + where + ": 'name' is required");
      }
      if (c.get("kind") == null) {
        throw new IllegalArgumentException(
            source + ": " + where + ": 'kind' is required (kafka or rabbitmq)");
      }
      String kindText = loader.str(c, "kind");
      ChannelConfig.Kind kind = ChannelConfig.Kind.of(kindText);
      if (kind == null) {
        throw new IllegalArgumentException(
            source + ": " + where + ".kind must be kafka or rabbitmq, was '" + kindText + "'");
      }
      try {
        b.channel(
            new ChannelConfig(
                name,
                kind,
                c.get("bootstrap_servers") == null ? null : loader.str(c, "bootstrap_servers"),
                properties(c.get("properties"), where),
                c.get("uri") == null ? null : loader.str(c, "uri"),
                c.get("publish_timeout") == null ? null : duration(c, "publish_timeout", where),
                c.get("max_in_flight") == null
                    ? ChannelConfig.DEFAULT_MAX_IN_FLIGHT
                    : whole(c, "max_in_flight", where),
                allowedTargets(c.get("allowed_targets"), where)));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(source + ": " + e.getMessage(), e);
      }
    }
  }

  private java.time.Duration duration(Map<String, Object> m, String key, String where) {
    try {
      return Durations.parse(loader.str(m, key));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(where + "." + key + ": " + e.getMessage(), e);
    }
  }

  private int whole(Map<String, Object> m, String key, String where) {
    String v = loader.str(m, key);
    try {
      return Integer.parseInt(v.strip());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          where + "." + key + " must be a whole number, was '" + v + "'", e);
    }
  }

  /** A Kafka channel's extra producer properties: a mapping of scalars. */
  private Map<String, String> properties(Object v, String where) {
    if (v == null) {
      return Map.of();
    }
    if (!(v instanceof Map<?, ?> pm)) {
      throw new IllegalArgumentException(
          where + ".properties must be a mapping (e.g. {linger.ms: \"5\"})");
    }
    Map<String, String> out = new java.util.LinkedHashMap<>();
    for (Map.Entry<?, ?> e : pm.entrySet()) {
      String key = String.valueOf(e.getKey());
      if (e.getValue() == null || e.getValue() instanceof Map || e.getValue() instanceof List) {
        throw new IllegalArgumentException(
            where + ".properties." + key + " must be a single value (quote it as text)");
      }
      out.put(key, loader.interpolate(where + ".properties." + key, String.valueOf(e.getValue())));
    }
    return out;
  }

  private List<String> allowedTargets(Object v, String where) {
    if (v == null) {
      return List.of();
    }
    if (!(v instanceof List<?> l)) {
      throw new IllegalArgumentException(
          where + ".allowed_targets must be a list (e.g. [reminders.due, payments.timeout])");
    }
    List<String> out = new java.util.ArrayList<>();
    for (Object o : l) {
      if (o == null || o instanceof Map || o instanceof List) {
        throw new IllegalArgumentException(
            where + ".allowed_targets must hold names, found '" + o + "'");
      }
      out.add(loader.interpolate(where + ".allowed_targets", String.valueOf(o)));
    }
    return out;
  }

  /**
   * {@code queues}: per queue name, channel options as the table comment writes them ({@code
   * channel_target: orders.due}); they win over the comment's.
   */
  @SuppressWarnings("unchecked")
  void queues(Object queues, String source, ManagerConfig.Builder b) {
    if (queues == null) {
      return;
    }
    if (!(queues instanceof Map<?, ?> qm)) {
      throw new IllegalArgumentException(
          source + ": 'queues' must be a mapping of queue names to options");
    }
    for (Map.Entry<?, ?> q : qm.entrySet()) {
      String queue = String.valueOf(q.getKey());
      String where = "queues." + queue;
      if (!(q.getValue() instanceof Map<?, ?> om)) {
        throw new IllegalArgumentException(
            source + ": " + where + " must be a mapping of options (e.g. {channel: events-kafka})");
      }
      Map<String, String> options = new java.util.LinkedHashMap<>();
      for (Map.Entry<String, Object> o : ((Map<String, Object>) om).entrySet()) {
        Object v = o.getValue();
        if (v instanceof Map || v instanceof List) {
          throw new IllegalArgumentException(
              source + ": " + where + "." + o.getKey() + " must be a single value");
        }
        // An empty value is the option's default, as in a comment ("channel_target=").
        options.put(
            o.getKey(),
            v == null ? "" : loader.interpolate(where + "." + o.getKey(), String.valueOf(v)));
      }
      b.queueOverride(queue, options);
    }
  }
}
