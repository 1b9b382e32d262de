package dev.sluice.db;

/**
 * One way a queue table breaks the convention, with a statement that fixes it.
 *
 * @param column the column (or index) concerned
 * @param problem what is wrong, in words
 * @param fix an SQL statement that repairs it
 */
public record SchemaProblem(String column, String problem, String fix) {
  @Override
  public String toString() {
    return column + ": " + problem + " (fix: " + fix + ")";
  }
}
