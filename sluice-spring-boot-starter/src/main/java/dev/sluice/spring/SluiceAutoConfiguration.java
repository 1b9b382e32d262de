package dev.sluice.spring;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.receiver.ManagerChannels;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.nio.file.Path;
import javax.sql.DataSource;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
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
 * SluiceListener} methods run by a {@link SluiceListenerContainer} (also the {@link
 * SluiceListenerRegistry}), Micrometer observations of both, and, with Micrometer, the receivers'
 * meters ({@link SluiceHealthAutoConfiguration} adds the health indicator with Actuator), and with
 * {@code sluice.admin.enabled=true} the {@link SluiceAdmin} client of the managers' admin API.
 * {@code sluice.enabled=false} turns it all off.
 *
 * <p>It brings neither Flyway nor jOOQ: Sluice's own tables are the operator's (the {@code sluice
 * migrate} command), or, with {@code sluice.migrations.enabled=true} and {@code sluice-db} on the
 * class path, applied here at startup.
 */
@AutoConfiguration(
    after = {
      DataSourceAutoConfiguration.class,
      DataSourceTransactionManagerAutoConfiguration.class,
      JacksonAutoConfiguration.class
    },
    afterName =
        "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration")
@ConditionalOnProperty(prefix = "sluice", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(SluiceProperties.class)
public class SluiceAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean(SluiceConnectionDetails.class)
  SluiceConnectionDetails sluiceConnectionDetails(SluiceProperties properties) {
    return new PropertiesSluiceConnectionDetails(properties);
  }

  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnSingleCandidate(DataSource.class)
  public SluiceProducer sluiceProducer(
      DataSource dataSource,
      SluiceProperties properties,
      ObjectProvider<ObjectMapper> json,
      ObjectProvider<ObservationRegistry> observations,
      ObjectProvider<SluiceMigrationsRunner> migrations) {
    migrations.ifAvailable(m -> {}); // Sluice's tables first, when migrations are on
    return new SluiceProducer(
        dataSource,
        properties.getProducer().isRequireTransaction(),
        json.getIfAvailable(ObjectMapper::new),
        observations.getIfAvailable(() -> ObservationRegistry.NOOP));
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
      SluiceConnectionDetails connection,
      ObjectProvider<DataSource> dataSource,
      ObjectProvider<PlatformTransactionManager> transactions,
      ObjectProvider<ObjectMapper> json,
      ObjectProvider<ListenerObserver> observer,
      ObjectProvider<ObservationRegistry> observations,
      ObjectProvider<SluiceErrorHandler> errorHandlers,
      ObjectProvider<SluiceMigrationsRunner> migrations,
      BeanFactory beans) {
    ColumnMapper mapper = new ColumnMapper(json.getIfAvailable(ObjectMapper::new));
    return new SluiceListenerContainer(
        registrar,
        properties,
        connection,
        endpoint -> {
          migrations.ifAvailable(m -> {});
          PlatformTransactionManager tm = transactions.getIfUnique();
          DataSource ds = dataSource.getIfUnique();
          return new ListenerInvoker(
              endpoint,
              mapper,
              tm == null ? null : new TransactionTemplate(tm),
              ds,
              observations.getIfAvailable(() -> ObservationRegistry.NOOP),
              endpoint.errorHandler().isEmpty()
                  ? errorHandlers.getIfUnique()
                  : beans.getBean(endpoint.errorHandler(), SluiceErrorHandler.class),
              endpoint.deadLetterHandler().isEmpty()
                  ? null
                  : beans.getBean(endpoint.deadLetterHandler(), SluiceDeadLetterHandler.class));
        },
        observer.getIfAvailable(() -> ListenerObserver.NONE));
  }

  /**
   * The admin API as a bean, with {@code sluice.admin.enabled=true}: on the receivers' targets and
   * TLS settings, with {@code sluice.admin.token} (else the receivers' token).
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnProperty(prefix = "sluice.admin", name = "enabled")
  static class AdminOn {
    @Bean
    @ConditionalOnMissingBean
    SluiceAdmin sluiceAdmin(SluiceProperties properties, SluiceConnectionDetails connection) {
      SluiceProperties.Tls tls = properties.getReceiver().getTls();
      String token = properties.getAdmin().getToken();
      if (token == null || token.isBlank()) {
        token = connection.getToken();
      }
      if (token != null && token.isBlank()) {
        token = null;
      }
      if (token != null && tls.getCaFile() == null) {
        throw new IllegalStateException(
            "sluice.admin: a token is set without sluice.receiver.tls.ca-file: refusing to send"
                + " the token in plain text");
      }
      Path ca = tls.getCaFile() == null ? null : Path.of(tls.getCaFile());
      Path cert = tls.getCertFile() == null ? null : Path.of(tls.getCertFile());
      Path key = tls.getKeyFile() == null ? null : Path.of(tls.getKeyFile());
      String bearer = token;
      return new SluiceAdmin(
          connection.getTargets(),
          target -> ManagerChannels.open(target, ca, cert, key, bearer),
          properties.getAdmin().getTimeout());
    }
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

  /** Sluice's own tables at startup: opt-in, with sluice-db on the class path. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnProperty(prefix = "sluice.migrations", name = "enabled")
  @ConditionalOnClass(name = "dev.sluice.db.SluiceMigrations")
  @ConditionalOnSingleCandidate(DataSource.class)
  static class MigrationsOn {
    @Bean
    SluiceMigrationsRunner sluiceMigrationsRunner(
        DataSource dataSource, SluiceProperties properties) {
      return new SluiceMigrationsRunner(dataSource, properties.getMigrations().getLocations());
    }
  }

  /**
   * {@link SluiceSchedule} beans, written into {@code sluice_schedule} at startup (after Sluice's
   * migrations when they are on), with sluice-db on the class path.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "dev.sluice.db.store.JdbcScheduleStore")
  @ConditionalOnBean(SluiceSchedule.class)
  @ConditionalOnSingleCandidate(DataSource.class)
  static class SchedulesOn {
    @Bean
    SluiceSchedulesRunner sluiceSchedulesRunner(
        DataSource dataSource,
        ObjectProvider<SluiceSchedule> schedules,
        ObjectProvider<SluiceMigrationsRunner> migrations) {
      migrations.ifAvailable(m -> {}); // Sluice's tables first, when migrations are on
      return new SluiceSchedulesRunner(dataSource, schedules.orderedStream().toList());
    }
  }

  /** {@link SluiceSchedule} beans without sluice-db: a clear refusal, not silence. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnMissingClass("dev.sluice.db.store.JdbcScheduleStore")
  @ConditionalOnBean(SluiceSchedule.class)
  static class SchedulesWithoutSluiceDb {
    @Bean
    SluiceSchedulesRunner sluiceSchedulesRunner() {
      throw new IllegalStateException(
          "SluiceSchedule beans need dev.sluice:sluice-db on the class path to be written into"
              + " sluice_schedule; add it, or create the schedules with 'sluice schedule create'");
    }
  }

  /** {@code sluice.migrations.enabled=true} without sluice-db: a clear refusal, not silence. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnProperty(prefix = "sluice.migrations", name = "enabled")
  @ConditionalOnMissingClass("dev.sluice.db.SluiceMigrations")
  static class MigrationsWithoutSluiceDb {
    @Bean
    SluiceMigrationsRunner sluiceMigrationsRunner() {
      throw new IllegalStateException(
          "sluice.migrations.enabled=true needs dev.sluice:sluice-db on the class path (it"
              + " brings Flyway); add it, or create Sluice's tables with 'sluice migrate'");
    }
  }
}
