package dev.sluice.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import dev.sluice.receiver.SluiceReceiver;
import java.sql.Connection;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;

/**
 * Wrong uses of {@link SluiceTest}, run through JUnit's engine test kit: each fails with a message
 * saying what is wrong and what would be right.
 */
class SluiceTestMisuseTest {
  private static final String RUN_CASES = "dev.sluice.test.misuse-cases";

  @Test
  void unsupportedParametersNameTheTypeAndListTheSupportedOnes() {
    EngineExecutionResults results = run(BadParameters.class);

    Map<String, String> failures = new TreeMap<>();
    results.testEvents().failed().stream()
        .forEach(e -> failures.put(e.getTestDescriptor().getDisplayName(), message(e)));
    assertThat(results.testEvents().succeeded().count()).isEqualTo(1);
    assertThat(failures)
        .containsOnlyKeys(
            "connection(Connection)",
            "sdkReceiver(SluiceReceiver)",
            "recordingReceiverWithoutQueue(RecordingReceiver)",
            "blankQueue(RecordingReceiver)",
            "receiveOnAString(String)");
    assertThat(failures.values())
        .allSatisfy(
            m ->
                assertThat(m)
                    .contains(
                        "@SluiceTest injects: SluiceExtension, SluiceDatabase, javax.sql.DataSource,"
                            + " SluiceServer, and RecordingReceiver annotated @Receive(\"queue\")"));
    assertThat(failures.get("connection(Connection)"))
        .startsWith("sluice-test gives no Connection")
        .contains("ask for a javax.sql.DataSource")
        .contains("parameter [java.sql.Connection");
    assertThat(failures.get("sdkReceiver(SluiceReceiver)"))
        .startsWith("sluice-test cannot give a dev.sluice.receiver.SluiceReceiver");
    assertThat(failures.get("recordingReceiverWithoutQueue(RecordingReceiver)"))
        .contains("needs @Receive(\"queue\")");
    assertThat(failures.get("blankQueue(RecordingReceiver)")).contains("needs a queue name");
    assertThat(failures.get("receiveOnAString(String)"))
        .contains("@Receive goes on a RecordingReceiver parameter, not on java.lang.String");
  }

  @Test
  void badDurationIsRefusedBeforeAnythingStarts() {
    EngineExecutionResults results = run(BadTimeout.class);

    assertThat(results.containerEvents().failed().stream().map(SluiceTestMisuseTest::message))
        .singleElement()
        .asString()
        .contains("@SluiceTest(timeout)")
        .contains("'30 seconds' is not a duration");
    assertThat(results.testEvents().started().count()).isZero();
  }

  @Test
  void annotationAndRegisteredExtensionTogetherAreRefused() {
    EngineExecutionResults results = run(BothWays.class);

    assertThat(results.containerEvents().failed().stream().map(SluiceTestMisuseTest::message))
        .singleElement()
        .asString()
        .contains("has both @SluiceTest and a @RegisterExtension SluiceExtension field (sluice)");
  }

  private static EngineExecutionResults run(Class<?> cases) {
    return EngineTestKit.engine("junit-jupiter")
        .configurationParameter(RUN_CASES, "true")
        .selectors(selectClass(cases))
        .execute();
  }

  private static String message(Event e) {
    return e.getPayload(TestExecutionResult.class)
        .flatMap(TestExecutionResult::getThrowable)
        .map(Throwable::getMessage)
        .orElse("");
  }

  /** The cases run only when this test launches them, not when Surefire finds them. */
  static final class OnlyFromMisuseTest implements ExecutionCondition {
    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
      return context.getConfigurationParameter(RUN_CASES).isPresent()
          ? ConditionEvaluationResult.enabled("launched by SluiceTestMisuseTest")
          : ConditionEvaluationResult.disabled("a case of SluiceTestMisuseTest");
    }
  }

  @ExtendWith(OnlyFromMisuseTest.class)
  @SluiceTest("classpath:db/testapp")
  static class BadParameters {
    @Test
    void fine(SluiceDatabase database) {
      assertThat(database.url()).startsWith("jdbc:");
    }

    @Test
    void connection(Connection c) {}

    @Test
    void sdkReceiver(SluiceReceiver r) {}

    @Test
    void recordingReceiverWithoutQueue(RecordingReceiver r) {}

    @Test
    void blankQueue(@Receive(" ") RecordingReceiver r) {}

    @Test
    void receiveOnAString(@Receive("order_events") String queue) {}
  }

  @ExtendWith(OnlyFromMisuseTest.class)
  @SluiceTest(timeout = "30 seconds")
  static class BadTimeout {
    @Test
    void never() {}
  }

  @ExtendWith(OnlyFromMisuseTest.class)
  @SluiceTest
  static class BothWays {
    @RegisterExtension static SluiceExtension sluice = SluiceExtension.builder().build();

    @Test
    void never() {}
  }
}
