"""Build hook: put the benchmark suites and certified instance sets into the wheel.

They live in ``benchmarks/`` (the design's layout), outside the packages, so the
plain build would leave them out and an installed ``cubebench run --suite smoke``
would find nothing.  ``cube_env.shipped`` looks for the copy made here first.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

DATA = {"suites": "*.json", "instances": "*.jsonl"}


class BuildPyWithBenchmarkData(build_py):
    """``build_py`` that also copies ``benchmarks/<kind>`` to ``cube_env/shipped/<kind>``."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return  # an editable install reads benchmarks/ in place
        for kind, pattern in DATA.items():
            target = Path(self.build_lib) / "cube_env" / "shipped" / kind
            target.mkdir(parents=True, exist_ok=True)
            for source in sorted((Path("benchmarks") / kind).glob(pattern)):
                shutil.copyfile(source, target / source.name)


setup(cmdclass={"build_py": BuildPyWithBenchmarkData})
