package dev.sluice.spring;

import java.lang.reflect.Method;
import java.util.concurrent.ThreadFactory;

/**
 * Virtual threads when the JVM has them (Java 21 and later), found by reflection: the starter is
 * compiled for Java 17, where {@code Thread.ofVirtual()} does not exist.
 */
final class VirtualThreads {
  private static final Method OF_VIRTUAL = lookUp();

  private VirtualThreads() {}

  /** Whether this JVM makes virtual threads. */
  static boolean available() {
    return OF_VIRTUAL != null;
  }

  /**
   * A factory of virtual threads named {@code prefix0}, {@code prefix1}, ...; null on a JVM without
   * them.
   */
  static ThreadFactory factory(String prefix) {
    if (OF_VIRTUAL == null) {
      return null;
    }
    try {
      Object builder = OF_VIRTUAL.invoke(null);
      Class<?> ofVirtual = Class.forName("java.lang.Thread$Builder$OfVirtual");
      builder = ofVirtual.getMethod("name", String.class, long.class).invoke(builder, prefix, 0L);
      Class<?> threadBuilder = Class.forName("java.lang.Thread$Builder");
      return (ThreadFactory) threadBuilder.getMethod("factory").invoke(builder);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }

  private static Method lookUp() {
    try {
      return Thread.class.getMethod("ofVirtual");
    } catch (NoSuchMethodException | RuntimeException e) {
      return null;
    }
  }
}
