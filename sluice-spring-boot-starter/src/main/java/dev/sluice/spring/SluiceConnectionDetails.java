package dev.sluice.spring;

import java.util.List;
import org.springframework.boot.autoconfigure.service.connection.ConnectionDetails;

/**
 * Where the listeners find the managers. The auto-configuration uses a bean of this type in
 * preference to {@code sluice.receiver.targets} and {@code sluice.receiver.token}, so a test kit
 * (or a service-discovery integration) can supply the address of a manager it started.
 */
public interface SluiceConnectionDetails extends ConnectionDetails {
  /** Manager endpoints, {@code host:port}, one per manager process. */
  List<String> getTargets();

  /** Bearer token for managers with authentication on, or null. */
  default String getToken() {
    return null;
  }
}
