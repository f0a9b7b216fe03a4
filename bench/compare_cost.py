#!/usr/bin/env python3
"""What `resmon compare` costs on pytest reports of growing size (issue 30).

Writes two pytest reports (`pytest --resmon-json` layout: NODEID -> record of
six numeric keys) of about SIZE MB each, then times `resmon compare
--max-increase rss_growth_mb=20% --format FORMAT BASE NEW` under
/usr/bin/time -v: wall time, user + system CPU, maximum RSS.  Each size runs
three times (RUNS in the environment: another count); the median is
printed.

Usage: bench/compare_cost.py RESMON [SIZE_MB...]   (default 1 8 16 24: the
report's JSON is indented, so 24 MB of records is some 30 MB on disk)
Inputs over 32 MiB are refused by compare itself (COMPARE_INPUT_MAX).
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

KEYS = ("rss_growth_mb", "peak_rss_mb", "children_peak_rss_mb", "cpu_time_sec", "wall_sec", "exact_peak_rss_mb")


def report(path, size_mb, grow):
    tests, written, t = {}, 0, 0
    while written < size_mb * 1e6:
        node = f"tests/test_module_{t // 100}.py::test_case_{t}[param-{t % 7}]"
        record = {k: round(10 + (t % 97) * 0.37 + (grow and t % 50 == 0) * 5, 4) for k in KEYS}
        tests[node] = record
        written += len(json.dumps({node: record}))
        t += 1
    with open(path, "w") as f:
        json.dump({"resmon_version": "0.3.0", "machine": {"hostname": "bench"}, "tests": tests}, f, indent=1)
    return t


def measure(resmon, base, new, fmt):
    r = subprocess.run(["/usr/bin/time", "-v", resmon, "compare", "--format", fmt, "--max-increase",
                        "rss_growth_mb=20%", base, new], capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stderr[-500:]
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+(?:\.\d+)?)$", r.stderr, re.M)
    user = float(re.search(r"User time \(seconds\): ([\d.]+)", r.stderr).group(1))
    system = float(re.search(r"System time \(seconds\): ([\d.]+)", r.stderr).group(1))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1))
    return float(wall.group(1) or 0) * 60 + float(wall.group(2)), user + system, rss / 1024, len(r.stdout)


def main():
    resmon = sys.argv[1]
    sizes = [float(a) for a in sys.argv[2:]] or [1, 8, 16, 24]
    print(f"{'report MB':>9} {'tests':>7} {'format':>8} {'wall s':>7} {'CPU s':>6} {'max RSS MiB':>11} {'output KB':>9}")
    with tempfile.TemporaryDirectory() as d:
        for size in sizes:
            base, new = os.path.join(d, "base.json"), os.path.join(d, "new.json")
            tests = report(base, size, False)
            report(new, size, True)
            mb = os.path.getsize(base) / 1e6
            for fmt in ("text", "markdown", "json"):
                runs = [measure(resmon, base, new, fmt) for _ in range(int(os.environ.get("RUNS", "3")))]
                wall, cpu, rss, out = (statistics.median(x) for x in zip(*runs))
                print(f"{mb:9.1f} {tests:7d} {fmt:>8} {wall:7.2f} {cpu:6.2f} {rss:11.0f} {out / 1e3:9.0f}")


if __name__ == "__main__":
    main()
