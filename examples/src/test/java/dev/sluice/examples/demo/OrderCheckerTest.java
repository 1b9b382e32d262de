package dev.sluice.examples.demo;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** What the {@link OrderChecker} counts as a violation, and what not: the demo's verdict. */
class OrderCheckerTest {
  private static final long DUE = 0;
  private final OrderChecker checker = new OrderChecker();

  private static EventKey id(long id) {
    return new EventKey("s0", id);
  }

  @Test
  void oneAtATimeInOrderWithRetriesIsClean() {
    checker.started("k", 1, id(10), "r1", DUE);
    checker.finished("k", 1, false); // nacked
    checker.started("k", 1, id(10), "r2", DUE); // the retry
    checker.finished("k", 1, true);
    checker.started("k", 2, id(12), "r1", DUE);
    checker.finished("k", 2, true);
    checker.started(
        "other", 1, id(11), "r1", DUE); // another key, in flight with nothing of its own

    assertThat(checker.violations()).isZero();
    assertThat(checker.maxInFlightPerKey()).isEqualTo(1);
    assertThat(checker.keys()).isEqualTo(2);
  }

  @Test
  void twoEventsOfAKeyInFlightTogetherIsAViolation() {
    checker.started("k", 1, id(10), "r1", DUE);
    checker.started("k", 2, id(12), "r2", DUE);

    assertThat(checker.violations()).isEqualTo(1);
    assertThat(checker.maxInFlightPerKey()).isEqualTo(2);
    assertThat(checker.examples()).singleElement().asString().contains("k #2", "#1", "in flight");
  }

  @Test
  void theSameEventAgainWhileItsFirstHandlerRunsIsADuplicateNotAViolation() {
    checker.started("k", 1, id(10), "r1", DUE); // its manager is killed meanwhile
    checker.started("k", 1, id(10), "r2", DUE); // the new leader sends it again

    assertThat(checker.violations()).isZero();
    assertThat(checker.maxInFlightPerKey()).isEqualTo(1);
    assertThat(checker.concurrentRedeliveries()).isEqualTo(1);
  }

  @Test
  void anEarlierEventAfterALaterOneWasAckedIsAViolation() {
    checker.started("k", 2, id(12), "r1", DUE);
    checker.finished("k", 2, true);
    checker.started("k", 1, id(10), "r1", DUE);

    assertThat(checker.violations()).isEqualTo(1);
    assertThat(checker.examples()).singleElement().asString().contains("after #2 had been handled");
  }

  @Test
  void anEarlierEventAfterALaterOneWasDeliveredIsAViolation() {
    checker.started("k", 2, id(12), "r1", DUE);
    checker.finished("k", 2, false); // nacked: #2 waits for its retry
    checker.started("k", 1, id(10), "r1", DUE);

    assertThat(checker.violations()).isEqualTo(1);
    assertThat(checker.examples()).singleElement().asString().contains("out of id order");
  }

  @Test
  void anAckedEventDeliveredAgainBeforeTheNextIsADuplicate() {
    checker.started("k", 1, id(10), "r1", DUE);
    checker.finished("k", 1, true); // the ack was lost with its manager
    checker.started("k", 1, id(10), "r2", DUE);
    checker.finished("k", 1, true);
    checker.started("k", 2, id(12), "r2", DUE);

    assertThat(checker.violations()).isZero();
  }
}
