package dev.sluice.manager.admin;

import dev.sluice.manager.security.Action;

/** The principal lacks the grant an admin action needs; the message names the action and queue. */
public final class AdminDenied extends RuntimeException {
  private final Action action;
  private final String queue;

  public AdminDenied(String principal, Action action, String queue) {
    super(
        "principal "
            + principal
            + " may not "
            + action.configName()
            + " on queue '"
            + queue
            + "' (needs the "
            + action.configName()
            + " or admin grant)");
    this.action = action;
    this.queue = queue;
  }

  public Action action() {
    return action;
  }

  public String queue() {
    return queue;
  }
}
