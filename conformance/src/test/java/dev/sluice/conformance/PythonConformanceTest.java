package dev.sluice.conformance;

/** The conformance checks against the python client's receiver process. */
class PythonConformanceTest extends ReceiverConformance {
  @Override
  Client client() {
    return Client.PYTHON;
  }
}
