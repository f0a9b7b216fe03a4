#!/usr/bin/env python3
"""resmon's own CPU per sample on wide trees (issue 33, item 4).

    python3 bench/wide_tree.py [--resmon build/resmon] [--prmon PATH]
                               [--sizes 10,100,1000,10000] [--samples 40] [--warmup 1]
                               [--build-files 240] [--build-jobs 32]

The tree is one small C program (compiled with cc into a temporary
directory; no Python interpreter per process, so 10 000 fit in a few hundred
MiB) that forks N children and waits: the children sleep in pause(), or, in
the "busy" trees, one in ten wakes every 50 ms and burns ~20 us of CPU (so it
ran since every sample, while the machine stays usable).  Sizes the machine
cannot hold (pid_max, RLIMIT_NPROC, memory) are skipped, saying why.

Cases, each on a fresh tree, one after the other in a rotated order:
  pid        resmon --pid ROOT -i 0.1 (default groups)
  pid none   resmon --pid ROOT -i 0.1 --metrics none
  cgroup     resmon -i 0.1 -- TREE     (the tree in resmon's own cgroup: the
             default as root; "n/a" where resmon cannot make one)
  no-cgroup  resmon -i 0.1 --no-cgroup -- TREE
  prmon      prmon --pid ROOT --interval 1 (when a prmon binary is given by
             --prmon, $PRMON or PATH), its cost scaled to one sample

resmon's own CPU is read from the kernel while it runs: the sum of its
threads' /proc/PID/task/TID/schedstat run time (nanoseconds; the same CPU
/proc/PID/stat counts in clock ticks) at the first reading after a 1 s
warm-up and at the last before the window of SAMPLES intervals closes,
divided by the samples taken in that window (the window's length over the
interval, times the share of the slots the summary says were taken:
num_samples over its duration; shown as "kept" when below 95 %).

Then a real wide build: BUILD_FILES small generated C files compiled by
`make -jBUILD_JOBS` (well above the cores) under resmon (default, then
--no-cgroup, alternated, 3 runs): resmon's own CPU (wait4 CPU minus the
build's, as bench/build_cost.py) as a share of the build's.
"""
import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

TREE_C = r"""
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void busy_loop(void)
{
    struct timespec nap = {0, 50 * 1000 * 1000};
    for (;;) {
        double end = now(CLOCK_THREAD_CPUTIME_ID) + 20e-6;
        while (now(CLOCK_THREAD_CPUTIME_ID) < end) {
        }
        nanosleep(&nap, NULL);
    }
}

static void stop(int sig) { (void)sig; }

/* tree N BUSY_EVERY SECONDS: forks N children (every BUSY_EVERY-th busy,
 * 0: none), prints "ready" on stdout, then waits SECONDS (0: until
 * SIGTERM), ends the children and reaps them. */
int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    long n = atol(argv[1]), every = atol(argv[2]);
    double seconds = atof(argv[3]);
    signal(SIGTERM, stop);
    pid_t *kids = calloc((size_t)n + 1, sizeof *kids);
    long made = 0;
    for (long i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0)
            break;
        if (pid == 0) {
            signal(SIGTERM, SIG_DFL);
            if (every > 0 && i % every == 0)
                busy_loop();
            for (;;)
                pause();
        }
        kids[made++] = pid;
    }
    printf("ready %ld\n", made);
    fflush(stdout);
    if (seconds > 0) {
        struct timespec t = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
        nanosleep(&t, NULL);
    } else {
        pause();
    }
    for (long i = 0; i < made; i++)
        kill(kids[i], SIGKILL);
    while (wait(NULL) > 0) {
    }
    return made == n ? 0 : 3;
}
"""

INTERVAL = 0.1
WARMUP = 1.0


def task_cpu_ns(pid):
    """The sum of PID's threads' run time (schedstat), ns; None once it is gone."""
    total = 0
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                    total += int(f.read().split()[0])
            except (FileNotFoundError, ProcessLookupError):
                pass
    except (FileNotFoundError, ProcessLookupError):
        return None
    return total


