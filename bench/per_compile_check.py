#!/usr/bin/env python3
"""Each compile's own peak from resmon's per-process records, checked against
an independent measure of the same compile (issue 34).

    python3 bench/per_compile_check.py RESMON [JOBS]

Configures a fresh build of this repository whose compiler runs under
/usr/bin/time (CMAKE_C_COMPILER_LAUNCHER: `time -a -o FILE -f '%M ...' cc
...`), then builds it with `cmake --build -j JOBS` (default 2) under
`resmon --processes-file`.  GNU time's %M is the compiler driver's wait4
ru_maxrss: the largest of its own and its reaped children's (cc1, as)
high-water marks.  For every `time` process in resmon's records the largest
peak below it must be that figure.  Matched in exit order (time appends as
each compile ends; the records carry their end); the sorted lists are
compared too, which no reordering can disturb.  Needs CAP_NET_ADMIN for
taskstats records (else the records are wait4's of what resmon reaped and the
walk's sampled ones, and the check says so).  Prints one line per mismatch
and a summary; exit 1 on any mismatch above 0.1 MiB.
"""
import collections, json, os, subprocess, sys, tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
resmon = os.path.abspath(sys.argv[1])
jobs = sys.argv[2] if len(sys.argv) > 2 else "2"
with tempfile.TemporaryDirectory() as tmp:
    times = os.path.join(tmp, "time.txt")
    records = os.path.join(tmp, "processes.jsonl")
    build = os.path.join(tmp, "build")
    subprocess.run(["cmake", "-S", root, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                    f"-DCMAKE_C_COMPILER_LAUNCHER=/usr/bin/time;-a;-o;{times};-f;%M %C"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([resmon, "-q", "--processes-file", records, "--", "cmake", "--build", build, "-j", jobs],
                   check=True, stdout=subprocess.DEVNULL)
    recs = [json.loads(line) for line in open(records)]
    timed = [(int(line.split(" ", 1)[0]) / 1024, line.split(" ", 1)[1].strip()) for line in open(times)]

by_pid = {r["pid"]: r for r in recs}
children = collections.defaultdict(list)
for r in recs:
    children[r["ppid"]].append(r)


def largest_below(pid):
    return max([max(k["peak_rss_mb"], largest_below(k["pid"])) for k in children[pid]] or [0.0])


wrappers = sorted((r for r in recs if r["comm"] == "time"), key=lambda r: r["end_sec"])
sources = collections.Counter(r["source"] for r in recs)
print(f"{len(recs)} records ({dict(sources)}), {len(wrappers)} timed compiles, {len(timed)} lines from time")
ours = [largest_below(r["pid"]) for r in wrappers]
bad = 0
for mine, (theirs, command) in zip(ours, timed):
    if abs(mine - theirs) > 0.1:
        bad += 1
        print(f"  in exit order: resmon {mine:.2f} MiB, time {theirs:.2f} MiB: {command[:80]}")
worst = max((abs(a - b) for a, b in zip(sorted(ours), sorted(t for t, _ in timed))), default=float("nan"))
print(f"in exit order: {bad} of {min(len(ours), len(timed))} differ by more than 0.1 MiB; "
      f"sorted lists: largest difference {worst:.3f} MiB")
sys.exit(1 if bad or len(ours) != len(timed) or worst > 0.1 else 0)
