package dev.sluice.manager.config;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** The values of the manager's scalar settings ({@link ManagerSettings#ALL}); immutable. */
public final class SettingValues {
  private final Map<ManagerSetting<?>, Object> values;

  SettingValues(Map<ManagerSetting<?>, Object> values) {
    this.values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
  }

  @SuppressWarnings("unchecked")
  public <T> T get(ManagerSetting<T> setting) {
    return (T) values.get(setting);
  }

  /** These values with one replaced (not checked again: the caller keeps it in bounds). */
  <T> SettingValues with(ManagerSetting<T> setting, T value) {
    Map<ManagerSetting<?>, Object> m = new LinkedHashMap<>(values);
    m.put(setting, value);
    return new SettingValues(m);
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("{");
    values.forEach(
        (k, v) -> sb.append(sb.length() == 1 ? "" : ", ").append(k.name()).append('=').append(v));
    return sb.append('}').toString();
  }
}
