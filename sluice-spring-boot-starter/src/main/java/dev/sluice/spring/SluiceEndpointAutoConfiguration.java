package dev.sluice.spring;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The {@code sluice} Actuator endpoint ({@link SluiceListenersEndpoint}), when Actuator is on the
 * class path. Like every Actuator endpoint it is created only when available: enabled (it is by
 * default; {@code management.endpoint.sluice.access=none} turns it off) and exposed, e.g. {@code
 * management.endpoints.web.exposure.include=health,sluice}. An auto-configuration of its own, so an
 * application without Actuator never parses it.
 */
@AutoConfiguration(after = SluiceAutoConfiguration.class)
@ConditionalOnClass(
    name = {
      "org.springframework.boot.actuate.endpoint.annotation.Endpoint",
      "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint"
    })
@ConditionalOnBean(SluiceListenerRegistry.class)
public class SluiceEndpointAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnAvailableEndpoint
  SluiceListenersEndpoint sluiceListenersEndpoint(SluiceListenerRegistry registry) {
    return new SluiceListenersEndpoint(registry);
  }
}
