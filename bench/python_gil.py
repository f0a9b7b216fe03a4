#!/usr/bin/env python3
"""What monitoring costs a pure-Python program: resmon's C sampler (no GIL)
against the seed's way, a Python thread calling psutil (GIL every sample).

A CPU-bound pure-Python loop of fixed work is timed alone and under each
monitor at 10 Hz and 1 kHz.  The conditions run interleaved, round after
round, and each is reported as its time over the same round's unmonitored
time (median over rounds), so load from other programs on the machine
cancels out as far as it can.  CPU per sample: resmon's sampler thread's own
run time (/proc/self/task/TID/schedstat) over its samples; the psutil
thread's time.thread_time_ns() over its samples.

usage: python_gil.py [ROUNDS] [WORK]     (needs the resmon package; psutil
for the peer -- Debian's python3-psutil).  Prints a Markdown table.
"""
import os
import platform
import statistics
import sys
import threading
import time

import resmon

try:
    import psutil
except ImportError:  # the peer needs it; say so rather than measure something else
    sys.exit("python_gil.py: the psutil peer needs psutil (apt-get install python3-psutil)")


def workload(iterations: int) -> tuple[float, float]:
    """Pure Python, CPU-bound, holds the GIL throughout: returns its wall time
    and the calling thread's CPU time.  Wall time shows what waiting for the
    GIL costs (and, on a busy machine, the scheduler's noise); CPU time leaves
    waiting out and shows what a monitor costs the loop while it runs."""
    began, began_cpu = time.perf_counter(), time.thread_time()
    total = 0
    for i in range(iterations):
        total += (i * i) % 7
    return time.perf_counter() - began, time.thread_time() - began_cpu


def thread_runtime_ns(name: str) -> int:
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                if f.read().strip() != name:
                    continue
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                return int(f.read().split()[0])
        except FileNotFoundError:
            continue
    return 0


def under_resmon(interval: float, iterations: int):
    with resmon.ResourceMonitor(sample_interval_sec=interval) as mon:
        elapsed = workload(iterations)
        cpu_ns = thread_runtime_ns("resmon-sampler")
        samples = mon.summary.num_samples
    return elapsed, cpu_ns / max(samples, 1), samples / elapsed[0]


class PsutilMonitor:
    """The seed's monitor: sample, then wait the interval on an Event."""

    def __init__(self, interval: float):
        self.interval = interval
        self.process = psutil.Process()
        self.stop = threading.Event()
        self.samples = 0
        self.cpu_ns = 0
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def loop(self):
        began = time.thread_time_ns()
        while not self.stop.is_set():
            self.process.cpu_percent()
            self.process.memory_info().rss
            time.perf_counter()
            self.samples += 1
            self.stop.wait(timeout=self.interval)
        self.cpu_ns = time.thread_time_ns() - began

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def under_psutil(interval: float, iterations: int):
    with PsutilMonitor(interval) as mon:
        elapsed = workload(iterations)
    return elapsed, mon.cpu_ns / max(mon.samples, 1), mon.samples / elapsed[0]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 3_000_000
    conditions = [("resmon", 0.1, under_resmon), ("psutil thread", 0.1, under_psutil),
                  ("resmon", 0.001, under_resmon), ("psutil thread", 0.001, under_psutil)]
    workload(iterations // 4)  # warm-up
    ratios = {i: [] for i in range(len(conditions))}
    cpu_ratios = {i: [] for i in range(len(conditions))}
    cpu = {i: [] for i in range(len(conditions))}
    rate = {i: [] for i in range(len(conditions))}
    baselines = []
    for r in range(rounds):
        order = list(range(len(conditions)))
        order = order[r % len(order):] + order[:r % len(order)]  # rotate who runs first
        base_before = workload(iterations)
        results = {}
        for i in order:
            name, interval, run = conditions[i]
            results[i] = run(interval, iterations)
        base_after = workload(iterations)
        base = min(base_before[0], base_after[0])
        base_cpu = min(base_before[1], base_after[1])
        baselines.append(base)
        for i, ((elapsed, elapsed_cpu), cpu_ns, hz) in results.items():
            ratios[i].append(elapsed / base)
            cpu_ratios[i].append(elapsed_cpu / base_cpu)
            cpu[i].append(cpu_ns / 1000)
            rate[i].append(hz)
    print(f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}, resmon {resmon.library_version}, psutil {psutil.__version__}; "
          f"load average {os.getloadavg()[0]:.1f}; {rounds} interleaved rounds, unmonitored loop {statistics.median(baselines) * 1000:.0f} ms (median)")
    print()
    print("| monitor | interval | loop wall time / unmonitored (median, min-max) | loop CPU time / unmonitored "
          "| samples/s achieved | monitor CPU per sample |")
    print("|---|---|---|---|---|---|")
    for i, (name, interval, _) in enumerate(conditions):
        ratio = statistics.median(ratios[i])
        print(f"| {name} | {interval * 1000:g} ms | {ratio:.3f} ({min(ratios[i]):.3f}-{max(ratios[i]):.3f}) "
              f"| {statistics.median(cpu_ratios[i]):.3f} | {statistics.median(rate[i]):.0f} | {statistics.median(cpu[i]):.1f} µs |")


if __name__ == "__main__":
    main()
