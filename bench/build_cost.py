#!/usr/bin/env python3
"""resmon's own CPU on a -j2 build (issue 20, item 2).

    python3 bench/build_cost.py [--runs N] LABEL=RESMON[,GROUPS] ...

The workload compiles every src/*.c twice, two compilers at a time
(`ls src/*.c src/*.c | xargs -P2 -n1 cc -O2 -c ... -o /dev/null`).  Each
LABEL runs it under that resmon binary at its default interval (0.1 s) with
--metrics GROUPS (none given: the default groups), all of them alternated
run after run, in a rotated order.  resmon's own CPU is its wait4 CPU (which
includes the workload it reaped) minus the workload's (the summary's
cpu_sec: the command's wait4); the table gives medians over the runs, of that,
of it over the workload's CPU and of it per sample (a loaded machine stretches
the build, and so the samples taken), and the 1-minute load before and after.
"""
import json, os, shlex, statistics, subprocess, sys, tempfile, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
args = sys.argv[1:]
runs = 3
if args and args[0] == "--runs":
    runs, args = int(args[1]), args[2:]
cases = []
for a in args:
    label, spec = a.split("=", 1)
    binary, _, groups = spec.partition(",")
    cases.append((label, binary, groups.replace("+", ",")))
incs = "-I{0}/include -I{0}/src -I{0}/common".format(shlex.quote(root))
job = ("cd {root} && ls src/*.c src/*.c | xargs -P2 -n1 sh -c "
       "'cc -O2 -std=c11 -D_GNU_SOURCE {incs} -c \"$0\" -o /dev/null 2>/dev/null || true'").format(
           root=shlex.quote(root), incs=incs)


def once(binary, groups, out):
    cmd = [binary, "-q", "-o", out] + (["--metrics", groups] if groups else []) + ["--", "sh", "-c", job]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    with open(out) as f:
        s = json.load(f)
    work = s["cpu_sec"]
    return ru.ru_utime + ru.ru_stime - work, work, wall, s.get("num_samples", 0)


load0 = os.getloadavg()[0]
rows = {c[0]: [] for c in cases}
with tempfile.TemporaryDirectory() as tmp:
    for r in range(runs):
        for k in range(len(cases)):
            label, binary, groups = cases[(k + r) % len(cases)]
            rows[label].append(once(binary, groups, os.path.join(tmp, "r.json")))
load1 = os.getloadavg()[0]
print("%d runs of each, alternated; load average (1 min) %.2f before, %.2f after" % (runs, load0, load1))
print()
print("| case | resmon own CPU (median) | of the command's CPU (median) | runs | command CPU | wall | samples | own CPU per sample (median) |")
print("|---|---:|---:|---|---:|---:|---:|---:|")
for label, _, _ in cases:
    x = rows[label]
    print("| %s | %.1f ms | %.2f %% | %s | %.2f s | %.2f s | %d | %.0f us |" % (
        label, statistics.median(v[0] for v in x) * 1e3, statistics.median(v[0] / v[1] * 100 for v in x),
        ", ".join("%.2f" % (v[0] / v[1] * 100) for v in x), statistics.median(v[1] for v in x),
        statistics.median(v[2] for v in x), statistics.median(v[3] for v in x),
        statistics.median(v[0] / max(v[3], 1) for v in x) * 1e6))
