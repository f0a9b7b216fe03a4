#!/usr/bin/env python3
"""What resmon's pytest plugin costs, and how stable its memory figure is.

1. A suite of 200 trivial tests, run without and with --resmon, alternated,
   5 runs each: the median wall time of the pytest process (and pytest's own
   start with the plugin disabled, -p no:resmon, for its import cost).
2. A test that touches 100 MiB, run 5 times in separate pytest processes:
   rss_growth_mb of each run, their spread.

Run with the interpreter that has the package installed, e.g.
  build-python/venv/bin/python bench/pytest_plugin.py
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

TRIVIAL = """
import pytest

@pytest.mark.parametrize("n", range(200))
def test_trivial(n):
    pass
"""

ALLOCATE = """
def test_allocate_100_mib():
    block = bytearray(100 << 20)
    block[::4096] = b"x" * len(range(0, len(block), 4096))
"""


def pytest_wall(directory, *args):
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=directory,
                   check=True, capture_output=True)
    return time.perf_counter() - start


def main():
    with tempfile.TemporaryDirectory() as directory:
        with open(os.path.join(directory, "test_trivial.py"), "w") as f:
            f.write(TRIVIAL)
        runs = {"disabled (-p no:resmon)": ["-p", "no:resmon"], "plugin loaded, unused": [],
                "--resmon": ["--resmon"]}
        walls = {name: [] for name in runs}
        pytest_wall(directory)  # warm the page cache
        for _ in range(5):
            for name, args in runs.items():
                walls[name].append(pytest_wall(directory, *args))
        print("200 trivial tests, wall time of the pytest process (median of 5 alternated, min..max):")
        for name, values in walls.items():
            print(f"  {name:26s} {statistics.median(values):.3f} s  ({min(values):.3f}..{max(values):.3f})")
        extra = statistics.median(walls["--resmon"]) - statistics.median(walls["plugin loaded, unused"])
        print(f"  --resmon costs {extra:.3f} s, {1000 * extra / 200:.2f} ms per test")

        os.remove(os.path.join(directory, "test_trivial.py"))
        with open(os.path.join(directory, "test_allocate.py"), "w") as f:
            f.write(ALLOCATE)
        growths = []
        for i in range(5):
            report = os.path.join(directory, f"report{i}.json")
            pytest_wall(directory, f"--resmon-json={report}")
            with open(report) as f:
                growths.append(f"{json.load(f)['tests']['test_allocate.py::test_allocate_100_mib']['rss_growth_mb']:.3f}")
        values = [float(g) for g in growths]
        print(f"rss_growth_mb of a test touching 100 MiB, 5 runs: {', '.join(growths)}")
        print(f"  median {statistics.median(values):.3f} MiB, spread {max(values) - min(values):.3f} MiB")


if __name__ == "__main__":
    main()
