package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.availability.AvailabilityHealthContributorAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.availability.AvailabilityProbesAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.health.HealthContributorAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.health.HealthEndpointAutoConfiguration;
import org.springframework.boot.actuate.health.CompositeHealth;
import org.springframework.boot.actuate.health.HealthEndpoint;
import org.springframework.boot.actuate.health.HealthEndpointGroups;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.availability.ApplicationAvailabilityAutoConfiguration;
import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.LivenessState;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

/**
 * The health groups with no manager reachable: by default {@code sluice} is UNKNOWN and nothing
 * turns 503; with {@code sluice.health.disconnected-status=OUT_OF_SERVICE}, readiness answers 503
 * and liveness stays UP; {@code sluice} is a member of readiness only, unless the application chose
 * readiness's members itself.
 */
class SluiceHealthGroupsTest {
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  ApplicationAvailabilityAutoConfiguration.class,
                  HealthContributorAutoConfiguration.class,
                  HealthEndpointAutoConfiguration.class,
                  AvailabilityHealthContributorAutoConfiguration.class,
                  AvailabilityProbesAutoConfiguration.class,
                  SluiceAutoConfiguration.class,
                  SluiceHealthAutoConfiguration.class))
          .withUserConfiguration(SluiceAutoConfigurationTest.OneListener.class)
          .withPropertyValues(
              "management.endpoint.health.probes.enabled=true",
              "sluice.receiver.targets=127.0.0.1:1",
              "sluice.receiver.shutdown-timeout=1s");

  /** What SpringApplication publishes once started (a bare context runner does not). */
  private static void started(ApplicationContext ctx) {
    AvailabilityChangeEvent.publish(ctx, LivenessState.CORRECT);
    AvailabilityChangeEvent.publish(ctx, ReadinessState.ACCEPTING_TRAFFIC);
  }

  @Test
  void byDefaultADisconnectedListenerTurnsNothing503() {
    runner.run(
        ctx -> {
          started(ctx);
          HealthEndpoint health = ctx.getBean(HealthEndpoint.class);
          HealthEndpointGroups groups = ctx.getBean(HealthEndpointGroups.class);
          assertThat(health.health().getStatus()).isEqualTo(Status.UP);
          assertThat(health.healthForPath("readiness").getStatus()).isEqualTo(Status.UP);
          assertThat(((CompositeHealth) health.healthForPath("readiness")).getComponents())
              .containsKeys("readinessState", "sluice");
          assertThat(((CompositeHealth) health.healthForPath("liveness")).getComponents())
              .containsOnlyKeys("livenessState");
          assertThat(
                  groups
                      .get("readiness")
                      .getHttpCodeStatusMapper()
                      .getStatusCode(health.healthForPath("readiness").getStatus()))
              .isEqualTo(200);
        });
  }

  @Test
  void outOfServiceWhenDisconnectedTakesReadinessDownNotLiveness() {
    runner
        .withPropertyValues("sluice.health.disconnected-status=out-of-service")
        .run(
            ctx -> {
              started(ctx);
              HealthEndpoint health = ctx.getBean(HealthEndpoint.class);
              HealthEndpointGroups groups = ctx.getBean(HealthEndpointGroups.class);
              Status readiness = health.healthForPath("readiness").getStatus();
              assertThat(readiness).isEqualTo(Status.OUT_OF_SERVICE);
              assertThat(groups.get("readiness").getHttpCodeStatusMapper().getStatusCode(readiness))
                  .isEqualTo(503);
              assertThat(health.healthForPath("liveness").getStatus()).isEqualTo(Status.UP);
            });
  }

  @Test
  void aReadinessGroupTheApplicationConfiguredIsLeftAlone() {
    runner
        .withPropertyValues("management.endpoint.health.group.readiness.include=readinessState")
        .run(
            ctx ->
                assertThat(
                        ((CompositeHealth)
                                ctx.getBean(HealthEndpoint.class).healthForPath("readiness"))
                            .getComponents())
                    .containsOnlyKeys("readinessState"));
  }
}
