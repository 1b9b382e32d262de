"""The generated protobuf and gRPC modules of the receiver API (``sluice.v1``).

They are generated from the repository's ``sluice.proto`` by ``clients/python/generate`` (run by
the package build, the tests and the conformance receiver) and never committed.
"""

try:
    from ._generated import sluice_pb2 as pb
    from ._generated import sluice_pb2_grpc as pb_grpc
except ImportError as e:  # pragma: no cover - a checkout that was never generated
    raise ImportError(
        "sluice_client's generated modules are missing: run clients/python/generate "
        "(needs protoc and grpc_python_plugin: apt-get install protobuf-compiler-grpc)"
    ) from e

__all__ = ["pb", "pb_grpc"]
