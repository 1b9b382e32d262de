package dev.sluice.spring;

import java.util.Set;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.health.AdditionalHealthEndpointPath;
import org.springframework.boot.actuate.health.HealthEndpointGroup;
import org.springframework.boot.actuate.health.HealthEndpointGroups;
import org.springframework.boot.actuate.health.HealthEndpointGroupsPostProcessor;
import org.springframework.boot.actuate.health.HttpCodeStatusMapper;
import org.springframework.boot.actuate.health.StatusAggregator;

/**
 * Adds the {@code sluice} indicator to Spring Boot's {@code readiness} group (present when the
 * probes are on: on Kubernetes, or {@code management.endpoint.health.probes.enabled=true}), never
 * to {@code liveness}. Runs after Spring Boot's own probes post-processor, which makes the group. A
 * readiness group the application configured itself ({@code
 * management.endpoint.health.group.readiness.include}) is left as it is.
 */
final class SluiceReadinessGroup implements HealthEndpointGroupsPostProcessor {
  static final String READINESS = "readiness";
  static final String SLUICE = "sluice";

  @Override
  public HealthEndpointGroups postProcessHealthEndpointGroups(HealthEndpointGroups groups) {
    HealthEndpointGroup readiness = groups.get(READINESS);
    if (readiness == null || readiness.isMember(SLUICE)) {
      return groups;
    }
    HealthEndpointGroup withSluice = new WithSluice(readiness);
    return new HealthEndpointGroups() {
      @Override
      public HealthEndpointGroup getPrimary() {
        return groups.getPrimary();
      }

      @Override
      public Set<String> getNames() {
        return groups.getNames();
      }

      @Override
      public HealthEndpointGroup get(String name) {
        return READINESS.equals(name) ? withSluice : groups.get(name);
      }
    };
  }

  /** The readiness group, with {@code sluice} a member. */
  private record WithSluice(HealthEndpointGroup group) implements HealthEndpointGroup {
    @Override
    public boolean isMember(String name) {
      return SLUICE.equals(name) || group.isMember(name);
    }

    @Override
    public boolean showComponents(SecurityContext securityContext) {
      return group.showComponents(securityContext);
    }

    @Override
    public boolean showDetails(SecurityContext securityContext) {
      return group.showDetails(securityContext);
    }

    @Override
    public StatusAggregator getStatusAggregator() {
      return group.getStatusAggregator();
    }

    @Override
    public HttpCodeStatusMapper getHttpCodeStatusMapper() {
      return group.getHttpCodeStatusMapper();
    }

    @Override
    public AdditionalHealthEndpointPath getAdditionalPath() {
      return group.getAdditionalPath();
    }
  }
}
