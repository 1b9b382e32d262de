package dev.sluice.examples.demo;

import java.io.PrintWriter;

/**
 * The attacker's part of a secure demo run: once orders flow, runs every attack on its own thread,
 * then checks that the legitimate receivers were unaffected (their streams stayed up and they kept
 * receiving after the attacks).
 */
final class SecureRun {
  /** Deliveries to wait for before attacking, so that events are in flight meanwhile. */
  private static final int DELIVERIES_BEFORE = 200;

  private final Attacker attacker;
  private final Tally tally;
  private final DemoReceivers receivers;
  private final PrintWriter err;
  private final Thread thread;
  private volatile long deliveriesAfter = -1;
  private volatile boolean connectedAfter;
  private volatile boolean idleAfter;
  private final java.util.function.BooleanSupplier idle;
  private boolean keptReceiving;

  private SecureRun(
      Attacker attacker,
      Tally tally,
      DemoReceivers receivers,
      PrintWriter err,
      java.util.function.BooleanSupplier idle) {
    this.attacker = attacker;
    this.idle = idle;
    this.tally = tally;
    this.receivers = receivers;
    this.err = err;
    this.thread = new Thread(this::attack, "demo-attacker");
    thread.setDaemon(true);
  }

  /**
   * @param idle whether nothing is left to deliver (then "kept receiving" cannot be asked)
   */
  static SecureRun start(
      Attacker a,
      Tally tally,
      DemoReceivers receivers,
      PrintWriter err,
      java.util.function.BooleanSupplier idle) {
    SecureRun r = new SecureRun(a, tally, receivers, err, idle);
    r.thread.start();
    return r;
  }

  private void attack() {
    try {
      long deadline = System.nanoTime() + 60_000_000_000L;
      while (tally.deliveries() < DELIVERIES_BEFORE && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      err.println("demo: the attacker starts (" + tally.deliveries() + " deliveries so far)");
      err.flush();
      attacker.run();
      deliveriesAfter = tally.deliveries();
      connectedAfter = receivers.allConnected();
      idleAfter = idle.getAsBoolean();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Waits for the attacks to end (they take seconds) and judges the receivers. */
  void finish() throws InterruptedException {
    thread.join(120_000);
    keptReceiving = deliveriesAfter >= 0 && (tally.deliveries() > deliveriesAfter || idleAfter);
  }

  boolean passed() {
    return attacker.attacks() > 0
        && attacker.denied() == attacker.attacks()
        && connectedAfter
        && keptReceiving;
  }

  String summary() {
    return String.format(" attacks=%d denied=%d", attacker.attacks(), attacker.denied());
  }

  void printProblems(PrintWriter err) {
    if (attacker.denied() != attacker.attacks()) {
      err.printf(
          "demo: PROBLEM: %d of %d attacks were not denied%n",
          attacker.attacks() - attacker.denied(), attacker.attacks());
    }
    if (!connectedAfter) {
      err.println("demo: PROBLEM: a legitimate receiver lost its stream during the attacks");
    }
    if (!keptReceiving) {
      err.println("demo: PROBLEM: the legitimate receivers received nothing after the attacks");
    }
    err.flush();
  }
}
