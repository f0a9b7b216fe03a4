#!/usr/bin/env python3
"""resmon's own CPU while other processes on the machine start and end.

    python3 bench/foreign_exits.py --resmon A [--resmon B ...] [--runs 3] [--seconds 10]

As root, `resmon -- CMD` listens to taskstats, which reports every exit on
the machine; each record is checked against the run (process_records.c).  A
busy machine -- another build, a CI runner beside the benchmark -- then
costs resmon CPU for exits that are not its command's.  This measures that
cost: the command is one `sleep` (nothing of its own ends), and beside it,
outside resmon, a storm of short processes shaped like a build (a shell
loop that starts `sh -c true` and `sh -c 'sh -c true'`: each exit's parent
is a new or a long-lived process, two or three levels under the loop).

For each binary given (alternated, RUNS times each), resmon -i 0.1 runs the
command for the window; its own CPU is the sum of its threads' schedstat run
time over SECONDS after a 1 s warm-up, and the storm's exits in that window
are counted in the loop's rounds (each ends two to five processes, as the
shell execs its last command or forks it).  Printed: resmon's CPU per
second and per 1000 rounds.
"""
import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from wide_tree import task_cpu_ns  # the sum of a process's threads' schedstat run time

STORM = r"""
n=0
while :; do
  sh -c true
  sh -c 'sh -c true'
  n=$((n + 1))
  [ $((n % 50)) -eq 0 ] && echo $n > "$1.tmp" && mv "$1.tmp" "$1"
done
"""


def storm_count(path):
    try:
        with open(path) as f:
            return int(f.read().strip() or 0)
    except (FileNotFoundError, ValueError):
        return 0


def one_run(resmon, seconds, count_path):
    out = tempfile.NamedTemporaryFile(suffix=".json", delete=False)
    out.close()
    p = subprocess.Popen([resmon, "-i", "0.1", "-q", "-o", out.name, "--", "sleep", str(seconds + 30)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        time.sleep(1.0)
        c1, n1, t1 = task_cpu_ns(p.pid), storm_count(count_path), time.monotonic()
        time.sleep(seconds)
        c2, n2, t2 = task_cpu_ns(p.pid), storm_count(count_path), time.monotonic()
    finally:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait()
        os.unlink(out.name)
    if c1 is None or c2 is None:
        return None
    return (c2 - c1) / 1e6 / (t2 - t1), (n2 - n1) / (t2 - t1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--resmon", action="append", required=True, help="a resmon binary (give two to compare)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10.0)
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("foreign_exits.py: taskstats needs root (CAP_NET_ADMIN): nothing to measure")
    scratch = tempfile.mkdtemp()
    count_path = os.path.join(scratch, "count")
    storm = subprocess.Popen(["sh", "-c", STORM, "storm", count_path], start_new_session=True)
    results = {r: [] for r in args.resmon}
    try:
        time.sleep(1.0)
        for i in range(args.runs):
            order = args.resmon if i % 2 == 0 else list(reversed(args.resmon))
            for r in order:
                got = one_run(r, args.seconds, count_path)
                if got:
                    results[r].append(got)
    finally:
        os.killpg(storm.pid, signal.SIGKILL)
        storm.wait()
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    print("%d runs of %.0f s each, alternated; load average (1 min) after %s; %d cores\n"
          % (args.runs, args.seconds, load, os.cpu_count()))
    print("| resmon | own CPU (ms/s, median; runs) | storm rounds/s | own CPU per 1000 rounds |")
    print("|---|---:|---:|---:|")
    for r in args.resmon:
        rows = results[r]
        if not rows:
            print("| %s | n/a | | |" % r)
            continue
        cpu = [c for c, _ in rows]
        rate = statistics.median(e for _, e in rows)
        print("| %s | %.2f (%s) | %.0f | %.1f ms |" % (r, statistics.median(cpu), ", ".join("%.2f" % c for c in cpu),
                                                        rate, statistics.median(c / e * 1000 for c, e in rows if e)))


if __name__ == "__main__":
    main()
