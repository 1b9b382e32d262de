package dev.sluice.test;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** How the credentials of a SLUICE_TEST_JDBC_URL reach applications that want them apart. */
class DatabaseChooserTest {
  @Test
  void userAndPasswordAreReadFromTheUrl() {
    String url = "jdbc:mysql://db:3306/t_x?sslMode=DISABLED&user=app&password=p%26ss";
    assertThat(DatabaseChooser.param(url, "user")).isEqualTo("app");
    assertThat(DatabaseChooser.param(url, "password")).isEqualTo("p&ss");
    assertThat(DatabaseChooser.param(url, "sslMode")).isEqualTo("DISABLED");
    assertThat(DatabaseChooser.param("jdbc:mysql://db:3306/t_x", "user")).isNull();
    assertThat(DatabaseChooser.param(url, "use")).isNull();
  }

  @Test
  void theDatabaseNeverShowsItsPassword() {
    SluiceDatabase db = new SluiceDatabase("jdbc:mysql://db/x", "root", "s3cret", "embedded");
    assertThat(db.toString()).contains("embedded", "jdbc:mysql://db/x").doesNotContain("s3cret");
    SluiceDatabase inUrl =
        new SluiceDatabase("jdbc:mysql://db/x?user=a&password=s3cret&x=1", null, null, "env");
    assertThat(inUrl.toString()).contains("password=****&x=1").doesNotContain("s3cret");
  }
}
