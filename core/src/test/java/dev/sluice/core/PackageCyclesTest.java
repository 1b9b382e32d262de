package dev.sluice.core;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * Core's feature packages (loop, config, outlet, window, fairness, groups, schedule, binlog, shard,
 * queue) depend on each other one way only: a cycle means a class sits in the wrong feature (the
 * poller's per-tenant reading in fairness, say). Move it to the package whose thread owns it. The
 * queue's own packages are one slice here; {@code QueueLayersTest} keeps them in order.
 */
@AnalyzeClasses(packages = "dev.sluice.core", importOptions = ImportOption.DoNotIncludeTests.class)
class PackageCyclesTest {
  @ArchTest
  static final ArchRule noPackageCycles =
      slices().matching("dev.sluice.core.(*)..").should().beFreeOfCycles();
}
