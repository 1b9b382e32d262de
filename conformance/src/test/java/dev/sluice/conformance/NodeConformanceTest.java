package dev.sluice.conformance;

/** The conformance checks against the node client's receiver process. */
class NodeConformanceTest extends ReceiverConformance {
  @Override
  Client client() {
    return Client.NODE;
  }
}
