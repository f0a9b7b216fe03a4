#!/usr/bin/env python3
"""resmon and prmon side by side on workloads whose truth is known.

Each workload is one small C program (its source is below; it is compiled
with cc into a temporary directory) that is the root of the monitored tree.
Before it exits it writes its own truth, read from the kernel rather than
from any monitor: getrusage(RUSAGE_SELF) + getrusage(RUSAGE_CHILDREN) for
CPU (every descendant has been waited for by then), ru_maxrss for the peak,
/proc/self/io for I/O (the kernel folds a reaped child's I/O into its
parent's), and the process and thread counts are fixed by construction.

Every workload runs under each monitor configuration, interleaved (run r of
every workload and configuration, then run r+1), because the machine is
shared; the tables give the median of the runs and its error against the
truth of the same runs.  Each monitor's own CPU cost is its wait4 CPU (which
includes the workload it reaped) minus the workload's own CPU.

usage: bench/prmon_compare.py --resmon build/resmon --prmon PATH [--runs 3]
prints Markdown tables on stdout; --raw FILE keeps every run as JSON.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

WORKLOAD_C = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double clock_sec(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* Burns this thread's CPU until it has used SECONDS more of it. */
static void spin_thread_cpu(double seconds)
{
    double end = clock_sec(CLOCK_THREAD_CPUTIME_ID) + seconds;
    while (clock_sec(CLOCK_THREAD_CPUTIME_ID) < end) {
    }
}

static void sleep_sec(double seconds)
{
    struct timespec t = { (time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9) };
    while (nanosleep(&t, &t) != 0) {
    }
}

static void sleep_until(double monotonic_end)
{
    double left = monotonic_end - clock_sec(CLOCK_MONOTONIC);
    if (left > 0)
        sleep_sec(left);
}

static double tv_sec(struct timeval t) { return t.tv_sec + t.tv_usec / 1e6; }

static long long io_field(const char *text, const char *name)
{
    const char *at = strstr(text, name);
    return at ? atoll(at + strlen(name)) : -1;
}

/* The truth, written once every descendant has been waited for. */
static void write_truth(const char *path)
{
    struct rusage self, children;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    char io[1024] = "";
    int fd = open("/proc/self/io", O_RDONLY);
    if (fd >= 0) {
        ssize_t n = read(fd, io, sizeof io - 1);
        io[n > 0 ? n : 0] = 0;
        close(fd);
    }
    FILE *out = fopen(path, "w");
    if (!out)
        exit(3);
    fprintf(out,
            "{\"cpu_sec\": %.6f, \"user_sec\": %.6f, \"sys_sec\": %.6f,"
            " \"maxrss_self_kb\": %ld, \"maxrss_children_kb\": %ld,"
            " \"rchar\": %lld, \"wchar\": %lld, \"read_bytes\": %lld, \"write_bytes\": %lld}\n",
            tv_sec(self.ru_utime) + tv_sec(self.ru_stime) + tv_sec(children.ru_utime) +
                tv_sec(children.ru_stime),
            tv_sec(self.ru_utime) + tv_sec(children.ru_utime),
            tv_sec(self.ru_stime) + tv_sec(children.ru_stime), self.ru_maxrss,
            children.ru_maxrss, io_field(io, "rchar: "), io_field(io, "wchar: "),
            io_field(io, "read_bytes: "), io_field(io, "write_bytes: "));
    fclose(out);
}

static void *spin_one_second(void *unused)
{
    (void)unused;
    spin_thread_cpu(1.0);
    return NULL;
}

/* A long tree worker: two threads, each burns 0.05 s, then both sleep out 2.5 s. */
static double worker_end;
static void *worker_thread(void *unused)
{
    (void)unused;
    spin_thread_cpu(0.05);
    sleep_until(worker_end);
    return NULL;
}

static void run_shell(const char *script)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", script, (char *)NULL);
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    const char *mode = argv[1];
    if (!strcmp(mode, "cpu") && argc == 3) {
        pthread_t a, b;
        pthread_create(&a, NULL, spin_one_second, NULL);
        pthread_create(&b, NULL, spin_one_second, NULL);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
    } else if (!strcmp(mode, "rss") && argc == 5) {
        size_t bytes = (size_t)atol(argv[3]) << 20;
        volatile char *block = malloc(bytes);
        if (!block)
            return 4;
        for (size_t i = 0; i < bytes; i += 4096)
            block[i] = 1;
        sleep_sec(atof(argv[4]));
        free((void *)block);
    } else if (!strcmp(mode, "io") && argc == 6) {
        const char *file = argv[3];
        long long total = atoll(argv[4]), chunk = 1000000;
        char *buf = malloc(chunk);
        memset(buf, 'x', chunk);
        int fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0)
            return 5;
        for (long long done = 0; done < total; done += chunk)
            if (write(fd, buf, chunk) != chunk)
                return 6;
        fsync(fd);
        /* Out of the page cache, so that the read-back is a real disk read. */
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        lseek(fd, 0, SEEK_SET);
        while (read(fd, buf, chunk) > 0) {
        }
        close(fd);
        unlink(file);
        sleep_sec(atof(argv[5]));
    } else if (!strcmp(mode, "tree") && argc == 4) {
        /* root + sh + 4 workers (2 threads each) + one short child at a time:
           7 processes and 11 threads while a short child lives. */
        char script[4096];
        snprintf(script, sizeof script,
                 "W=%s; $W worker & $W worker & $W worker & $W worker & "
                 "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; "
                 "do $W short; done; wait",
                 argv[3]);
        run_shell(script);
    } else if (!strcmp(mode, "worker")) {
        worker_end = clock_sec(CLOCK_MONOTONIC) + 2.5;
        pthread_t other;
        pthread_create(&other, NULL, worker_thread, NULL);
        worker_thread(NULL);
        pthread_join(other, NULL);
        return 0;
    } else if (!strcmp(mode, "short")) {
        sleep_sec(0.08);
        spin_thread_cpu(0.02);
        return 0;
    } else if (!strcmp(mode, "true") && argc == 4) {
        char script[256];
        snprintf(script, sizeof script,
                 "i=0; while [ $i -lt %d ]; do /bin/true; i=$((i+1)); done", atoi(argv[3]));
        run_shell(script);
    } else {
        return 2;
    }
    write_truth(argv[2]);
    return 0;
}
"""

