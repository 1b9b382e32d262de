package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.InputStream;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * What the auto-configuration creates and refuses, without a database: the listeners point at a
 * port where no manager runs, so their receivers only retry in the background.
 */
class SluiceAutoConfigurationTest {
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  SluiceAutoConfiguration.class, SluiceHealthAutoConfiguration.class))
          .withPropertyValues(
              "sluice.receiver.targets=127.0.0.1:1", "sluice.receiver.shutdown-timeout=1s");

  record Order(long orderId, String note) {}

  @Configuration(proxyBeanMethods = false)
  static class OneListener {
    @Bean
    Object orderListener() {
      return new Object() {
        @SluiceListener(queue = "${shop.queue:order_events}", concurrency = 2)
        public void on(Order order, EventMetadata meta) {}
      };
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class SameQueueTwice {
    @Bean
    Object first() {
      return new Object() {
        @SluiceListener(queue = "order_events")
        public void on(Map<String, Object> columns) {}
      };
    }

    @Bean
    Object second() {
      return new Object() {
        @SluiceListener(queue = "order_events")
        public void again(Map<String, Object> columns) {}
      };
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class TwoDataParameters {
    @Bean
    Object listener() {
      return new Object() {
        @SluiceListener(queue = "order_events")
        public void on(Order a, Order b) {}
      };
    }
  }

  @Test
  void listenersStartWithTheContextAndHealthSaysUnknownWithoutAManager() {
    runner
        .withUserConfiguration(OneListener.class)
        .withPropertyValues("shop.queue=orders_v2")
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              assertThat(ctx).doesNotHaveBean(SluiceProducer.class); // no DataSource
              SluiceListenerContainer c = ctx.getBean(SluiceListenerContainer.class);
              assertThat(c.isRunning()).isTrue();
              assertThat(c.stats()).containsOnlyKeys("orders_v2");
              assertThat(c.listenerIds()).containsExactly("orders_v2");
              // Not DOWN: a manager outage must not turn the application's health 503.
              assertThat(ctx.getBean(SluiceHealthIndicator.class).health().getStatus().getCode())
                  .isEqualTo("UNKNOWN");
              c.stop();
              assertThat(ctx.getBean(SluiceHealthIndicator.class).health().getStatus().getCode())
                  .isEqualTo("UNKNOWN");
            });
  }

  @Test
  void disabledCreatesNothing() {
    runner
        .withUserConfiguration(OneListener.class)
        .withPropertyValues("sluice.enabled=false")
        .run(ctx -> assertThat(ctx).doesNotHaveBean(SluiceListenerContainer.class));
  }

  @Test
  void twoListenersOfOneQueueNeedTheirOwnIds() {
    runner
        .withUserConfiguration(SameQueueTwice.class)
        .run(
            ctx ->
                assertThat(ctx)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining("two @SluiceListener methods with id order_events"));
    runner
        .withUserConfiguration(SameQueueTwoIds.class)
        .withPropertyValues("sluice.listeners.second.auto-startup=false")
        .run(
            ctx -> {
              SluiceListenerRegistry r = ctx.getBean(SluiceListenerRegistry.class);
              assertThat(r.listenerIds()).containsExactlyInAnyOrder("order_events", "second");
              assertThat(r.state("order_events")).isEqualTo(SluiceListenerRegistry.State.RUNNING);
              assertThat(r.state("second")).isEqualTo(SluiceListenerRegistry.State.STOPPED);
              assertThat(r.queue("second")).isEqualTo("order_events");
              assertThatThrownBy(() -> r.pause("nope"))
                  .hasMessageContaining("no @SluiceListener with id 'nope'");
            });
  }

  @Configuration(proxyBeanMethods = false)
  static class SameQueueTwoIds {
    @Bean
    Object first() {
      return new Object() {
        @SluiceListener(queue = "order_events")
        public void on(Map<String, Object> columns) {}
      };
    }

    @Bean
    Object second() {
      return new Object() {
        @SluiceListener(id = "second", queue = "order_events")
        public void again(Map<String, Object> columns) {}
      };
    }
  }

  @Test
  void theHealthIndicatorCanBeTurnedOff() {
    runner
        .withUserConfiguration(OneListener.class)
        .withPropertyValues("management.health.sluice.enabled=false")
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              assertThat(ctx).doesNotHaveBean(SluiceHealthIndicator.class);
              assertThat(ctx).hasSingleBean(SluiceListenerContainer.class);
            });
  }

  @Test
  void withoutActuatorOrMicrometerTheListenersStillRun() {
    runner
        .withUserConfiguration(OneListener.class)
        // (Spring Boot drops SluiceHealthAutoConfiguration by its class condition before it reads
        // the rest when Actuator is missing altogether; here only its API is hidden.)
        .withClassLoader(
            new org.springframework.boot.test.context.FilteredClassLoader(
                "org.springframework.boot.actuate.health", "io.micrometer.core"))
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              assertThat(ctx).doesNotHaveBean(SluiceHealthIndicator.class);
              assertThat(ctx.getBean(SluiceListenerContainer.class).isRunning()).isTrue();
            });
  }

  @Test
  void theListenersEndpointIsThereWhenExposedAndWithActuatorOnly() {
    ApplicationContextRunner withEndpoint =
        runner
            .withConfiguration(AutoConfigurations.of(SluiceEndpointAutoConfiguration.class))
            .withUserConfiguration(OneListener.class);
    withEndpoint.run(
        ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(SluiceListenersEndpoint.class));
    withEndpoint
        .withPropertyValues("management.endpoints.web.exposure.include=sluice")
        .run(ctx -> assertThat(ctx).hasNotFailed().hasSingleBean(SluiceListenersEndpoint.class));
    withEndpoint
        .withPropertyValues("management.endpoints.web.exposure.include=sluice")
        // (Actuator's endpoint API hidden; without Actuator at all, Spring Boot drops the
        // auto-configuration by its class condition before reading it.)
        .withClassLoader(
            new org.springframework.boot.test.context.FilteredClassLoader(
                "org.springframework.boot.actuate.endpoint",
                "org.springframework.boot.actuate.autoconfigure.endpoint"))
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed().doesNotHaveBean(SluiceListenersEndpoint.class);
              assertThat(ctx).hasSingleBean(SluiceListenerContainer.class);
            });
  }

  @Test
  void theAdminBeanIsOptInAndRefusesATokenInPlainText() {
    runner.run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(SluiceAdmin.class));
    runner
        .withPropertyValues("sluice.admin.enabled=true")
        .run(ctx -> assertThat(ctx).hasNotFailed().hasSingleBean(SluiceAdmin.class));
    runner
        .withPropertyValues("sluice.admin.enabled=true", "sluice.admin.token=secret")
        .run(
            ctx ->
                assertThat(ctx)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining("refusing to send the token in plain text"));
  }

  @Test
  void connectionDetailsWinOverTheProperties() {
    runner
        .withUserConfiguration(OneListener.class)
        .withBean(SluiceConnectionDetails.class, () -> () -> List.of("127.0.0.1:2"))
        .run(
            ctx -> {
              assertThat(ctx).hasSingleBean(SluiceConnectionDetails.class);
              assertThat(ctx.getBean(SluiceConnectionDetails.class).getTargets())
                  .containsExactly("127.0.0.1:2");
              assertThat(ctx.getBean(SluiceListenerContainer.class).targets()).isEqualTo(1);
            });
  }

  @Test
  void migrationsOnNeedADataSourceAndOffByDefault() {
    runner
        .withUserConfiguration(OneListener.class)
        .run(ctx -> assertThat(ctx).doesNotHaveBean(SluiceMigrationsRunner.class));
  }

  @Test
  void virtualThreadsOnlyWhereTheJvmHasThem() {
    boolean has = Runtime.version().feature() >= 21;
    assertThat(VirtualThreads.available()).isEqualTo(has);
    assertThat(VirtualThreads.factory("x-") != null).isEqualTo(has);
  }

  @Test
  void aListenerWithTwoDataParametersIsRefused() {
    runner
        .withUserConfiguration(TwoDataParameters.class)
        .run(
            ctx ->
                assertThat(ctx)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining("only one parameter may take the event's data"));
  }

  @Test
  void aTokenWithoutTlsOrACertificateWithoutItsKeyStopsTheStart() {
    runner
        .withUserConfiguration(OneListener.class)
        .withPropertyValues("sluice.receiver.token=secret")
        .run(
            ctx ->
                assertThat(ctx)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining("refusing to send the token in plain text")
                    .hasMessageNotContaining("secret"));
    runner
        .withUserConfiguration(OneListener.class)
        .withPropertyValues(
            "sluice.receiver.tls.ca-file=/etc/ca.pem", "sluice.receiver.tls.cert-file=/etc/c.pem")
        .run(
            ctx ->
                assertThat(ctx)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining(
                        "cert-file and sluice.receiver.tls.key-file go together"));
  }

  @Test
  void everyPropertyHasADescriptionAndTheDefaultsAreInTheMetadata() throws Exception {
    JsonNode root;
    try (InputStream in =
        getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
      assertThat(in).as("generated by spring-boot-configuration-processor").isNotNull();
      root = new ObjectMapper().readTree(in);
    }
    Map<String, JsonNode> byName = new TreeMap<>();
    root.get("properties").forEach(p -> byName.put(p.get("name").asText(), p));
    assertThat(byName)
        .containsKeys(
            "sluice.enabled",
            "sluice.producer.require-transaction",
            "sluice.receiver.targets",
            "sluice.receiver.reconnect-min",
            "sluice.receiver.reconnect-max",
            "sluice.receiver.virtual-threads",
            "sluice.receiver.tls.ca-file",
            "sluice.listeners",
            "sluice.health.disconnected-status",
            "sluice.health.readiness",
            "sluice.migrations.enabled",
            "sluice.migrations.locations",
            "sluice.admin.enabled",
            "sluice.admin.token",
            "management.health.sluice.enabled");
    assertThat(byName.values())
        .allSatisfy(
            p ->
                assertThat(p.path("description").asText()).as(p.get("name").asText()).isNotBlank());
    assertThat(byName.get("sluice.receiver.reconnect-max").path("defaultValue").asText())
        .isEqualTo("5s");
    assertThat(byName.get("sluice.receiver.concurrency").path("defaultValue").asInt()).isEqualTo(8);
    assertThat(byName.get("sluice.health.disconnected-status").path("defaultValue").asText())
        .isEqualTo("UNKNOWN");
  }

  @Test
  void columnNamesMapToCamelCase() {
    assertThat(ColumnMapper.camel("order_id")).isEqualTo("orderId");
    assertThat(ColumnMapper.camel("_x_y_z")).isEqualTo("xYZ");
    assertThat(ColumnMapper.camel("plain")).isEqualTo("plain");
    ColumnMapper m = new ColumnMapper(new com.fasterxml.jackson.databind.ObjectMapper());
    assertThat(m.fromColumns(Map.of("order_id", 5L, "note", "hi"), m.type(Order.class)))
        .isEqualTo(new Order(5, "hi"));
    assertThat(m.toColumns(new Order(5, "hi")))
        .containsEntry("order_id", 5L)
        .containsEntry("note", "hi");
  }
}
