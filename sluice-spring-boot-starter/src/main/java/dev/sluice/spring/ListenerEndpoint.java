package dev.sluice.spring;

import java.lang.reflect.Method;

/**
 * One {@link SluiceListener} method found on a bean.
 *
 * @param id the listener's id (the queue name unless the annotation sets one)
 * @param bean the bean (possibly a proxy) to invoke
 * @param method the method to invoke on {@code bean}
 * @param queue the queue, placeholders resolved
 * @param concurrency from the annotation; 0 = from the properties
 * @param autoStartup from the annotation; null = from the properties
 * @param errorHandler bean name of its {@link SluiceErrorHandler}; "" = the application's
 * @param deadLetterHandler bean name of its {@link SluiceDeadLetterHandler}; "" = none
 */
record ListenerEndpoint(
    String id,
    String beanName,
    Object bean,
    Method method,
    String queue,
    int concurrency,
    String payload,
    boolean transactional,
    Boolean autoStartup,
    String errorHandler,
    String deadLetterHandler) {

  String describe() {
    return beanName + "." + method.getName() + " (listener " + id + ", queue " + queue + ")";
  }
}
