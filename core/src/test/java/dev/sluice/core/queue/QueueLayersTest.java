package dev.sluice.core.queue;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * The packages of one queue depend on each other downwards only: the top ({@code core.queue},
 * {@link QueueManager}) wires the parts and no part reaches up to it; the poller's thread ({@code
 * poll}) and the writers' ({@code write}) post to the dispatcher's ({@code dispatch}), which knows
 * them only through its ports; the poller asks {@code ordering} which rows wait; all of them share
 * {@code context}, which knows none of them. A class that needs a part above it sits in the wrong
 * package, or wants a port (an interface the lower part owns) instead of the class.
 */
@AnalyzeClasses(
    packages = "dev.sluice.core.queue",
    importOptions = ImportOption.DoNotIncludeTests.class)
class QueueLayersTest {
  @ArchTest
  static final ArchRule theTopWiresAndNoPartReachesUp =
      layeredArchitecture()
          .consideringOnlyDependenciesInLayers()
          .layer("top")
          .definedBy("dev.sluice.core.queue")
          .layer("poll")
          .definedBy("dev.sluice.core.queue.poll..")
          .layer("write")
          .definedBy("dev.sluice.core.queue.write..")
          .layer("dispatch")
          .definedBy("dev.sluice.core.queue.dispatch..")
          .layer("ordering")
          .definedBy("dev.sluice.core.queue.ordering..")
          .layer("context")
          .definedBy("dev.sluice.core.queue.context..")
          .whereLayer("top")
          .mayNotBeAccessedByAnyLayer()
          .whereLayer("poll")
          .mayOnlyBeAccessedByLayers("top")
          .whereLayer("write")
          .mayOnlyBeAccessedByLayers("top")
          .whereLayer("dispatch")
          .mayOnlyBeAccessedByLayers("top", "poll", "write")
          .whereLayer("ordering")
          .mayOnlyBeAccessedByLayers("top", "poll")
          .whereLayer("context")
          .mayOnlyBeAccessedByLayers("top", "poll", "write", "dispatch", "ordering");

  /** {@code PackageCyclesTest} sees the queue's packages as one; here each is its own. */
  @ArchTest
  static final ArchRule noCyclesAmongTheParts =
      slices().matching("dev.sluice.core.queue.(*)..").should().beFreeOfCycles();
}
