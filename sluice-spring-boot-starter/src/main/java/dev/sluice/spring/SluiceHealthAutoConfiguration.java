package dev.sluice.spring;

import java.util.Locale;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.health.HealthEndpointGroupsPostProcessor;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The {@code sluice} health indicator, when Actuator is on the class path ({@code
 * management.health.sluice.enabled=false} turns it off), and its place in the readiness group,
 * never in liveness. An auto-configuration of its own, so that an application without Actuator
 * never parses it (Spring Boot drops it by its class condition first).
 *
 * <p>Ordered after Spring Boot's availability probes: the readiness group is made by a
 * post-processor of the same order as ours, so ours must be registered after it.
 */
@AutoConfiguration(
    after = SluiceAutoConfiguration.class,
    afterName = {
      "org.springframework.boot.actuate.autoconfigure.availability.AvailabilityProbesAutoConfiguration",
      "org.springframework.boot.actuate.autoconfigure.health.HealthContributorAutoConfiguration"
    })
@ConditionalOnClass(
    name = {
      "org.springframework.boot.actuate.health.HealthIndicator",
      "org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator"
    })
@ConditionalOnBean(SluiceListenerContainer.class)
@ConditionalOnEnabledHealthIndicator("sluice")
public class SluiceHealthAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean(name = "sluiceHealthIndicator")
  SluiceHealthIndicator sluiceHealthIndicator(
      SluiceListenerContainer container, SluiceProperties properties) {
    String status = properties.getHealth().getDisconnectedStatus();
    return new SluiceHealthIndicator(
        container,
        new Status(
            status == null || status.isBlank()
                ? Status.UNKNOWN.getCode()
                : status.strip().toUpperCase(Locale.ROOT).replace('-', '_')));
  }

  /** {@code sluice} in the readiness group, when Spring Boot's probes make one. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(
      name =
          "org.springframework.boot.actuate.autoconfigure.availability.AvailabilityProbesAutoConfiguration")
  @ConditionalOnProperty(prefix = "sluice.health", name = "readiness", matchIfMissing = true)
  static class Readiness {
    @Bean
    static HealthEndpointGroupsPostProcessor sluiceReadinessGroup(Environment environment) {
      if (environment.containsProperty("management.endpoint.health.group.readiness.include")) {
        return groups -> groups; // the application chose the readiness group's members itself
      }
      return new SluiceReadinessGroup();
    }
  }
}
