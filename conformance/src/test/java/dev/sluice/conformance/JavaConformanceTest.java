package dev.sluice.conformance;

/**
 * The conformance checks against the Java SDK's receiver process ({@code
 * conformance/receivers/java}).
 */
class JavaConformanceTest extends ReceiverConformance {
  @Override
  Client client() {
    return Client.JAVA;
  }
}