def watch(pid, window, poll=0.02):
    """CPU ns of PID over [start + WARMUP, start + WARMUP + window]: (ns, seconds)."""
    start = time.monotonic()
    time.sleep(WARMUP)
    t1, c1 = time.monotonic(), task_cpu_ns(pid)
    t2, c2 = t1, c1
    while time.monotonic() - t1 < window:
        time.sleep(poll)
        c = task_cpu_ns(pid)
        if c is None:
            break
        t2, c2 = time.monotonic(), c
    if c1 is None or c2 is None or t2 <= t1:
        return None
    return c2 - c1, t2 - t1


def start_tree(exe, n, every, seconds):
    p = subprocess.Popen([exe, str(n), str(every), str(seconds)], stdout=subprocess.PIPE,
                         start_new_session=True)
    line = p.stdout.readline().decode()
    if not line.startswith("ready %d" % n):
        end_tree(p)
        raise RuntimeError("the tree of %d made only: %r" % (n, line))
    return p


def end_tree(p):
    try:
        os.killpg(p.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    p.wait()


def summary_of(path):
    try:
        with open(path) as f:
            s = json.load(f)
        d = s.get("duration_sec") or 0
        return s.get("num_samples", 0), d
    except (OSError, ValueError):
        return 0, 0


def kept_share(path):
    samples, duration = summary_of(path)
    return None if duration <= 0 else min(1.0, (samples - 1) * INTERVAL / duration)


def run_pid_case(resmon, exe, n, every, samples, extra, out):
    tree = start_tree(exe, n, every, 0)
    seconds = WARMUP + samples * INTERVAL + 1.0
    try:
        argv = [resmon, "-q", "-i", str(INTERVAL), "--pid", str(tree.pid), "--duration",
                "%.1f" % seconds, "-o", out] + extra
        r = subprocess.Popen(argv, stderr=subprocess.PIPE)
        got = watch(r.pid, samples * INTERVAL)
        err = r.communicate()[1]
        if r.returncode != 0:
            raise RuntimeError("%s exited %d: %s" % (argv, r.returncode, err.decode().strip()))
    finally:
        end_tree(tree)
    return got, kept_share(out)


def run_command_case(resmon, exe, n, every, samples, extra, out):
    seconds = WARMUP + samples * INTERVAL + 2.0  # the fork of the tree comes first
    argv = [resmon, "-q", "-i", str(INTERVAL), "-o", out] + extra + ["--", exe, str(n), str(every),
                                                                      "%.1f" % seconds]
    r = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    r.stdout.readline()  # "ready": the tree is whole
    got = watch(r.pid, samples * INTERVAL)
    _, err = r.communicate()
    if r.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (argv, r.returncode, err.decode().strip()))
    return got, kept_share(out)


def run_prmon_case(prmon, exe, n, every, samples, out_dir):
    tree = start_tree(exe, n, every, 0)
    # prmon samples once a second: a window of at least 4 of its samples.
    window = max(4.0, samples * INTERVAL)
    try:
        argv = [prmon, "--pid", str(tree.pid), "--interval", "1", "--suppress-hw-info",
                "--filename", os.path.join(out_dir, "p.txt"), "--json-summary",
                os.path.join(out_dir, "p.json"), "--log-filename", os.path.join(out_dir, "p.log")]
        r = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        got = watch(r.pid, window)
    finally:
        end_tree(tree)
    r.wait()
    if got is None:
        return None, None
    # per second = per prmon sample
    return (got[0], got[1]), None


