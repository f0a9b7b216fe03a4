#!/usr/bin/env python3
"""resmon's own CPU per sample on a flat tree of N sleeping processes run as
its command, in the leaf cgroup resmon makes (issue 33, item 1).

    bench/leaf_tree.py [--window S] [--warmup S] [--metrics GROUPS] NAME=RESMON ... -- N...

For each N, each resmon given (alternated) runs `resmon -q -i 0.1 -- sh -c
'start N sleep children; say ready; wait'` (the default groups, or
--metrics GROUPS; as root the
command gets its own leaf).  Once the tree is ready and after a 1 s
warm-up (--warmup, default 1 s; the start's readings -- every process
young, then ageing out -- end within ~15 s), resmon's own CPU is read from its threads' schedstat (run time,
ns) at the start and end of a window of S seconds (default 3) and divided by
the window's samples (S / 0.1; the summary's skipped slots are reported).
The sampler thread (resmon-sampler) and the walker (resmon-walk) are shown apart from the whole process
(whose other threads are the walker, resmon-walk, which walks a wide tree's
processes off the sampler since issue 33's walker change, and the command's:
the taskstats listener reads every exit on the machine, the marks socket).  Then the sleepers are killed by pid and resmon ends with its command.
Prints a Markdown table and the summary's walk_interval_sec.
"""
import json, os, signal, subprocess, sys, tempfile, time

INTERVAL = 0.1


def threads_cpu_ns(pid):
    """(the sampler thread's run time, the walker's, all threads'), ns."""
    sampler = walker = total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                ns = int(f.read().split()[0])
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                comm = f.read().strip()
            sampler += ns if comm == "resmon-sampler" else 0
            walker += ns if comm == "resmon-walk" else 0
            total += ns
        except (FileNotFoundError, ProcessLookupError):
            pass
    return sampler, walker, total


def children_of(pid):
    kids = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/children") as f:
            kids += [int(x) for x in f.read().split()]
    return kids


def run(binary, n, window, metrics, warmup):
    with tempfile.TemporaryDirectory() as d:
        fifo, out = os.path.join(d, "ready"), os.path.join(d, "s.json")
        os.mkfifo(fifo)
        script = f"i=0; while [ $i -lt {n} ]; do sleep 100000 & i=$((i+1)); done; echo $$ > {fifo}; wait"
        proc = subprocess.Popen([binary, "-q", "-i", str(INTERVAL), "-o", out] + (["--metrics", metrics] if metrics else []) +
                                ["--", "sh", "-c", script])
        with open(fifo) as f:
            sh = int(f.read())
        time.sleep(warmup)
        before = threads_cpu_ns(proc.pid)
        time.sleep(window)
        after = threads_cpu_ns(proc.pid)
        for kid in children_of(sh):
            os.kill(kid, signal.SIGKILL)
        proc.wait(timeout=120)
        summary = json.load(open(out))
        samples = window / INTERVAL
        return [(a - b) / samples for a, b in zip(after, before)], summary


def main(argv):
    window = float(argv[argv.index("--window") + 1]) if "--window" in argv else 3.0
    metrics = argv[argv.index("--metrics") + 1] if "--metrics" in argv else None
    warmup = float(argv[argv.index("--warmup") + 1]) if "--warmup" in argv else 1.0
    sep = argv.index("--")
    bins = [a.split("=", 1) for a in argv[1:sep] if "=" in a]
    sizes = [int(a) for a in argv[sep + 1:]]
    print(f"load average (1 min) before: {os.getloadavg()[0]:.2f}")
    print("| N | " + " | ".join(f"{name}: sampler / walker / whole resmon, ms/sample" for name, _ in bins) +
          " | walk_interval_sec |")
    print("|---|" + "---|" * (len(bins) + 1))
    for n in sizes:
        cells, walks = [], []
        for name, binary in bins:
            cost, summary = run(binary, n, window, metrics, warmup)
            cells.append(f"{cost[0] / 1e6:.3f} / {cost[1] / 1e6:.3f} / {cost[2] / 1e6:.3f}" +
                         (f" (skipped {summary['skipped_slots']})" if summary["skipped_slots"] else ""))
            walks.append(f"{summary['walk_interval_sec']:.2f}" if "walk_interval_sec" in summary else "-")
        print(f"| {n} | " + " | ".join(cells) + f" | {' / '.join(walks)} |", flush=True)
    print(f"load average (1 min) after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main(sys.argv)