IO_BYTES = 200 * 1000 * 1000


def workloads(exe, scratch):
    """name -> (argv after the truth path is known, what it is)."""
    io_file = os.path.join(scratch, "io.data")
    return {
        "cpu": (lambda t: [exe, "cpu", t], "2 threads spin 1 CPU-s each"),
        "rss 0.5s": (lambda t: [exe, "rss", t, "500", "0.5"], "touch 500 MiB, hold 0.5 s"),
        "rss 2.5s": (lambda t: [exe, "rss", t, "500", "2.5"], "touch 500 MiB, hold 2.5 s"),
        "io": (lambda t: [exe, "io", t, io_file, str(IO_BYTES), "0"],
               "write+fsync 200 MB, evict, read back"),
        "io +2.5s": (lambda t: [exe, "io", t, io_file, str(IO_BYTES), "2.5"],
                     "the same, then idle 2.5 s"),
        "tree": (lambda t: [exe, "tree", t, exe],
                 "sh: 4 workers (2 threads, 2.5 s) + 20 short children in turn"),
        "500 true": (lambda t: [exe, "true", t, "500"], "sh runs /bin/true 500 times"),
    }


TREE_PROCS, TREE_THREADS = 7, 11


def configs(resmon, prmon):
    """name -> function(output dir) -> argv prefix (the workload follows)."""
    def resmon_at(interval):
        return lambda d: [resmon, "-q", "-i", interval, "-o", os.path.join(d, "r.json"), "--"]

    def prmon_at(interval):
        return lambda d: [prmon, "--interval", interval, "--suppress-hw-info",
                          "--filename", os.path.join(d, "p.txt"),
                          "--json-summary", os.path.join(d, "p.json"),
                          "--log-filename", os.path.join(d, "p.log"), "--"]
    return {
        "resmon -i 0.1": resmon_at("0.1"),
        "resmon -i 1": resmon_at("1"),
        "prmon -i 0": prmon_at("0"),
        "prmon -i 1": prmon_at("1"),
    }


def run_once(argv, out_dir):
    """Runs argv, returns (wall seconds, its wait4 CPU seconds, exit status)."""
    with open(os.path.join(out_dir, "stdout"), "wb") as so, \
            open(os.path.join(out_dir, "stderr"), "wb") as se:
        start = time.monotonic()
        pid = os.posix_spawn(argv[0], argv, os.environ,
                             file_actions=[(os.POSIX_SPAWN_DUP2, so.fileno(), 1),
                                           (os.POSIX_SPAWN_DUP2, se.fileno(), 2)])
        _, status, usage = os.wait4(pid, 0)
        wall = time.monotonic() - start
    return wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)


