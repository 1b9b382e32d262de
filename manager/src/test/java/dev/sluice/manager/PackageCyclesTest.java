package dev.sluice.manager;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * The manager's packages depend on each other one way only: a package cycle (admin and grpc
 * reaching into each other, say) means a type lives in the wrong package. Move it to the package
 * that owns it, or to a small shared one.
 */
@AnalyzeClasses(
    packages = "dev.sluice.manager",
    importOptions = ImportOption.DoNotIncludeTests.class)
class PackageCyclesTest {
  @ArchTest
  static final ArchRule noPackageCycles =
      slices().matching("dev.sluice.manager.(*)..").should().beFreeOfCycles();
}
