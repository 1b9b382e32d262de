package dev.sluice.core.window;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class KeyLedgerTest {
  private static CachedEvent event(long id, boolean heldInTable) {
    return new CachedEvent(id, 1, 0, 0, 0, "t", List.of(), "", Map.of(), 0, "k", null, heldInTable);
  }

  /**
   * A key's turn handed over still held in the table and let go of unfired (no room, changed): no
   * poll would read it again, so its key goes back to KeyTurns at once, which releases it.
   */
  @Test
  void aHeadLetGoOfWhileHeldInTheTableFreesItsKey() {
    List<Object> freed = new ArrayList<>();
    KeyLedger keys = new KeyLedger(id -> true, freed::add);
    CachedEvent head = event(7, true);
    assertThat(keys.admit(head)).isTrue();
    keys.letGo(head);
    assertThat(freed).containsExactly("k");
    assertThat(keys.holds(7)).isFalse();
    assertThat(keys.admit(event(5, false))).as("the key has no head any more").isTrue();
  }

  /** A row the polls can read again keeps its key's place: nothing is freed. */
  @Test
  void aHeadLetGoOfThatThePollsCanReadAgainKeepsItsKey() {
    List<Object> freed = new ArrayList<>();
    KeyLedger keys = new KeyLedger(id -> true, freed::add);
    CachedEvent head = event(7, false);
    assertThat(keys.admit(head)).isTrue();
    keys.letGo(head);
    assertThat(freed).isEmpty();
    assertThat(keys.admit(event(5, false))).as("a lower id while the head is out").isFalse();
  }

  /** Once fired, the table no longer shows it held: a later let-go (a snooze) frees nothing. */
  @Test
  void aFiredEventIsNoLongerHeldInTheTable() {
    CachedEvent e = event(7, true);
    assertThat(e.fired().heldInTable).isFalse();
    assertThat(e.fired().id).isEqualTo(7);
    assertThat(e.retry(2, 10).heldInTable).isFalse();
  }
}
