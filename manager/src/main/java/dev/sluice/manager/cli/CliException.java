package dev.sluice.manager.cli;

/**
 * A command's clear refusal or failure, with the exit code scripts rely on: {@link #BAD_INPUT} (2)
 * when the input was wrong and nothing was changed, {@link #FAILED} (1) when the operation failed.
 */
public final class CliException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public static final int OK = 0;
  public static final int FAILED = 1;
  public static final int BAD_INPUT = 2;

  private final int exitCode;

  public CliException(int exitCode, String message) {
    super(message, null, false, false);
    this.exitCode = exitCode;
  }

  public static CliException badInput(String message) {
    return new CliException(BAD_INPUT, message);
  }

  public static CliException failed(String message) {
    return new CliException(FAILED, message);
  }

  public int exitCode() {
    return exitCode;
  }
}
