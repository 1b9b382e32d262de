package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
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
          .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
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
  void listenersStartWithTheContextAndHealthSaysDownWithoutAManager() {
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
              assertThat(ctx.getBean(SluiceHealthIndicator.class).health().getStatus().getCode())
                  .isEqualTo("DOWN");
              c.stop();
              assertThat(ctx.getBean(SluiceHealthIndicator.class).health().getStatus().getCode())
                  .isEqualTo("OUT_OF_SERVICE");
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
  void twoListenersOfOneQueueAreRefused() {
    runner
        .withUserConfiguration(SameQueueTwice.class)
        .run(
            ctx ->
                assertThat(ctx)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining("two @SluiceListener methods for queue order_events"));
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
