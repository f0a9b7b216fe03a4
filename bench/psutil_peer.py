#!/usr/bin/env python3
"""The peer resmon is measured against: a psutil monitor that samples the way
the seed's ResourceMonitor does -- a thread that reads cpu_percent() and
memory_info().rss, then sleeps the interval -- and reports its own cost.

usage: psutil_peer.py INTERVAL_SEC DURATION_SEC   (prints one JSON object)
"""
import json
import statistics
import sys
import threading
import time

import psutil


def main():
    interval = float(sys.argv[1])
    duration = float(sys.argv[2])
    proc = psutil.Process()
    proc.cpu_percent(None)
    stop = threading.Event()
    stamps, work_ns = [], []
    thread_cpu = {}

    def loop():
        begin_cpu = time.thread_time_ns()
        while not stop.is_set():
            t0 = time.thread_time_ns()
            stamp = time.perf_counter()
            proc.cpu_percent(None)
            proc.memory_info().rss
            work_ns.append(time.thread_time_ns() - t0)
            stamps.append(stamp)
            time.sleep(interval)  # the seed's loop: sleep the interval after the work
        thread_cpu["ns"] = time.thread_time_ns() - begin_cpu

    t = threading.Thread(target=loop)
    t.start()
    time.sleep(duration)
    stop.set()
    t.join()
    gaps = [b - a for a, b in zip(stamps, stamps[1:])]
    excess = sorted(g - interval for g in gaps)
    n = len(stamps)
    print(json.dumps({
        "samples": n,
        "rate_hz": (n - 1) / (stamps[-1] - stamps[0]) if n > 1 else 0.0,
        "work_us": statistics.median(work_ns) / 1e3,
        "thread_cpu_us": thread_cpu["ns"] / n / 1e3,
        "gap_excess_median_us": statistics.median(excess) * 1e6,
        "gap_excess_p99_us": excess[int(0.99 * (len(excess) - 1))] * 1e6,
    }))


if __name__ == "__main__":
    main()
