#!/usr/bin/env python3
"""The fast end of the command (issue 33, item 5): resmon -i 0.0001 with every
metric group and a samples file, side by side for several resmon binaries.

    python3 bench/fast_end.py [--runs 3] [--seconds 12] [--format csv] LABEL=RESMON ...

Each run is `RESMON -q -i 0.0001 --metrics all -s run.csv -o s.json -- sleep
SECONDS`, the binaries alternated run after run in a rotated order.  Slots
taken: the summary's num_samples over the slots its duration holds
(duration_sec / 0.0001); resmon's own CPU: its wait4 CPU (sleep's is ~0),
per sample and as a share of one CPU.  Medians over the runs.
"""
import json, os, statistics, subprocess, sys, tempfile

args = sys.argv[1:]
runs, seconds, fmt = 3, 12.0, "csv"
while args and args[0].startswith("--"):
    if args[0] == "--runs":
        runs = int(args[1])
    elif args[0] == "--seconds":
        seconds = float(args[1])
    elif args[0] == "--format":
        fmt = args[1]
    args = args[2:]
cases = [a.split("=", 1) for a in args]
INTERVAL = 0.0001


def once(binary, tmp):
    out, samples = os.path.join(tmp, "s.json"), os.path.join(tmp, "run." + fmt)
    p = subprocess.Popen([binary, "-q", "-i", str(INTERVAL), "--metrics", "all", "-s", samples, "-o", out,
                          "--", "sleep", str(seconds)])
    _, status, ru = os.wait4(p.pid, 0)
    with open(out) as f:
        s = json.load(f)
    with open(samples) as f:
        rows = sum(1 for _ in f) - (1 if fmt == "csv" else 0)
    cpu = ru.ru_utime + ru.ru_stime
    n = s["num_samples"]
    return (100.0 * n / (s["duration_sec"] / INTERVAL), cpu / max(n, 1) * 1e6, 100.0 * cpu / s["wall_sec"],
            n, rows)


load0 = os.getloadavg()[0]
res = {label: [] for label, _ in cases}
with tempfile.TemporaryDirectory() as tmp:
    for r in range(runs):
        for k in range(len(cases)):
            label, binary = cases[(k + r) % len(cases)]
            res[label].append(once(binary, tmp))
            print("run %d %-8s slots %.1f %%, %.1f us/sample" % ((r + 1, label) + res[label][-1][:2]),
                  file=sys.stderr)
print("%d runs of %.0f s each, alternated; load average (1 min) %.2f before, %.2f after; %d cores" % (
    runs, seconds, load0, os.getloadavg()[0], os.cpu_count()))
print()
print("| resmon | slots taken (median; runs) | samples | rows in the file | resmon CPU per sample | resmon CPU (% of one CPU) |")
print("|---|---:|---:|---:|---:|---:|")
for label, _ in cases:
    x = res[label]
    med = lambda i: statistics.median(v[i] for v in x)
    print("| %s | %.1f %% (%s) | %d | %d | %.1f us | %.0f %% |" % (
        label, med(0), ", ".join("%.1f" % v[0] for v in x), med(3), med(4), med(1), med(2)))
