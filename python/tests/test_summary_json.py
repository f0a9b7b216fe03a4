"""ResourceSummary.to_dict() under json.dumps is byte for byte what the C
library's resmon_summary_to_json writes for the same summary, and from_dict
reads it back."""

import json
import math
import random
import struct
import time
from dataclasses import fields

import pytest

from resmon import ResourceMonitor, ResourceSummary, _resmon
from resmon._records import CGROUP_KEYS, METRIC_GROUP_KEYS

SEED_KEYS = ["peak_rss_mb", "mean_rss_mb", "peak_gpu_mem_mb", "mean_gpu_util", "memory_growth_mb",
             "num_samples", "duration_sec"]


def c_json(summary: ResourceSummary) -> str:
    return _resmon.summary_to_json({f.name: getattr(summary, f.name) for f in fields(summary)})


def python_json(summary: ResourceSummary) -> str:
    return json.dumps(summary.to_dict())


def random_double(rng: random.Random) -> float:
    """Any finite non-negative double, every exponent equally likely."""
    while True:
        value = abs(struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0])
        if math.isfinite(value):
            return value


# Where printf's %g and Python's repr() choose differently between fixed and
# exponent notation, whole numbers, and numbers needing 16 or 17 digits.
EDGE_VALUES = [0.0, 1.0, 0.1, 1 / 3, 2 / 3, 0.30000000000000004, 1e-4, 1e-5, 1.5e-7, 123.456, 4096.0,
               1e14, 999999999999999.0, 1e15, 1.5e15, 1234567890123456.7, 9999999999999998.0, 1e16,
               12345678901234568.0, 1e17, 1.7976931348623157e308, 5e-324, 2.2250738585072014e-308]


@pytest.mark.parametrize("value", EDGE_VALUES)
def test_numbers_match_json_dumps(value: float) -> None:
    summary = ResourceSummary(peak_rss_mb=value, mean_rss_mb=value, peak_gpu_mem_mb=value, mean_gpu_util=None,
                              memory_growth_mb=-value, num_samples=3, duration_sec=value,
                              mean_gpu_clock_mhz=value, hwm_rss_mb=value, hwm_scope="lifetime")
    assert python_json(summary) == c_json(summary)


def test_random_summaries_match() -> None:
    rng = random.Random(12)
    for _ in range(3000):
        maybe = lambda: random_double(rng) if rng.random() < 0.6 else None  # noqa: E731
        summary = ResourceSummary(
            peak_rss_mb=random_double(rng), mean_rss_mb=random_double(rng), peak_gpu_mem_mb=maybe(),
            mean_gpu_util=maybe(), memory_growth_mb=random_double(rng) * rng.choice((1, -1)),
            num_samples=rng.randrange(0, 2**63), duration_sec=random_double(rng),
            mean_gpu_clock_mhz=maybe(), mean_gpu_power_w=maybe(), mean_cpu_percent=maybe(),
            peak_cpu_percent=maybe(), cpu_time_sec=maybe(), skipped_slots=rng.choice((None, 0, 7)),
            hwm_rss_mb=maybe(),
            hwm_scope=rng.choice(("window", "lifetime")), gpu_energy_j=maybe(),
            gpu_energy_source=rng.choice(("counter", "integrated")), cpu_energy_j=maybe(),
            peak_gpu_proc_mem_mb=maybe(), **{key: maybe() for key in METRIC_GROUP_KEYS})
        assert python_json(summary) == c_json(summary), summary


def test_metric_group_keys_are_the_c_librarys() -> None:
    """The C library's own key list (src/metric_fields.c), in its order."""
    with ResourceMonitor(sample_interval_sec=0.01, metrics="all") as mon:
        pass
    c_keys = list(mon._monitor.summary())  # the binding's dict follows the C list
    assert tuple(c_keys[c_keys.index("peak_gpu_proc_mem_mb") + 1:]) == METRIC_GROUP_KEYS + (
        "cgroup_version", "cgroup_error") + CGROUP_KEYS  # then the cgroup's figures


def test_a_window_with_every_metric_group_matches(tmp_path) -> None:
    written = 3 * 65536
    with ResourceMonitor(sample_interval_sec=0.01, metrics="all") as mon:
        with open(tmp_path / "out", "wb") as f:
            f.write(b"x" * written)
    summary = mon.summary
    for key in METRIC_GROUP_KEYS:
        assert getattr(summary, key) is not None, key
    assert summary.io_wchar >= written  # the kernel's wchar counts this write
    assert summary.peak_nprocs == 1 and summary.peak_nthreads >= 2  # this thread and the sampler
    assert summary.peak_pss_mb > 0 and summary.peak_vmem_mb >= summary.peak_rss_mb
    text = python_json(summary)
    assert text == c_json(summary)
    assert ResourceSummary.from_dict(json.loads(text)).to_dict() == summary.to_dict()


def test_a_real_window_matches() -> None:
    class Gpu:
        def get_utilization(self):
            return 37.5

        def get_memory_usage(self):
            return {"gpu_memory_used_mb": 1000.0 + time.perf_counter() % 1}

        def get_clock_info(self):
            return {"gpu_clock_mhz": 1410.0, "mem_clock_mhz": 1215.0}

        def get_power_info(self):
            return {"power_draw_w": 65.25, "power_limit_w": 300.0}

    with ResourceMonitor(sample_interval_sec=0.01, gpu_profiler=Gpu()) as mon:
        sum(i * i for i in range(300_000))
    summary = mon.summary
    assert summary.num_samples >= 2
    assert summary.gpu_energy_j is not None and summary.gpu_energy_source == "integrated"
    assert python_json(summary) == c_json(summary)
    assert list(summary.to_dict())[:7] == SEED_KEYS


