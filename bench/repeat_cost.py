#!/usr/bin/env python3
"""What `resmon --repeat 10` costs beyond the ten runs (issue 30): per trial,
alternated, the wall time of

  repeat   resmon -q --repeat 10 -o FILE -- COMMAND   (one resmon, ten runs)
  loop     ten times resmon -q -o FILE -- COMMAND     (the shell loop it replaces)
  bare     ten times COMMAND                          (the runs themselves)

and the fixed cost per run, (repeat - bare) / 10 and (loop - bare) / 10, as
medians over N trials; and resmon's own CPU per run (its children's CPU,
from wait4, less the bare runs').

usage: bench/repeat_cost.py RESMON [N [COMMAND...]]   (default: 15 trials of true)
"""
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

resmon = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 15
command = sys.argv[3:] or ["true"]
RUNS = 10


def measure(argvs):
    """Wall seconds and children's CPU seconds of running each argv in turn."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    for argv in argvs:
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "runs.json")
    cases = {
        "repeat": [[resmon, "-q", "--repeat", str(RUNS), "-o", out, "--", *command]],
        "loop": [[resmon, "-q", "-o", out, "--", *command]] * RUNS,
        "bare": [command] * RUNS,
    }
    walls = {k: [] for k in cases}
    cpus = {k: [] for k in cases}
    for _ in range(n):
        for name, argvs in cases.items():
            wall, cpu = measure(argvs)
            walls[name].append(wall)
            cpus[name].append(cpu)

print(f"command: {' '.join(command)}; {n} trials of {RUNS} runs each, alternated; load {os.getloadavg()[0]:.2f}")
print("| case | wall of 10 runs (median) | min..max | fixed cost per run (wall) | resmon CPU per run |")
print("|---|---:|---:|---:|---:|")
bare_wall = statistics.median(walls["bare"])
bare_cpu = statistics.median(cpus["bare"])
for name in cases:
    w = statistics.median(walls[name])
    c = statistics.median(cpus[name])
    extra = f"{(w - bare_wall) / RUNS * 1000:.2f} ms" if name != "bare" else "-"
    own = f"{(c - bare_cpu) / RUNS * 1000:.2f} ms" if name != "bare" else "-"
    print(f"| {name} | {w * 1000:.1f} ms | {min(walls[name]) * 1000:.1f}..{max(walls[name]) * 1000:.1f} ms "
          f"| {extra} | {own} |")
