package dev.sluice.receiver;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.util.Map;

/**
 * Maps an event's user columns to a record, component by component (see {@link ReceivedEvent#as}).
 */
final class RecordMapper {
  private static final Map<Class<?>, Class<?>> BOXES =
      Map.of(
          long.class, Long.class,
          int.class, Integer.class,
          short.class, Short.class,
          double.class, Double.class,
          boolean.class, Boolean.class);

  private RecordMapper() {}

  static <T extends Record> T map(ReceivedEvent event, Class<T> type) {
    RecordComponent[] components = type.getRecordComponents();
    Class<?>[] types = new Class<?>[components.length];
    Object[] args = new Object[components.length];
    for (int i = 0; i < components.length; i++) {
      RecordComponent c = components[i];
      types[i] = c.getType();
      String column = column(event, c.getName());
      Class<?> boxed = BOXES.getOrDefault(c.getType(), c.getType());
      if (column == null || event.isNull(column)) {
        if (c.getType().isPrimitive()) {
          throw new IllegalArgumentException(
              type.getSimpleName()
                  + "."
                  + c.getName()
                  + " is a "
                  + c.getType()
                  + " but event "
                  + event.id()
                  + (column == null
                      ? " has no column '" + c.getName() + "' or '" + snake(c.getName()) + "'"
                      : " has NULL in '" + column + "'"));
        }
        args[i] = null;
      } else if (boxed == String.class) {
        args[i] = event.getJsonOrString(column);
      } else {
        args[i] = event.typed(column, boxed);
      }
    }
    try {
      Constructor<T> ctor = type.getDeclaredConstructor(types);
      ctor.setAccessible(true);
      return ctor.newInstance(args);
    } catch (InvocationTargetException e) {
      throw new IllegalArgumentException(
          "cannot make a " + type.getSimpleName() + " of event " + event.id() + ": " + e.getCause(),
          e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new IllegalArgumentException(
          "cannot make a " + type.getSimpleName() + " of event " + event.id() + ": " + e, e);
    }
  }

  /** The column a component reads: its own name, else its snake_case name; null if neither. */
  private static String column(ReceivedEvent event, String component) {
    if (event.hasColumn(component)) {
      return component;
    }
    String snake = snake(component);
    return event.hasColumn(snake) ? snake : null;
  }

  static String snake(String camel) {
    StringBuilder sb = new StringBuilder(camel.length() + 4);
    for (char ch : camel.toCharArray()) {
      if (Character.isUpperCase(ch)) {
        sb.append('_').append(Character.toLowerCase(ch));
      } else {
        sb.append(ch);
      }
    }
    return sb.toString();
  }
}