def test_the_bindings_summary_dict_has_every_json_key_in_its_order() -> None:
    """The binding's dict (python/src/module.c) and the C library's JSON are
    both made from the figure and metric lists: with every figure known, the
    JSON writes every key, and the dict has each of them, in that order, and
    cgroup_error besides -- a figure left out of the dict fails here."""
    with ResourceMonitor(sample_interval_sec=0.01) as mon:
        sum(i * i for i in range(10_000))
    raw = mon._monitor.summary()
    words = {"hwm_scope": "window", "gpu_energy_source": "counter", "cgroup_version": 2, "cgroup_error": 0}
    known = {key: words.get(key, 2 if isinstance(value, int) else 1.5) for key, value in raw.items()}
    json_keys = list(json.loads(_resmon.summary_to_json(known)))
    assert [key for key in raw if key != "cgroup_error"] == json_keys


def test_seed_keys_first_extras_only_when_known() -> None:
    seed_fields = dict(peak_rss_mb=512.0, mean_rss_mb=400.0, peak_gpu_mem_mb=None, mean_gpu_util=None,
                       memory_growth_mb=10.0, num_samples=50, duration_sec=5.0)
    summary = ResourceSummary(**seed_fields)  # calibrax's constructor call works unchanged
    assert list(summary.to_dict()) == SEED_KEYS
    assert summary.to_dict() == {**seed_fields}
    richer = ResourceSummary(**seed_fields, mean_gpu_power_w=90.0, cpu_energy_j=12.5, mean_cpu_percent=99.0)
    assert list(richer.to_dict()) == SEED_KEYS + ["mean_gpu_power_w", "mean_cpu_percent", "cpu_energy_j"]


def test_every_from_dict_refuses_what_is_not_a_mapping_with_a_type_error() -> None:
    # Attack 56b, B7: PhaseSummary.from_dict("x") was an AttributeError
    # ("'str' object has no attribute 'get'"), ResourceSummary.from_dict(None)
    # a TypeError about iteration, and a string holding every required key
    # passed the key check by substring.  A TypeError naming the method.
    from types import MappingProxyType
    from resmon._records import PhaseSummary
    good = ResourceSummary(peak_rss_mb=1.0, mean_rss_mb=1.0, peak_gpu_mem_mb=None, mean_gpu_util=None,
                           memory_growth_mb=0.0, num_samples=1, duration_sec=0.0).to_dict()
    every_key = " ".join(good)
    for method, name in ((ResourceSummary.from_dict, "ResourceSummary"), (PhaseSummary.from_dict, "PhaseSummary")):
        for bad in ("x", every_key, None, [1, 2], list(good), 5, b"peak_rss_mb", good.items()):
            with pytest.raises(TypeError, match=rf"^{name}\.from_dict: expected a mapping .*got {type(bad).__name__}$"):
                method(bad)
    # A mapping that is not a dict is read.
    assert ResourceSummary.from_dict(MappingProxyType(good)).num_samples == 1
    assert PhaseSummary.from_dict(MappingProxyType({"name": "a", "start_sec": 0.0, **good})).name == "a"


def test_from_dict_round_trip() -> None:
    with ResourceMonitor(sample_interval_sec=0.01) as mon:
        time.sleep(0.05)
    summary = mon.summary
    back = ResourceSummary.from_dict(json.loads(python_json(summary)))
    assert back.to_dict() == summary.to_dict()
    assert back.peak_rss_mb == summary.peak_rss_mb and back.hwm_scope == summary.hwm_scope


def test_from_dict_rejects_missing_and_wrong_types() -> None:
    good = ResourceSummary(peak_rss_mb=1.0, mean_rss_mb=1.0, peak_gpu_mem_mb=None, mean_gpu_util=None,
                           memory_growth_mb=0.0, num_samples=1, duration_sec=0.0).to_dict()
    for key in SEED_KEYS:
        partial = dict(good)
        del partial[key]
        with pytest.raises(ValueError, match=key):
            ResourceSummary.from_dict(partial)
    with pytest.raises(ValueError, match="num_samples"):
        ResourceSummary.from_dict({**good, "num_samples": 1.5})
    with pytest.raises(ValueError, match="peak_rss_mb"):
        ResourceSummary.from_dict({**good, "peak_rss_mb": "big"})
    with pytest.raises(ValueError, match="hwm_scope"):
        ResourceSummary.from_dict({**good, "hwm_rss_mb": 1.0, "hwm_scope": "forever"})
    assert ResourceSummary.from_dict({**good, "unknown_key": 1}).num_samples == 1
    # Review of issue 28: an integer past the largest double was an
    # OverflowError from inside (a phase's start_sec), or was kept and made
    # to_dict() raise it (peak_rss_mb): a ValueError naming the key.
    with pytest.raises(ValueError, match="peak_rss_mb"):
        ResourceSummary.from_dict({**good, "peak_rss_mb": 10**400})
    phase = {"name": "a", "start_sec": 10**400, **good}
    with pytest.raises(ValueError, match="start_sec"):
        ResourceSummary.from_dict({**good, "phases": [phase]})
    with pytest.raises(ValueError, match="duration_sec"):
        ResourceSummary.from_dict({**good, "phases": [{**phase, "start_sec": 0, "duration_sec": -10**400}]})
