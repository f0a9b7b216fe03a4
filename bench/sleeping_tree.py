#!/usr/bin/env python3
"""resmon's own cost on a flat tree of N sleeping processes (issue 33).

    bench/sleeping_tree.py [--strace] [--duration S] NAME=RESMON ... -- N...

For each N, a shell starts N `sleep` children (a flat tree that never runs)
and each resmon given watches it with `--pid ROOT -i 0.1`, once with
`--metrics none` and once with the default groups, for S and for 3 S
seconds.  resmon's own CPU (user + system, from wait4's rusage) is taken
apart into what a sample costs once the tree is known (the difference of
the two runs over the difference of their samples: the first walk and the
opening of every process's files cancel) and that start (the short run's
CPU less its samples at the steady cost).  Dividing one run's CPU by its
samples, as this script did until stop 46, charged the start to the
samples: at N = 1000 and 3 s, 4.3 ms a sample where one costs ~1.4 ms.
With --strace, `strace -c -f` of each
`--metrics none` run is divided by samples and N: system calls per process
per sample (the whole run's, start-up included: a small overestimate).
"""
import json, os, resource, signal, subprocess, sys, tempfile, time

def tree(n):
    root = subprocess.Popen(["sh", "-c", f"i=0; while [ $i -lt {n} ]; do sleep 100000 & i=$((i+1)); done; echo ready; wait"],
                            stdout=subprocess.PIPE, start_new_session=True)
    assert root.stdout.readline().strip() == b"ready"
    return root

def run(binary, pid, metrics, duration, strace):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "s.json")
        cmd = [binary, "-q", "--pid", str(pid), "-i", "0.1", "--duration", str(duration), "--metrics", metrics, "-o", out]
        if strace:
            cmd = ["strace", "-c", "-f", "-o", os.path.join(d, "trace")] + cmd
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        samples = json.load(open(out))["num_samples"]
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        calls = None
        if strace:
            for line in open(os.path.join(d, "trace")):
                if line.strip().endswith("total"):
                    calls = int(line.split()[3])
        return samples, cpu, calls

def main(argv):
    strace = "--strace" in argv
    duration = 5.0
    if "--duration" in argv:
        duration = float(argv[argv.index("--duration") + 1])
    sep = argv.index("--")
    bins = [a.split("=", 1) for a in argv[1:sep] if "=" in a]
    sizes = [int(a) for a in argv[sep + 1:]]
    print("| N | groups | " + " | ".join(f"{name} ms/sample (start, ms)" for name, _ in bins) +
          ("" if not strace else " | " + " | ".join(f"{name} syscalls/process/sample" for name, _ in bins)) + " |")
    print("|---|---|" + "---|" * (len(bins) * (2 if strace else 1)))
    for n in sizes:
        root = tree(n)
        try:
            for metrics in ("none", "all"):
                cells, calls = [], []
                for name, binary in bins:
                    s1, cpu1, _ = run(binary, root.pid, metrics, duration, False)
                    s2, cpu2, _ = run(binary, root.pid, metrics, 3 * duration, False)
                    steady = (cpu2 - cpu1) / max(s2 - s1, 1)
                    cells.append(f"{steady * 1000:.3f} (start {max(cpu1 - s1 * steady, 0) * 1000:.0f})")
                    if strace and metrics == "none": # two lengths: start and end cancel
                        s1, _, c1 = run(binary, root.pid, metrics, duration, True)
                        s2, _, c2 = run(binary, root.pid, metrics, 3 * duration, True)
                        calls.append(f"{(c2 - c1) / max(s2 - s1, 1) / n:.2f}")
                line = f"| {n} | {metrics} | " + " | ".join(cells)
                if strace:
                    line += " | " + " | ".join(calls or ["-"] * len(bins))
                print(line + " |", flush=True)
        finally:
            os.killpg(root.pid, signal.SIGKILL)
            root.wait()

if __name__ == "__main__":
    main(sys.argv)
