package dev.sluice.spring;

import io.grpc.Status;

/**
 * A {@link SluiceAdmin} call the manager refused or could not answer: the message names the call,
 * the queue, the shard and the ids it concerned, and the manager's status and reason.
 */
public class SluiceAdminException extends RuntimeException {
  private final Status.Code code;

  SluiceAdminException(String call, Status status, Throwable cause) {
    super(
        call
            + ": "
            + status.getCode()
            + (status.getDescription() == null ? "" : ": " + status.getDescription()),
        cause);
    this.code = status.getCode();
  }

  /**
   * The manager's gRPC status: PERMISSION_DENIED (no grant), NOT_FOUND, INVALID_ARGUMENT,
   * FAILED_PRECONDITION, UNAVAILABLE (no manager answered)...
   */
  public Status.Code code() {
    return code;
  }
}