def capacity(n):
    """None when N processes fit here, else why not."""
    pid_max = int(open("/proc/sys/kernel/pid_max").read())
    nproc = resource.getrlimit(resource.RLIMIT_NPROC)[0]
    threads = sum(1 for d in os.listdir("/proc") if d.isdigit())
    if n + threads + 200 > pid_max:
        return "pid_max %d" % pid_max
    if nproc != resource.RLIM_INFINITY and os.getuid() != 0 and n + threads + 200 > nproc:
        return "ulimit -u %d" % nproc
    avail_kb = 0
    for line in open("/proc/meminfo"):
        if line.startswith("MemAvailable:"):
            avail_kb = int(line.split()[1])
    if n * 200 > avail_kb:  # ~200 KiB a forked child (page tables, stack, COW)
        return "MemAvailable %d MiB" % (avail_kb // 1024)
    return None


def fmt_ms(got, per, kept=None):
    """CPU per sample: the window's CPU over the samples taken in it (the
    slots it held times the share the summary says were taken)."""
    if got is None:
        return "n/a"
    ns, seconds = got
    return "%.2f ms" % (ns / 1e6 / (seconds / per * (kept or 1.0)))


def tree_table(args, exe, scratch):
    cases = [("pid", "pid", []),
             ("pid none", "pid", ["--metrics", "none"]),
             ("cgroup", "cmd", []),
             ("no-cgroup", "cmd", ["--no-cgroup"])]
    if args.prmon:
        cases.append(("prmon", "prmon", None))
    rows = []
    for busy in (False, True):
        for i, n in enumerate(args.sizes):
            why = capacity(n)
            label = "%d%s" % (n, " (1/10 busy)" if busy else "")
            if why:
                rows.append([label] + ["skipped: " + why] * (len(cases) + (1 if args.prmon else 0)))
                continue
            every = 10 if busy else 0
            cells = {}
            shift = i % len(cases)
            for name, kind, extra in cases[shift:] + cases[:shift]:
                out = os.path.join(scratch, "r.json")
                try:
                    if kind == "pid":
                        got, kept = run_pid_case(args.resmon, exe, n, every, args.samples, extra, out)
                        cells[name] = (got, kept, INTERVAL)
                    elif kind == "cmd":
                        got, kept = run_command_case(args.resmon, exe, n, every, args.samples, extra, out)
                        cells[name] = (got, kept, INTERVAL)
                    else:
                        got, _ = run_prmon_case(args.prmon, exe, n, every, args.samples, scratch)
                        cells[name] = (got, None, 1.0)
                except RuntimeError as e:
                    print("%s %s: %s" % (label, name, e), file=sys.stderr)
                    cells[name] = (None, None, INTERVAL)
                print("%s %-9s %s" % (label, name, fmt_ms(cells[name][0], cells[name][2])),
                      file=sys.stderr)
            row = [label]
            for name, _, _ in cases:
                got, kept, per = cells[name]
                text = fmt_ms(got, per, kept)
                if kept is not None and kept < 0.95:
                    text += " (kept %.0f %%)" % (100 * kept)
                row.append(text)
            if args.prmon and cells["prmon"][0] and cells["pid"][0]:
                p = cells["prmon"][0][0] / cells["prmon"][0][1]
                r = cells["pid"][0][0] / cells["pid"][0][1] / (1 / INTERVAL) / (cells["pid"][1] or 1.0)
                row.append("%.0fx" % (p / r) if r > 0 else "n/a")
            rows.append(row)
    header = ["N", "resmon --pid (default groups)", "--pid --metrics none",
              "as its command, own cgroup", "as its command, --no-cgroup"]
    if args.prmon:
        header += ["prmon --pid (1 s, one sample)", "prmon / resmon --pid"]
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def make_build_tree(where, files):
    os.makedirs(where, exist_ok=True)
    objs = []
    for i in range(files):
        with open(os.path.join(where, "f%d.c" % i), "w") as f:
            f.write("#include <stdio.h>\n#include <string.h>\n#include <stdlib.h>\n")
            for k in range(20):
                f.write("int f%d_%d(int x) { char b[64]; snprintf(b, sizeof b, \"%%d\", x * %d);"
                        " return (int)strlen(b) + atoi(b) %% 7; }\n" % (i, k, k + 1))
        objs.append("f%d.o" % i)
    with open(os.path.join(where, "Makefile"), "w") as f:
        f.write("all: %s\n%%.o: %%.c\n\t$(CC) -O2 -c $< -o $@\nclean:\n\trm -f *.o\n" % " ".join(objs))


def build_table(args, scratch):
    where = os.path.join(scratch, "build")
    make_build_tree(where, args.build_files)
    cases = [("own cgroup", []), ("--no-cgroup", ["--no-cgroup"]), ("--metrics none", ["--metrics", "none"])]
    results = {c[0]: [] for c in cases}
    for r in range(3):
        for k in range(len(cases)):
            name, extra = cases[(k + r) % len(cases)]
            subprocess.run(["make", "-s", "-C", where, "clean"], check=True)
            out = os.path.join(scratch, "b.json")
            argv = [args.resmon, "-q", "-o", out] + extra + ["--", "make", "-s", "-C", where,
                                                          "-j%d" % args.build_jobs]
            t0 = time.monotonic()
            p = subprocess.Popen(argv)
            _, status, ru = os.wait4(p.pid, 0)
            wall = time.monotonic() - t0
            with open(out) as f:
                s = json.load(f)
            own = ru.ru_utime + ru.ru_stime - s["cpu_sec"]
            results[name].append((own, s["cpu_sec"], wall, s.get("num_samples", 0), s.get("peak_nprocs")))
            print("build %-14s own %.3f s of %.2f s" % (name, own, s["cpu_sec"]), file=sys.stderr)
    lines = ["| case | resmon own CPU (median) | of the build's CPU (runs) | build CPU | wall | samples | peak processes | own CPU per sample |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, _ in cases:
        x = results[name]
        med = lambda i: statistics.median(v[i] for v in x)
        lines.append("| %s | %.1f ms | %.2f %% (%s) | %.1f s | %.1f s | %d | %s | %.0f us |" % (
            name, med(0) * 1e3, statistics.median(v[0] / v[1] * 100 for v in x),
            ", ".join("%.2f" % (v[0] / v[1] * 100) for v in x), med(1), med(2), med(3),
            "%.0f" % med(4) if all(v[4] is not None for v in x) else "n/a",
            statistics.median(v[0] / max(v[3], 1) for v in x) * 1e6))
    return "\n".join(lines)


def main():
    global WARMUP
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--resmon", default="build/resmon")
    ap.add_argument("--prmon", default=os.environ.get("PRMON") or shutil.which("prmon"))
    ap.add_argument("--sizes", default="10,100,1000,10000")
    ap.add_argument("--samples", type=int, default=40)
    ap.add_argument("--warmup", type=float, default=WARMUP,
                    help="seconds before the window: the start's readings (every process young, then "
                         "ageing into the slower refreshes) end within ~20 s in a wide tree")
    ap.add_argument("--build-files", type=int, default=240)
    ap.add_argument("--build-jobs", type=int, default=32)
    ap.add_argument("--no-build", action="store_true")
    args = ap.parse_args()
    WARMUP = args.warmup
    args.resmon = os.path.abspath(args.resmon)
    args.sizes = [int(v) for v in args.sizes.split(",")]
    if args.prmon and not os.access(args.prmon, os.X_OK):
        print("no prmon at %s: its columns are left out" % args.prmon, file=sys.stderr)
        args.prmon = None
    scratch = tempfile.mkdtemp(prefix="wide_tree.")
    try:
        exe = os.path.join(scratch, "tree")
        with open(exe + ".c", "w") as f:
            f.write(TREE_C)
        subprocess.run(["cc", "-O2", "-o", exe, exe + ".c"], check=True)
        load0 = os.getloadavg()[0]
        print("#### resmon's own CPU per sample at -i 0.1 on a flat tree of N sleeping processes"
              " (schedstat over %d samples after a %.0f s warm-up)\n" % (args.samples, WARMUP))
        print(tree_table(args, exe, scratch))
        if not args.prmon:
            print("\n(no prmon binary: give --prmon PATH or $PRMON)")
        if not args.no_build:
            print("\n#### A wide build: %d generated C files, `make -j%d`, under resmon -i 0.1"
                  " (3 runs each, alternated)\n" % (args.build_files, args.build_jobs))
            print(build_table(args, scratch))
        print("\nLoad average (1 min) before %.2f, after %.2f; %d cores." % (
            load0, os.getloadavg()[0], os.cpu_count()))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
