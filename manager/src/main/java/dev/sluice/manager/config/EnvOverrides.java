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
 * </ul>
 *
 * <p>A variable overrides the file. {@code tenant_limits} (a list of rules) is read from the file
 * only. Values are read as the file's would be: durations as {@code 5s}, numbers as digits, and
 * {@code ${NAME}} is substituted.
 */
final class EnvOverrides {
  static final String PREFIX = "SLUICE_";

  /** Top-level settings that are not scalars, so have no variable of their own. */
  private static final Set<String> NOT_SCALAR = Set.of("shards", "tenant_limits");

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
    return PREFIX
        + "SHARDS_"
        + shard.toUpperCase(Locale.ROOT).replaceAll("[^A-Z0-9]", "_")
        + "_"
        + key.toUpperCase(Locale.ROOT);
  }

  /**
   * A copy of {@code doc} (the file's top-level mapping, possibly empty) with every setting that
   * has its variable set replaced by the variable's value.
   */
  @SuppressWarnings("unchecked")
  Map<String, Object> apply(Map<String, Object> doc, Set<String> topKeys, Set<String> shardKeys) {
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
    Object shards = out.get("shards");
    if (shards != null && !(shards instanceof List<?>)) {
      return out; // the loader reports the malformed list
    }
    List<Object> list = new ArrayList<>(shards == null ? List.of() : (List<Object>) shards);
    for (int i = 0; ; i++) {
      boolean existing = i < list.size();
      Map<String, Object> shard =
          existing && list.get(i) instanceof Map<?, ?> m
              ? new LinkedHashMap<>((Map<String, Object>) m)
              : new LinkedHashMap<>();
      if (existing && !(list.get(i) instanceof Map<?, ?>)) {
        continue; // the loader reports the malformed entry
      }
      boolean changed = override(shard, Integer.toString(i), shardKeys);
      Object name = shard.get("name");
      if (name != null && !name.toString().chars().allMatch(Character::isDigit)) {
        changed |= override(shard, name.toString(), shardKeys);
      }
      if (existing) {
        list.set(i, shard);
      } else if (changed) {
        list.add(shard);
      } else {
        break;
      }
    }
    if (shards != null || !list.isEmpty()) {
      out.put("shards", list);
    }
    return out;
  }

  private boolean override(Map<String, Object> shard, String id, Set<String> keys) {
    boolean changed = false;
    for (String key : keys) {
      String v = env.apply(shardVariable(id, key));
      if (v != null) {
        shard.put(key, v);
        changed = true;
      }
    }
    return changed;
  }
}
