package dev.sluice.manager.config;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Overrides settings of a parsed YAML configuration from environment variables, as containers
 * expect. The variable of a setting is its YAML path in upper case, joined by {@code _}, after
 * {@code SLUICE_}:
 *
 * <ul>
 *   <li>a top-level setting: {@code grpc_port} &rarr; {@code SLUICE_GRPC_PORT};
 *   <li>a shard's setting, by the shard's position in the file (from 0): {@code
 *       SLUICE_SHARDS_0_URL}; the position just after the last shard adds a shard, so a deployment
 *       can be described by the environment alone ({@code SLUICE_SHARDS_0_NAME}, {@code
 *       SLUICE_SHARDS_0_URL}, ...);
 *   <li>a shard's setting, by the shard's name in upper case with every character other than a
 *       letter or digit written {@code _}: {@code SLUICE_SHARDS_MAIN_PASSWORD} for the shard {@code
 *       main}. The position wins when a name is all digits.
 *   <li>a channel's scalar setting, the same ways: {@code SLUICE_CHANNELS_0_URI}, {@code
 *       SLUICE_CHANNELS_EVENTS_KAFKA_BOOTSTRAP_SERVERS} for the channel {@code events-kafka}.
 * </ul>
 *
 * <p>A variable overrides the file. {@code tenant_limits} (a list of rules), {@code queues}, and a
 * channel's {@code properties} and {@code allowed_targets} are read from the file only. Values are
 * read as the file's would be: durations as {@code 5s}, numbers as digits, and {@code ${NAME}} is
 * substituted.
 */
final class EnvOverrides {
  static final String PREFIX = "SLUICE_";

  /** Top-level settings that are not scalars, so have no variable of their own. */
  private static final Set<String> NOT_SCALAR =
      Set.of("shards", "tenant_limits", "channels", "queues");

  private final Function<String, String> env;

  EnvOverrides(Function<String, String> env) {
    this.env = env;
  }

  /** The variable for a top-level setting. */
  static String variable(String key) {
    return PREFIX + key.toUpperCase(Locale.ROOT);
  }

  /** The variable for a shard's setting; {@code shard} is its position or its name. */
  static String shardVariable(String shard, String key) {
    return entryVariable("shards", shard, key);
  }

  /**
   * The variable for a setting of an entry of the list {@code list} ({@code shards}, {@code
   * channels}); {@code entry} is its position or its name.
   */
  static String entryVariable(String list, String entry, String key) {
    return PREFIX
        + list.toUpperCase(Locale.ROOT)
        + "_"
        + entry.toUpperCase(Locale.ROOT).replaceAll("[^A-Z0-9]", "_")
        + "_"
        + key.toUpperCase(Locale.ROOT);
  }

  /**
   * A copy of {@code doc} (the file's top-level mapping, possibly empty) with every setting that
   * has its variable set replaced by the variable's value.
   *
   * @param lists the top-level lists of named entries ({@code shards}, {@code channels}) and the
   *     scalar settings of their entries that variables may set
   */
  Map<String, Object> apply(
      Map<String, Object> doc, Set<String> topKeys, Map<String, Set<String>> lists) {
    Map<String, Object> out = new LinkedHashMap<>(doc);
    for (String key : topKeys) {
      if (NOT_SCALAR.contains(key)) {
        continue;
      }
      String v = env.apply(variable(key));
      if (v != null) {
        out.put(key, v);
      }
    }
    lists.forEach((name, keys) -> applyList(out, name, keys));
    return out;
  }

  @SuppressWarnings("unchecked")
  private void applyList(Map<String, Object> out, String listName, Set<String> keys) {
    Object entries = out.get(listName);
    if (entries != null && !(entries instanceof List<?>)) {
      return; // the loader reports the malformed list
    }
    List<Object> list = new ArrayList<>(entries == null ? List.of() : (List<Object>) entries);
    for (int i = 0; ; i++) {
      boolean existing = i < list.size();
      Map<String, Object> entry =
          existing && list.get(i) instanceof Map<?, ?> m
              ? new LinkedHashMap<>((Map<String, Object>) m)
              : new LinkedHashMap<>();
      if (existing && !(list.get(i) instanceof Map<?, ?>)) {
        continue; // the loader reports the malformed entry
      }
      boolean changed = override(entry, listName, Integer.toString(i), keys);
      Object name = entry.get("name");
      if (name != null && !name.toString().chars().allMatch(Character::isDigit)) {
        changed |= override(entry, listName, name.toString(), keys);
      }
      if (existing) {
        list.set(i, entry);
      } else if (changed) {
        list.add(entry);
      } else {
        break;
      }
    }
    if (entries != null || !list.isEmpty()) {
      out.put(listName, list);
    }
  }

  private boolean override(
      Map<String, Object> entry, String listName, String id, Set<String> keys) {
    boolean changed = false;
    for (String key : keys) {
      String v = env.apply(entryVariable(listName, id, key));
      if (v != null) {
        entry.put(key, v);
        changed = true;
      }
    }
    return changed;
  }
}
