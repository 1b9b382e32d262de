package dev.sluice.core;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The core sees the database through the db module's store interfaces only ({@code Stores}, {@code
 * DispatchStore}, {@code GroupStore}, ...): no class of it uses a JDBC implementation, and neither
 * the core nor the manager writes SQL. A statement belongs in {@code db}, where the compare-and-set
 * rules live.
 */
class StorePortsTest {
  /** A JDBC implementation in db: a class whose (outer) name starts with Jdbc. */
  private static final String JDBC_CLASS = "dev\\.sluice\\.db\\..*\\.?Jdbc[^.]*";

  @Test
  void coreUsesNoJdbcClassOfDb() {
    JavaClasses core =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.sluice.core");
    assertThat(core).as("core's main classes were found").isNotEmpty();
    ArchRule rule =
        noClasses()
            .that()
            .resideInAPackage("dev.sluice.core..")
            .should()
            .dependOnClassesThat()
            .haveNameMatching(JDBC_CLASS)
            .because("core builds its stores through dev.sluice.db.store.Stores");
    rule.check(core);
  }

  /** A statement in a string literal (adjacent literals joined first). */
  private static final Pattern SQL =
      Pattern.compile(
          "(?i)\\bSELECT\\b.*\\bFROM\\b|\\bUPDATE\\s+[`\\w.]+\\s+SET\\b|\\bINSERT\\s+INTO\\b"
              + "|\\bDELETE\\s+FROM\\b|(?-i:^\\s*(SELECT|SHOW)\\s+[@\\w`*])");

  private static final Pattern LITERAL = Pattern.compile("\"((?:[^\"\\\\\\n]|\\\\.)*)\"");

  /** {@code "a" + "b"} (on one line or across lines) read as {@code "ab"}. */
  private static final Pattern JOIN = Pattern.compile("\"\\s*\\+\\s*\"");

  @Test
  void coreAndManagerMainSourcesHoldNoSql() {
    List<String> found = new ArrayList<>();
    found.addAll(sqlIn(Path.of("src/main/java")));
    found.addAll(sqlIn(Path.of("../manager/src/main/java")));
    assertThat(found).as("SQL in core or manager main sources (it belongs in db)").isEmpty();
  }

  static List<String> sqlIn(Path root) {
    assertThat(root).isDirectory();
    List<String> out = new ArrayList<>();
    try (Stream<Path> files = Files.walk(root)) {
      for (Path p : files.filter(f -> f.toString().endsWith(".java")).sorted().toList()) {
        String text = JOIN.matcher(withoutComments(Files.readString(p))).replaceAll("");
        Matcher m = LITERAL.matcher(text);
        while (m.find()) {
          if (SQL.matcher(m.group(1)).find()) {
            out.add(p + ": \"" + m.group(1) + "\"");
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  /** The source without its comment lines (Javadoc and // lines), so that prose may name SQL. */
  private static String withoutComments(String source) {
    StringBuilder out = new StringBuilder(source.length());
    for (String line : source.split("\n", -1)) {
      String t = line.strip();
      if (!(t.startsWith("*") || t.startsWith("/*") || t.startsWith("//"))) {
        out.append(line);
      }
      out.append('\n');
    }
    return out.toString();
  }

  @Test
  void theScanFindsAStatement() {
    assertThat(SQL.matcher("SELECT a, b FROM t WHERE x = ?").find()).isTrue();
    assertThat(SQL.matcher("UPDATE `orders` SET state = 1").find()).isTrue();
    assertThat(SQL.matcher("insert into t (a) values (?)").find()).isTrue();
    assertThat(SQL.matcher("DELETE FROM t").find()).isTrue();
    assertThat(SQL.matcher("SELECT @@log_bin").find()).isTrue();
    assertThat(SQL.matcher("SHOW MASTER STATUS").find()).isTrue();
    assertThat(SQL.matcher("queue %s: select a receiver").find()).isFalse();
    assertThat(SQL.matcher("Show each queue's events by state, from SQL").find()).isFalse();
    Matcher joined =
        LITERAL.matcher(JOIN.matcher("x = \"SELECT a\"\n    + \" FROM t\";").replaceAll(""));
    assertThat(joined.find() && SQL.matcher(joined.group(1)).find()).isTrue();
  }
}
