package dev.sluice.test;

import java.lang.reflect.Field;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.platform.commons.support.AnnotationSupport;
import org.junit.platform.commons.support.HierarchyTraversalMode;
import org.junit.platform.commons.support.ReflectionSupport;

/**
 * What {@link SluiceTest} registers: one {@link SluiceExtension}, built from the annotation, per
 * annotated class (its {@code @Nested} classes share it), kept in the class's extension store; it
 * starts on the first of beforeAll or a parameter to resolve (a constructor's comes first with
 * {@code @TestInstance(PER_CLASS)}), and stops after the class.
 */
final class SluiceTestExtension implements BeforeAllCallback, AfterAllCallback, ParameterResolver {
  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(SluiceTestExtension.class);
  private static final String KEY = "sluice";

  @Override
  public void beforeAll(ExtensionContext context) {
    List<Field> fields =
        ReflectionSupport.findFields(
            context.getRequiredTestClass(),
            f ->
                SluiceExtension.class.isAssignableFrom(f.getType())
                    && f.isAnnotationPresent(RegisterExtension.class),
            HierarchyTraversalMode.TOP_DOWN);
    if (!fields.isEmpty()) {
      throw new ExtensionConfigurationException(
          "sluice-test: "
              + context.getRequiredTestClass().getName()
              + " has both @SluiceTest and a @RegisterExtension SluiceExtension field ("
              + fields.get(0).getName()
              + "); use one of them: each starts its own database and manager");
    }
    sluice(context);
  }

  @Override
  public void afterAll(ExtensionContext context) {
    // Only the class that started it has it in its own store; a @Nested class finds null here.
    SluiceExtension owned = context.getStore(NAMESPACE).remove(KEY, SluiceExtension.class);
    if (owned != null) {
      owned.stop();
    }
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return SluiceParameters.claims(parameter);
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return SluiceParameters.resolve(parameter, context, sluice(context));
  }

  /** The class's extension, started; made on first use. */
  private static synchronized SluiceExtension sluice(ExtensionContext context) {
    SluiceExtension existing = context.getStore(NAMESPACE).get(KEY, SluiceExtension.class);
    if (existing != null) {
      return existing;
    }
    ExtensionContext owner = owner(context);
    Class<?> testClass = owner.getRequiredTestClass();
    SluiceTest settings =
        AnnotationSupport.findAnnotation(testClass, SluiceTest.class).orElseThrow();
    SluiceExtension sluice = SluiceExtension.of(settings, testClass);
    // Stored before it starts, so that afterAll stops what a failed start left running.
    owner.getStore(NAMESPACE).put(KEY, sluice);
    try {
      sluice.start(testClass);
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException("sluice-test: starting for " + testClass.getName(), e);
    }
    return sluice;
  }

  /** The outermost class context whose class carries {@link SluiceTest}. */
  private static ExtensionContext owner(ExtensionContext context) {
    ExtensionContext owner = null;
    for (Optional<ExtensionContext> c = Optional.of(context);
        c.isPresent();
        c = c.get().getParent()) {
      ExtensionContext e = c.get();
      if (e.getTestMethod().isEmpty()
          && e.getTestClass().isPresent()
          && AnnotationSupport.isAnnotated(e.getTestClass().get(), SluiceTest.class)) {
        owner = e;
      }
    }
    if (owner == null) {
      throw new ExtensionConfigurationException(
          "sluice-test: no @SluiceTest class around " + context.getDisplayName());
    }
    return owner;
  }
}