def read_measures(config, out_dir):
    """What the monitor reports, in the truth's units (s, MiB, bytes, counts)."""
    if config.startswith("resmon"):
        with open(os.path.join(out_dir, "r.json")) as f:
            r = json.load(f)
        return {
            "cpu": r.get("cpu_sec"), "cpu_samples": r.get("cpu_time_sec"),
            "rss": r.get("peak_rss_mb"), "rss_exact": r.get("exact_peak_rss_mb"),
            "pss": r.get("peak_pss_mb"),
            "rchar": r.get("io_rchar"), "wchar": r.get("io_wchar"),
            "read_bytes": r.get("io_read_bytes"), "write_bytes": r.get("io_write_bytes"),
            "nprocs": r.get("peak_nprocs"), "nthreads": r.get("peak_nthreads"),
            "samples": r.get("num_samples"),
        }
    with open(os.path.join(out_dir, "p.json")) as f:
        p = json.load(f).get("Max", {})
    with open(os.path.join(out_dir, "p.txt")) as f:
        samples = max(0, sum(1 for _ in f) - 1)

    def kib_to_mib(v):
        return None if v is None else v / 1024.0
    both = None
    if p.get("utime") is not None and p.get("stime") is not None:
        both = p["utime"] + p["stime"]
    return {
        "cpu": both, "cpu_samples": both,
        "rss": kib_to_mib(p.get("rss")), "rss_exact": None, "pss": kib_to_mib(p.get("pss")),
        "rchar": p.get("rchar"), "wchar": p.get("wchar"),
        "read_bytes": p.get("read_bytes"), "write_bytes": p.get("write_bytes"),
        "nprocs": p.get("nprocs"), "nthreads": p.get("nthreads"), "samples": samples,
    }


def truth_of(workload, t):
    truth = {"cpu": t["cpu_sec"], "rss": t["maxrss_self_kb"] / 1024.0}
    for key in ("rchar", "wchar", "read_bytes", "write_bytes"):
        truth[key] = t[key]
    if workload == "tree":
        truth["nprocs"], truth["nthreads"] = TREE_PROCS, TREE_THREADS
    return truth


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def cell(value, error, fmt):
    if value is None:
        return "n/a"
    text = fmt.format(value)
    if error is not None:
        text += " ({:+.1f} %)".format(error)
    return text


