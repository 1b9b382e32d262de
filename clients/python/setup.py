"""Runs ./generate before the build collects the package, so that the installed package carries
the protobuf and gRPC modules generated from the repository's sluice.proto (never committed)."""

import os
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py


class GenerateThenBuild(build_py):
    def run(self):
        here = os.path.dirname(os.path.abspath(__file__))
        subprocess.run([os.path.join(here, "generate")], check=True)
        super().run()


setup(cmdclass={"build_py": GenerateThenBuild})
