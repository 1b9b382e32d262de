package dev.sluice.test;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;
import org.slf4j.spi.SLF4JServiceProvider;

/**
 * What sluice-test puts on its users' test class path besides itself, seen from its own tests: the
 * one SLF4J provider is the Logback these tests declare in test scope (which users do not get). The
 * enforcer rule in sluice-test's pom checks the dependency tree; this checks what is actually
 * loaded, which also catches a provider inside a jar under another name.
 */
class SluiceTestClassPathTest {
  @Test
  void theOnlySlf4jProviderIsTheTestsOwnLogback() {
    List<String> providers = new ArrayList<>();
    for (SLF4JServiceProvider p : ServiceLoader.load(SLF4JServiceProvider.class)) {
      providers.add(p.getClass().getName());
    }
    assertThat(providers).containsExactly("ch.qos.logback.classic.spi.LogbackServiceProvider");
  }

  @Test
  void noSlf4jOneBindingAndNoLog4jBackend() {
    ClassLoader loader = getClass().getClassLoader();
    assertThat(loader.getResource("org/slf4j/impl/StaticLoggerBinder.class")).isNull();
    assertThat(loader.getResource("org/apache/logging/log4j/core/Logger.class")).isNull();
    assertThat(loader.getResource("org/apache/log4j/Logger.class")).isNull();
  }
}
