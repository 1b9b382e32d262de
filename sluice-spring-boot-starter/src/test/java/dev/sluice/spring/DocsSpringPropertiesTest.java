package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every {@code sluice.*} Spring property that docs/java.md names is one {@link SluiceProperties}
 * binds: each dotted, kebab-case segment is a property of the class at that point ({@code
 * listeners.<id>} a key of its map); and every property it binds is named there. The page's other
 * dotted {@code sluice.} names — Micrometer meters, observation keys, Java calls on a variable
 * named {@code sluice}, the proto package — are not properties: meters and keys are listed here,
 * calls are those followed by a parenthesis.
 */
class DocsSpringPropertiesTest {
  static final Path PAGE = Path.of("docs", "java.md");

  /** Meter and observation names, and files, that the page spells as sluice.x. */
  static final Set<String> NOT_PROPERTIES =
      Set.of(
          "sluice.receiver.handling",
          "sluice.receiver.in.flight",
          "sluice.receiver.completions",
          "sluice.receiver.streams.connected",
          "sluice.receiver.acks",
          "sluice.listener",
          "sluice.listener.id",
          "sluice.producer",
          "sluice.attempt",
          "sluice.shard",
          "sluice.tenant",
          "sluice.v1",
          "sluice.v1.Admin",
          "sluice.yaml");

  private static final Pattern NAME =
      Pattern.compile("(?<![\\w.$-])sluice(?:\\.(?:[A-Za-z0-9<>-]+|\\*))+(?![\\w(])");
  private static final Pattern TABLE_CELL = Pattern.compile("^\\| ([^|]+) \\|");
  private static final Pattern CODE = Pattern.compile("`([^`]+)`");

  @Test
  void everyPropertyTheJavaPageNamesIsBound() throws Exception {
    String page = Files.readString(root().resolve(PAGE));
    Set<String> named = new TreeSet<>(names(page));
    named.removeAll(NOT_PROPERTIES);
    assertThat(named).as("sluice.* properties named in " + PAGE).hasSizeGreaterThan(25);
    Set<String> unknown = new TreeSet<>();
    for (String name : named) {
      String problem = resolve(name);
      if (problem != null) {
        unknown.add(name + ": " + problem);
      }
    }
    assertThat(unknown).as("properties SluiceProperties does not have").isEmpty();
  }

  @Test
  void everyPropertyOfSluicePropertiesIsOnTheJavaPage() throws Exception {
    Set<String> named = new TreeSet<>(names(Files.readString(root().resolve(PAGE))));
    List<String> all = properties("sluice", SluiceProperties.class);
    assertThat(all).as("SluiceProperties' properties").hasSizeGreaterThan(25);
    Set<String> missing = new TreeSet<>();
    for (String property : all) {
      if (!named.contains(property)) {
        missing.add(property);
      }
    }
    assertThat(missing).as("properties of SluiceProperties that " + PAGE + " leaves out").isEmpty();
  }

  /** The leaf properties of a properties class, kebab-case; a map's key as {@code <id>}. */
  static List<String> properties(String prefix, Type type) {
    List<String> out = new ArrayList<>();
    Class<?> raw = raw(type);
    if (Map.class.isAssignableFrom(raw)) {
      out.addAll(
          properties(prefix + ".<id>", ((ParameterizedType) type).getActualTypeArguments()[1]));
      return out;
    }
    if (raw.getEnclosingClass() != SluiceProperties.class && raw != SluiceProperties.class) {
      out.add(prefix);
      return out;
    }
    for (Method m : raw.getMethods()) {
      String n = m.getName();
      if (m.getParameterCount() != 0 || m.getDeclaringClass() == Object.class) {
        continue;
      }
      String bean =
          n.startsWith("get") ? n.substring(3) : n.startsWith("is") ? n.substring(2) : null;
      if (bean == null || bean.isEmpty()) {
        continue;
      }
      String kebab = bean.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
      out.addAll(properties(prefix + "." + kebab, m.getGenericReturnType()));
    }
    return out;
  }

  @Test
  void anUnknownPropertyIsFound() {
    assertThat(resolve("sluice.receiver.max-inflight")).contains("max-inflight");
    assertThat(resolve("sluice.listeners.<id>.concurency")).contains("concurency");
    assertThat(resolve("sluice.recevier.targets")).contains("recevier");
    assertThat(resolve("sluice.receiver.tls.ca-file")).isNull();
    assertThat(names("set `sluice.receiver.tls.ca-file`, `.cert-file` here"))
        .containsExactly("sluice.receiver.tls.ca-file");
    assertThat(names("| `sluice.receiver.tls.ca-file`, `.cert-file` / `-x` | - |\n"))
        .contains("sluice.receiver.tls.cert-file", "sluice.receiver.tls.ca-x");
  }

  /**
   * The dotted sluice. names of a page; in a table's first column also the short forms that
   * continue the cell's first name ({@code `.cert-file`}: its sibling, {@code `-max`}: its last
   * word replaced).
   */
  static List<String> names(String page) {
    List<String> out = new ArrayList<>();
    Matcher m = NAME.matcher(page);
    while (m.find()) {
      out.add(m.group());
    }
    for (String line : page.split("\n")) {
      Matcher cell = TABLE_CELL.matcher(line);
      if (!cell.find()) {
        continue;
      }
      String full = null;
      Matcher code = CODE.matcher(cell.group(1));
      while (code.find()) {
        String c = code.group(1);
        if (c.startsWith("sluice.")) {
          full = c;
        } else if (full != null && c.startsWith(".")) {
          out.add(full.substring(0, full.lastIndexOf('.')) + c);
        } else if (full != null && c.startsWith("-")) {
          out.add(full.substring(0, full.lastIndexOf('-')) + c);
        }
      }
    }
    return out;
  }

  /** Null when {@code name} is a property (or, ending in .*, a group) of SluiceProperties. */
  static String resolve(String name) {
    String[] parts = name.split("\\.");
    Type type = SluiceProperties.class;
    for (int i = 1; i < parts.length; i++) {
      String part = parts[i];
      if (part.equals("*")) {
        return i == parts.length - 1 ? null : "'*' before the last segment";
      }
      Class<?> raw = raw(type);
      if (Map.class.isAssignableFrom(raw)) {
        type = ((ParameterizedType) type).getActualTypeArguments()[1];
        continue;
      }
      Method getter = getter(raw, part);
      if (getter == null) {
        return "no property '" + part + "' in " + raw.getSimpleName();
      }
      type = getter.getGenericReturnType();
    }
    return null;
  }

  private static Class<?> raw(Type t) {
    return t instanceof ParameterizedType p ? (Class<?>) p.getRawType() : (Class<?>) t;
  }

  private static Method getter(Class<?> c, String kebab) {
    StringBuilder camel = new StringBuilder();
    for (String w : kebab.split("-")) {
      if (!w.isEmpty()) {
        camel.append(w.substring(0, 1).toUpperCase(Locale.ROOT)).append(w.substring(1));
      }
    }
    for (String prefix : List.of("get", "is")) {
      try {
        Method m = c.getMethod(prefix + camel);
        if (m.getParameterCount() == 0 && m.getDeclaringClass() != Object.class) {
          return m;
        }
      } catch (NoSuchMethodException e) {
        // try the next prefix
      }
    }
    return null;
  }

  private static Path root() {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.exists(p.resolve("mvnw")) && Files.exists(p.resolve(PAGE))) {
        return p;
      }
    }
    throw new IllegalStateException("no checkout root above " + Path.of("").toAbsolutePath());
  }
}
