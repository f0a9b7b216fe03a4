"""The samples carry the metric groups the monitor collected (one field per
entry of the C library's metric list), and the summary folds them as the
list says."""

import math
import os
from dataclasses import fields

from resmon import ResourceMonitor, ResourceSample, ResourceSummary, _resmon
from resmon._records import CGROUP_KEYS, METRIC_GROUP_KEYS, SAMPLE_METRIC_KEYS


def wchar() -> int:
    with open("/proc/self/io") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("wchar:"))


def test_the_records_have_one_field_per_metric_of_the_c_list() -> None:
    metrics = _resmon.metrics()
    assert len(metrics) >= 22
    assert tuple(m["sample_field"] for m in metrics) == SAMPLE_METRIC_KEYS
    assert tuple(m["summary_field"] for m in metrics) == METRIC_GROUP_KEYS
    # Each record's metric fields, then its cgroup figures (not metrics of the list).
    assert [f.name for f in fields(ResourceSample)][8:] == list(SAMPLE_METRIC_KEYS) + ["cgroup_mem_mb"]
    assert [f.name for f in fields(ResourceSummary)][-len(metrics) - len(CGROUP_KEYS):] == list(
        METRIC_GROUP_KEYS + CGROUP_KEYS)
    for m in metrics:
        assert m["fold"] in ("max", "last") and m["unit"] in ("MiB", "bytes", "seconds", "count"), m
        assert m["words"] and m["column"], m
    # Built the calibrax way, a sample still needs only the calibrax fields.
    s = ResourceSample(timestamp=1.0, cpu_percent=0.0, rss_mb=1.0, gpu_util=None, gpu_mem_mb=None)
    assert all(getattr(s, key) is None for key in SAMPLE_METRIC_KEYS)


def test_samples_carry_the_metric_groups_and_the_summary_folds_them(tmp_path) -> None:
    written = 5 * 65536
    with ResourceMonitor(sample_interval_sec=0.01, metrics="all") as mon:
        before = wchar()
        with open(tmp_path / "out", "wb") as f:
            f.write(b"x" * written)
        by_kernel = wchar() - before
    samples, summary = mon.samples, mon.summary
    assert len(samples) >= 2
    last = samples[-1]
    for key in SAMPLE_METRIC_KEYS:
        assert getattr(last, key) is not None, key
    # The kernel counted the write between the first and the last sample.
    assert last.io_wchar >= by_kernel >= written
    assert last.nprocs == 1 and last.nthreads >= 2 and last.unreadable_procs == 0
    assert last.pss_mb > 0 and last.vmem_mb >= last.rss_mb
    assert samples[0].io_wchar == 0  # counters start at the window's first sample
    for m in _resmon.metrics():
        values = [getattr(s, m["sample_field"]) for s in samples if getattr(s, m["sample_field"]) is not None]
        folded = max(values) if m["fold"] == "max" else values[-1]
        assert math.isclose(getattr(summary, m["summary_field"]), folded), m


def test_samples_without_metric_groups_have_none() -> None:
    with ResourceMonitor(sample_interval_sec=0.01) as mon:
        pass
    assert mon.samples
    for s in mon.samples:
        assert all(getattr(s, key) is None for key in SAMPLE_METRIC_KEYS)


def test_open_fds_counts_the_descriptors_of_the_tree() -> None:
    # 100 more descriptors than the process had: the samples' open_fds (the
    # counts group) is within a few of /proc/self/fd's listing (the listing's
    # own directory descriptor, the sampler's kept files), and the summary
    # keeps the peak.
    opened = [os.open("/dev/null", os.O_RDONLY) for _ in range(100)]
    try:
        with ResourceMonitor(sample_interval_sec=0.01, metrics=["counts"]) as mon:
            truth = len(os.listdir("/proc/self/fd"))
    finally:
        for fd in opened:
            os.close(fd)
    last = mon.samples[-1]
    assert truth >= 100
    assert abs(last.open_fds - truth) <= 3, (last.open_fds, truth)
    assert mon.summary.peak_open_fds >= last.open_fds
    assert last.nprocs == 1 and last.io_rchar is None  # only the counts group
