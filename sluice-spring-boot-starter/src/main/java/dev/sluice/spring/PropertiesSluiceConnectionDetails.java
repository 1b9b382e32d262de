package dev.sluice.spring;

import java.util.List;

/**
 * {@link SluiceConnectionDetails} from {@code sluice.receiver.*}, when no other bean gives them.
 */
final class PropertiesSluiceConnectionDetails implements SluiceConnectionDetails {
  private final SluiceProperties properties;

  PropertiesSluiceConnectionDetails(SluiceProperties properties) {
    this.properties = properties;
  }

  @Override
  public List<String> getTargets() {
    return properties.getReceiver().getTargets();
  }

  @Override
  public String getToken() {
    return properties.getReceiver().getToken();
  }
}
