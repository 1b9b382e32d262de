package dev.sluice.spring;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.Environment;

/**
 * Finds {@link SluiceListener} methods on every bean as it is initialized and keeps them for the
 * {@link SluiceListenerContainer}. Beans are initialized on the thread that refreshes the context;
 * the container reads the list once, when it starts, after every singleton is initialized.
 */
public class SluiceListenerRegistrar implements BeanPostProcessor {
  private final Environment environment;
  private final List<ListenerEndpoint> endpoints = new ArrayList<>();

  public SluiceListenerRegistrar(Environment environment) {
    this.environment = environment;
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    Class<?> target = AopUtils.getTargetClass(bean);
    Map<Method, SluiceListener> found =
        MethodIntrospector.selectMethods(
            target,
            (MethodIntrospector.MetadataLookup<SluiceListener>)
                m -> AnnotatedElementUtils.findMergedAnnotation(m, SluiceListener.class));
    for (Map.Entry<Method, SluiceListener> e : found.entrySet()) {
      SluiceListener a = e.getValue();
      String queue = environment.resolveRequiredPlaceholders(a.queue()).strip();
      if (queue.isEmpty()) {
        throw new IllegalStateException(
            "@SluiceListener on " + beanName + "." + e.getKey().getName() + ": queue is empty");
      }
      if (a.concurrency() < 0) {
        throw new IllegalStateException(
            "@SluiceListener on "
                + beanName
                + "."
                + e.getKey().getName()
                + ": concurrency must be >= 1 (0 = from the properties), was "
                + a.concurrency());
      }
      Method invocable = AopUtils.selectInvocableMethod(e.getKey(), bean.getClass());
      String id = environment.resolveRequiredPlaceholders(a.id()).strip();
      String autoStartup = environment.resolveRequiredPlaceholders(a.autoStartup()).strip();
      add(
          new ListenerEndpoint(
              id.isEmpty() ? queue : id,
              beanName,
              bean,
              invocable,
              queue,
              a.concurrency(),
              a.payload().strip(),
              a.transactional(),
              autoStartup.isEmpty() ? null : Boolean.valueOf(autoStartup),
              a.errorHandler().strip(),
              a.deadLetterHandler().strip()));
    }
    return bean;
  }

  private synchronized void add(ListenerEndpoint endpoint) {
    for (ListenerEndpoint other : endpoints) {
      if (other.id().equals(endpoint.id())) {
        throw new IllegalStateException(
            "two @SluiceListener methods with id "
                + endpoint.id()
                + ": "
                + other.describe()
                + " and "
                + endpoint.describe()
                + " (a listener's id defaults to its queue: give each listener of a queue its own"
                + " id)");
      }
    }
    endpoints.add(endpoint);
  }

  synchronized List<ListenerEndpoint> endpoints() {
    return List.copyOf(endpoints);
  }
}
