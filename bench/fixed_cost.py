#!/usr/bin/env python3
"""The resmon command's fixed cost: `resmon -q -- true` against
`/usr/bin/time -o /dev/null true`, alternated, median of N runs each, and the
number of shared objects a plain run maps (issue 20, "Pay for what is used").

usage: bench/fixed_cost.py [--gap SEC] RESMON [N [OTHER_RESMON]]
(OTHER_RESMON: a second build in the same alternation, e.g. the one before a
change; --gap: a pause before each run, so that each is a one-shot run on an
idle kernel as a user's is -- back to back, a run finds kernel state, e.g. a
cgroup move's RCU grace period, that the previous one paid for)
"""
import os
import statistics
import subprocess
import sys
import time

gap = 0.0
if len(sys.argv) > 2 and sys.argv[1] == "--gap":
    gap = float(sys.argv[2])
    del sys.argv[1:3]
resmon = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 40
commands = {"resmon -q -- true": [resmon, "-q", "--", "true"],
            "/usr/bin/time -o /dev/null true": ["/usr/bin/time", "-o", "/dev/null", "true"]}
if len(sys.argv) > 3:
    commands["other resmon -q -- true"] = [sys.argv[3], "-q", "--", "true"]
times = {k: [] for k in commands}
for _ in range(n):
    for name, argv in commands.items():
        if gap:
            time.sleep(gap)
        t = time.perf_counter()
        subprocess.run(argv, check=True)
        times[name].append(time.perf_counter() - t)
medians = {k: statistics.median(v) * 1000 for k, v in times.items()}
for k, v in medians.items():
    print(f"{k:34s} median {v:6.2f} ms")
if len(sys.argv) > 3:
    print(f"other resmon's difference          {medians['other resmon -q -- true'] - medians['/usr/bin/time -o /dev/null true']:+6.2f} ms")
print(f"difference                         {medians['resmon -q -- true'] - medians['/usr/bin/time -o /dev/null true']:+6.2f} ms")
# The objects mapped by a plain run: resmon's own maps while the command runs.
p = subprocess.Popen([resmon, "-q", "--", "sh", "-c", "read x"], stdin=subprocess.PIPE)
time.sleep(0.3)
with open(f"/proc/{p.pid}/maps") as f:
    objects = sorted({l.split()[5] for l in f if len(l.split()) >= 6 and ".so" in l.split()[5]})
p.communicate(b"\n")
print(f"shared objects mapped by a plain run: {len(objects)}")
print("  " + " ".join(os.path.basename(o) for o in objects))
