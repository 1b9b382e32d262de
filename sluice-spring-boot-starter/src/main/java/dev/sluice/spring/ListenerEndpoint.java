package dev.sluice.spring;

import java.lang.reflect.Method;

/**
 * One {@link SluiceListener} method found on a bean.
 *
 * @param bean the bean (possibly a proxy) to invoke
 * @param method the method to invoke on {@code bean}
 * @param queue the queue, placeholders resolved
 * @param concurrency from the annotation; 0 = from the properties
 */
record ListenerEndpoint(
    String beanName,
    Object bean,
    Method method,
    String queue,
    int concurrency,
    String payload,
    boolean transactional) {

  String describe() {
    return beanName + "." + method.getName() + " (queue " + queue + ")";
  }
}
