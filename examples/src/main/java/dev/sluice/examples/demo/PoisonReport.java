package dev.sluice.examples.demo;

import java.io.PrintWriter;
import java.util.List;
import java.util.Map;

/**
 * The poison demo's verdict: one line per fault (contained or not, and what was seen), the canaries
 * per queue, and the summary line {@code poison: tried=N contained=N stalled_queues=N lost=N
 * early=N}.
 *
 * @param faults each fault's verdict, in the order injected
 * @param stalled queues whose canaries stopped, with what showed it
 * @param watched every queue the canaries watched
 * @param lost poison events neither acked nor dead at the end (bad rows excepted)
 * @param early poison deliveries before their time_next
 * @param problems details of lost and early events
 * @param canaryErrors canary checks that failed (and were retried)
 */
record PoisonReport(
    List<Line> faults,
    Map<String, String> stalled,
    List<Canaries.Watched> watched,
    long lost,
    long early,
    List<String> problems,
    long canaryErrors) {

  /** One fault's verdict, numbered as in the run. */
  record Line(int number, String name, Fault.Verdict verdict) {}

  private static final int MAX_PROBLEMS = 10;

  long contained() {
    return faults.stream().filter(l -> l.verdict().contained()).count();
  }

  /** Every fault contained, no queue stalled, nothing lost or early. */
  boolean passed() {
    return contained() == faults.size() && stalled.isEmpty() && lost == 0 && early == 0;
  }

  /** Per-fault lines and the canaries (stdout, before the summary lines). */
  void printDetails(PrintWriter out) {
    for (Line l : faults) {
      out.printf(
          "poison: fault %d %s: %s: %s%n",
          l.number(),
          l.name(),
          l.verdict().contained() ? "contained" : "NOT contained",
          l.verdict().seen());
    }
    for (Canaries.Watched w : watched) {
      out.printf(
          "poison: canaries %s: %d sent, %d acked, slowest %d ms%s%n",
          w.queue, w.sent, w.acked, w.maxLatencyMs, w.stall == null ? "" : "; STALLED: " + w.stall);
    }
    if (canaryErrors > 0) {
      out.printf("poison: %d canary checks failed and were retried%n", canaryErrors);
    }
    problems.stream().limit(MAX_PROBLEMS).forEach(p -> out.println("poison: " + p));
    if (problems.size() > MAX_PROBLEMS) {
      out.println("poison: ... and " + (problems.size() - MAX_PROBLEMS) + " more");
    }
  }

  String summaryLine() {
    return String.format(
        "poison: tried=%d contained=%d stalled_queues=%d lost=%d early=%d",
        faults.size(), contained(), stalled.size(), lost, early);
  }
}