def table(title, header, rows):
    lines = ["#### " + title, "", "| " + " | ".join(header) + " |",
             "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def report(results, config_names):
    """results[(workload, config)] -> list of run dicts (measures, truth, cost)."""
    def med(workload, config, key, where="measures"):
        return median([run[where].get(key) for run in results[(workload, config)]])

    def error_med(workload, config, key, truth_key=None):
        """Median over the runs of each run's error against that run's truth, in %."""
        errors = []
        for run in results[(workload, config)]:
            value = run["measures"].get(key)
            truth = run["truth"].get(truth_key or key)
            if value is not None and truth:
                errors.append(100.0 * (value - truth) / truth)
        return median(errors)

    def shown(workload, config, key, fmt, truth_key=None, scale=1.0):
        value = med(workload, config, key)
        return cell(None if value is None else value * scale,
                    error_med(workload, config, key, truth_key), fmt)

    def truth_med(workload, key):
        return median([run["truth"].get(key) for c in config_names
                       for run in results[(workload, c)]])
    present = {w for w, _ in results}

    def among(*names):
        return [w for w in names if w in present]
    out = []
    resmon_cfgs = [c for c in config_names if c.startswith("resmon")]
    prmon_cfgs = [c for c in config_names if c.startswith("prmon")]

    header = ["workload", "truth (getrusage)", "resmon wait4"]
    header += [c + " samples" for c in resmon_cfgs] + prmon_cfgs
    rows = []
    for w in among("cpu", "tree", "500 true", "io"):
        t = truth_med(w, "cpu")
        row = [w, "{:.3f} s".format(t), shown(w, resmon_cfgs[0], "cpu", "{:.3f}")]
        row += [shown(w, c, "cpu_samples", "{:.3f}", "cpu") for c in resmon_cfgs]
        row += [shown(w, c, "cpu", "{:.0f}") for c in prmon_cfgs]
        rows.append(row)
    out.append(table("CPU seconds of the tree (median, error vs truth)", header, rows))

    header = ["workload", "truth (ru_maxrss)", "resmon exact (wait4)"]
    header += [c + " sampled" for c in resmon_cfgs] + prmon_cfgs
    rows = []
    for w in among("rss 0.5s", "rss 2.5s"):
        t = truth_med(w, "rss")
        row = [w, "{:.1f} MiB".format(t),
               shown(w, resmon_cfgs[0], "rss_exact", "{:.1f}", "rss")]
        row += [shown(w, c, "rss", "{:.1f}") for c in config_names]
        rows.append(row)
    out.append(table("Peak RSS, MiB (median, error vs truth)", header, rows))

    header = ["workload", "counter", "truth (/proc/self/io)"] + config_names
    rows = []
    for w in among("io", "io +2.5s"):
        for key in ("rchar", "wchar", "read_bytes", "write_bytes"):
            t = truth_med(w, key)
            row = [w, key, "{:.1f} MB".format(t / 1e6)]
            row += [shown(w, c, key, "{:.1f}", scale=1e-6) for c in config_names]
            rows.append(row)
    out.append(table("I/O, MB (median, error vs truth)", header, rows))

    header = ["workload", "count", "truth"] + config_names
    rows = []
    for key, t in (("nprocs", TREE_PROCS), ("nthreads", TREE_THREADS)) if "tree" in present else ():
        row = ["tree", "peak " + key, str(t)]
        row += [cell(med("tree", c, key), None if med("tree", c, key) is None
                     else 100.0 * (med("tree", c, key) - t) / t, "{:.0f}")
                for c in config_names]
        rows.append(row)
    out.append(table("Process and thread counts (median, error vs construction)",
                     header, rows))

    header = ["workload", "truth CPU"] + [c + " own CPU / samples" for c in config_names]
    rows = []
    all_workloads = list(dict.fromkeys(w for w, _ in results))
    for w in all_workloads:
        row = [w, "{:.3f} s".format(truth_med(w, "cpu"))]
        for c in config_names:
            cost = median([run["cost"] for run in results[(w, c)]])
            n = med(w, c, "samples")
            row.append("{:.1f} ms / {:.0f}".format(cost * 1000, n))
        rows.append(row)
    out.append(table("Each monitor's own CPU (its wait4 CPU minus the workload's; median)"
                     " and samples taken", header, rows))

    header = ["workload"] + [c + " wall" for c in config_names]
    rows = []
    for w in all_workloads:
        rows.append([w] + ["{:.2f} s".format(median([run["wall"] for run in results[(w, c)]]))
                           for c in config_names])
    out.append(table("Wall time of the monitored run (median)", header, rows))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--resmon", default="build/resmon")
    ap.add_argument("--prmon", default=shutil.which("prmon") or "prmon")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", help="comma-separated workload names")
    ap.add_argument("--raw", help="write every run as JSON to this file")
    args = ap.parse_args()
    resmon, prmon = os.path.abspath(args.resmon), os.path.abspath(args.prmon)

    scratch = tempfile.mkdtemp(prefix="prmon_compare.")
    try:
        exe = os.path.join(scratch, "workload")
        with open(exe + ".c", "w") as f:
            f.write(WORKLOAD_C)
        subprocess.run(["cc", "-O2", "-pthread", "-o", exe, exe + ".c"], check=True)
        works = workloads(exe, scratch)
        if args.only:
            works = {k: v for k, v in works.items() if k in args.only.split(",")}
        cfgs = configs(resmon, prmon)
        names = list(cfgs)
        results = {(w, c): [] for w in works for c in names}
        load_before = os.getloadavg()
        for r in range(args.runs):
            for i, (w, (argv_of, _)) in enumerate(works.items()):
                # Rotate the order of the monitors from one workload and run to the next.
                shift = (r + i) % len(names)
                for c in names[shift:] + names[:shift]:
                    out_dir = tempfile.mkdtemp(dir=scratch)
                    truth_file = os.path.join(out_dir, "truth.json")
                    wall, tool_cpu, status = run_once(cfgs[c](out_dir) + argv_of(truth_file),
                                                      out_dir)
                    if status != 0:
                        with open(os.path.join(out_dir, "stderr")) as f:
                            sys.exit("{} under {} exited {}: {}".format(w, c, status, f.read()))
                    with open(truth_file) as f:
                        t = json.load(f)
                    results[(w, c)].append({
                        "wall": wall, "cost": tool_cpu - t["cpu_sec"],
                        "truth": truth_of(w, t), "measures": read_measures(c, out_dir)})
                    print("run {} {:9s} {:14s} wall {:.2f} s".format(r + 1, w, c, wall),
                          file=sys.stderr)
        load_after = os.getloadavg()
        print(report(results, names))
        print("Load average (1 min) before {:.2f}, after {:.2f}; {} runs of each, interleaved."
              .format(load_before[0], load_after[0], args.runs))
        if args.raw:
            with open(args.raw, "w") as f:
                json.dump({"{} | {}".format(*k): v for k, v in results.items()}, f, indent=1)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
