package dev.sluice.test;

import dev.sluice.manager.SluiceServer;
import java.lang.annotation.Annotation;
import java.lang.reflect.Executable;
import java.lang.reflect.Parameter;
import java.sql.Connection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;

/**
 * The parameters {@link SluiceTest} and a registered {@link SluiceExtension} inject: which they
 * claim, and what they give.
 */
final class SluiceParameters {
  static final String SUPPORTED =
      "SluiceExtension, SluiceDatabase, javax.sql.DataSource, SluiceServer, and RecordingReceiver"
          + " annotated @Receive(\"queue\")";

  private static final Set<Class<?>> TYPES =
      Set.of(
          SluiceExtension.class,
          SluiceDatabase.class,
          DataSource.class,
          SluiceServer.class,
          RecordingReceiver.class);

  /**
   * Packages whose other types are claimed only to be refused with a clear message, where JUnit
   * would otherwise say no more than that no resolver was found.
   */
  private static final List<String> OWN_PACKAGES =
      List.of("dev.sluice.core", "dev.sluice.db", "dev.sluice.manager", "dev.sluice.receiver");

  private static final String SPRING_INJECTION = "org.springframework.beans.factory.annotation.";

  private SluiceParameters() {}

  /** Whether the parameter is ours to give (or to refuse with a clear message). */
  static boolean claims(ParameterContext p) {
    Parameter param = p.getParameter();
    if (springInjects(param, p.getDeclaringExecutable())) {
      return false;
    }
    if (p.isAnnotated(Receive.class)) {
      return true;
    }
    Class<?> type = param.getType();
    return TYPES.contains(type) || type == Connection.class || ownPackage(type);
  }

  static Object resolve(ParameterContext p, ExtensionContext context, SluiceExtension sluice) {
    Class<?> type = p.getParameter().getType();
    Optional<Receive> receive = p.findAnnotation(Receive.class);
    if (receive.isPresent()) {
      if (type != RecordingReceiver.class) {
        throw refuse(p, "@Receive goes on a RecordingReceiver parameter, not on " + type.getName());
      }
      String queue = receive.get().value();
      if (queue.isBlank()) {
        throw refuse(p, "@Receive needs a queue name");
      }
      RecordingReceiver r = sluice.receive(queue, event -> {});
      // Closed when the method (or, for a constructor or @BeforeAll, the class) is done.
      context
          .getStore(ExtensionContext.Namespace.create(SluiceParameters.class))
          .put(new Object(), (ExtensionContext.Store.CloseableResource) r::close);
      return r;
    }
    if (type == RecordingReceiver.class) {
      throw refuse(
          p,
          "a RecordingReceiver parameter needs @Receive(\"queue\") to say which queue it receives;"
              + " or call SluiceExtension.receive(queue, handler)");
    }
    if (type == SluiceExtension.class) {
      return sluice;
    }
    if (type == SluiceDatabase.class) {
      return sluice.database();
    }
    if (type == DataSource.class) {
      return sluice.dataSource();
    }
    if (type == SluiceServer.class) {
      return sluice.manager();
    }
    if (type == Connection.class) {
      throw refuse(
          p,
          "sluice-test gives no Connection (it could not know when to close it); ask for a"
              + " javax.sql.DataSource and open one in a try-with-resources");
    }
    throw refuse(p, "sluice-test cannot give a " + type.getName());
  }

  private static ParameterResolutionException refuse(ParameterContext p, String why) {
    Executable e = p.getDeclaringExecutable();
    return new ParameterResolutionException(
        why
            + ": parameter ["
            + p.getParameter()
            + "] of "
            + e.getDeclaringClass().getSimpleName()
            + "."
            + (e instanceof java.lang.reflect.Constructor ? "<init>" : e.getName())
            + ". @SluiceTest injects: "
            + SUPPORTED
            + ".");
  }

  private static boolean ownPackage(Class<?> type) {
    String pkg = type.getPackageName();
    for (String own : OWN_PACKAGES) {
      if (pkg.equals(own) || pkg.startsWith(own + ".")) {
        return true;
      }
    }
    return pkg.equals("dev.sluice.test");
  }

  /**
   * A parameter Spring's extension injects ({@code @Autowired}, {@code @Value}, {@code @Qualifier},
   * or any parameter of an {@code @Autowired} constructor): left to it, so that both never compete
   * for one.
   */
  private static boolean springInjects(Parameter param, Executable executable) {
    for (Annotation a : param.getAnnotations()) {
      if (a.annotationType().getName().startsWith(SPRING_INJECTION)) {
        return true;
      }
    }
    if (executable instanceof java.lang.reflect.Constructor) {
      for (Annotation a : executable.getAnnotations()) {
        if (a.annotationType().getName().equals(SPRING_INJECTION + "Autowired")) {
          return true;
        }
      }
    }
    return false;
  }
}
