package dev.sluice.spring;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.MeterRegistry;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.autoconfigure.jackson.JacksonAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Sluice for Spring Boot: a {@link SluiceProducer} on the application's DataSource, the {@link
 * SluiceListener} methods run by a {@link SluiceListenerContainer}, and, when Actuator and
 * Micrometer are present, a health indicator and the receivers' meters. {@code
 * sluice.enabled=false} turns it all off.
 */
@AutoConfiguration(
    after = {
      DataSourceAutoConfiguration.class,
      DataSourceTransactionManagerAutoConfiguration.class,
      JacksonAutoConfiguration.class
    })
@ConditionalOnProperty(prefix = "sluice", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(SluiceProperties.class)
public class SluiceAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnSingleCandidate(DataSource.class)
  public SluiceProducer sluiceProducer(
      DataSource dataSource, SluiceProperties properties, ObjectProvider<ObjectMapper> json) {
    return new SluiceProducer(
        dataSource,
        properties.getProducer().isRequireTransaction(),
        json.getIfAvailable(ObjectMapper::new));
  }

  @Bean
  public static SluiceListenerRegistrar sluiceListenerRegistrar(Environment environment) {
    return new SluiceListenerRegistrar(environment);
  }

  @Bean
  @ConditionalOnMissingBean
  public SluiceListenerContainer sluiceListenerContainer(
      SluiceListenerRegistrar registrar,
      SluiceProperties properties,
      ObjectProvider<DataSource> dataSource,
      ObjectProvider<PlatformTransactionManager> transactions,
      ObjectProvider<ObjectMapper> json,
      ObjectProvider<ListenerObserver> observer) {
    ColumnMapper mapper = new ColumnMapper(json.getIfAvailable(ObjectMapper::new));
    return new SluiceListenerContainer(
        registrar,
        properties,
        endpoint -> {
          PlatformTransactionManager tm = transactions.getIfUnique();
          return new ListenerInvoker(
              endpoint,
              mapper,
              tm == null ? null : new TransactionTemplate(tm),
              dataSource.getIfUnique());
        },
        observer.getIfAvailable(() -> ListenerObserver.NONE));
  }

  /** Receiver meters, when Micrometer is on the class path. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(MeterRegistry.class)
  static class Metrics {
    @Bean
    ListenerObserver sluiceReceiverMeters(ObjectProvider<MeterRegistry> registries) {
      return new ReceiverMeters(registries);
    }
  }

  /** The {@code sluice} health indicator, when Actuator is on the class path. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(HealthIndicator.class)
  static class HealthCheck {
    @Bean
    @ConditionalOnMissingBean(name = "sluiceHealthIndicator")
    SluiceHealthIndicator sluiceHealthIndicator(SluiceListenerContainer container) {
      return new SluiceHealthIndicator(container);
    }
  }
}
