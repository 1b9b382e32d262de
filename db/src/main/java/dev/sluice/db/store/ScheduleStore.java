package dev.sluice.db.store;

import dev.sluice.db.schedule.Occurrences;
import dev.sluice.db.schedule.Schedule;
import java.util.List;
import java.util.Map;

/**
 * The shard's recurring events ({@code sluice_schedule}; README, "Recurring events"): operators'
 * commands (create, list, pause, resume, delete; unfenced) and the leader's two writes, {@link
 * #start} and {@link #insert}, both conditioned on its {@link Fence} and a compare-and-set of the
 * schedule's {@code next_ns}, so that an occurrence is inserted exactly once.
 */
public interface ScheduleStore {

  /** Every schedule of the shard, by name. */
  List<Schedule> list();

  /** The schedule of that name, or null. */
  Schedule get(String name);

  /** Now on the shard's clock, ns since the epoch. */
  long nowNs();

  /** Creates a schedule (not started: the leader computes its first occurrence). */
  void create(Schedule s);

  /**
   * Creates the schedule, or updates its definition when it exists. A changed definition restarts
   * it from now; an unchanged one keeps its place, and its paused switch is left as it was.
   *
   * @return true when the row was created or its definition changed
   */
  boolean upsert(Schedule s);

  /** Pauses a schedule: no occurrence is inserted from now on. False when there is none. */
  boolean pause(String name);

  /**
   * Resumes a schedule from now: the occurrences that fell while it was paused are not inserted.
   * False when there is none.
   */
  boolean resume(String name);

  /** Deletes a schedule (occurrences already inserted stay). False when there is none. */
  boolean delete(String name);

  /**
   * Starts a schedule that has not started ({@code next_ns = 0}) at {@code firstNs}: a CAS from 0,
   * fenced. False when it was started (or paused or deleted) meanwhile.
   *
   * @throws FencedOffException when the fence refused it: another manager leads the shard
   */
  boolean start(Schedule s, long firstNs);

  /**
   * Inserts the plan's occurrences as events of the schedule's queue and moves {@code next_ns} from
   * {@code s.nextNs()} to {@code plan.next()}, in one transaction, fenced.
   *
   * @return the new events' ids, in the plan's order; null when the CAS found the schedule changed:
   *     nothing was written
   * @throws FencedOffException when the fence refused it: nothing was written
   */
  List<Long> insert(Schedule s, Map<String, Object> columns, Occurrences plan);
}
