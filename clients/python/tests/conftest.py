"""Makes the package importable from the checkout, generating its protobuf modules first when
they are missing or older than sluice.proto (clients/python/generate decides)."""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_ROOT = os.path.dirname(HERE)

subprocess.run([os.path.join(PACKAGE_ROOT, "generate")], check=True)
if PACKAGE_ROOT not in sys.path:
    sys.path.insert(0, PACKAGE_ROOT)
