"""A Python GPU profiler: what it returns, how slow it is and when it is
dropped never break the monitor or the interpreter."""

import gc
import math
import threading
import time
import weakref

import pytest

from helpers import SAFETY_SEC, run_python
from resmon import ResourceMonitor


class Profiler:
    """Returns fixed readings; each method can be replaced per test."""

    def get_utilization(self):
        return 40.0

    def get_memory_usage(self):
        return {"gpu_memory_used_mb": 1000.0, "gpu_memory_total_mb": 8000.0}

    def get_clock_info(self):
        return {"gpu_clock_mhz": 1500.0, "mem_clock_mhz": 900.0}

    def get_power_info(self):
        return {"power_draw_w": 70.0, "power_limit_w": 300.0}


class Scalar:
    """A NumPy/JAX-like scalar: not a float, but has __float__."""

    def __init__(self, value):
        self.value = value

    def __float__(self):
        return self.value


def has_gpu_reading(sample):
    return any(v is not None for v in (sample.gpu_util, sample.gpu_mem_mb, sample.gpu_clock_mhz, sample.gpu_power_w))


def sampled(profiler, seconds=0.15, until=lambda samples: any(has_gpu_reading(s) for s in samples)):
    """Samples for `seconds`, and on until `until(samples)` holds (at most 60 s
    more): a busy machine can delay the GPU thread's readings past a short
    window, and a reading may be missing from a sample, never wrong."""
    with ResourceMonitor(sample_interval_sec=0.01, gpu_profiler=profiler) as mon:
        time.sleep(seconds)
        deadline = time.monotonic() + SAFETY_SEC
        while not until(mon.samples) and time.monotonic() < deadline:
            time.sleep(0.05)
    return mon.samples


def raise_error():
    raise ValueError("no GPU today")


BAD_UTILIZATION = [float("nan"), -1.0, float("inf"), "50", None, True, 10 ** 400, [50.0], raise_error]


@pytest.mark.parametrize("bad", BAD_UTILIZATION, ids=repr)
def test_bad_utilization_is_none_and_the_rest_arrives(bad):
    profiler = Profiler()
    profiler.get_utilization = bad if callable(bad) else (lambda: bad)
    samples = sampled(profiler)
    assert samples and all(s.gpu_util is None for s in samples)
    assert all(s.rss_mb > 0 for s in samples)
    assert any(s.gpu_mem_mb == 1000.0 and s.gpu_clock_mhz == 1500.0 and s.gpu_power_w == 70.0 for s in samples)


BAD_MEMORY = [123.0, {}, {"gpu_memory_used_mb": "1000"}, {"gpu_memory_used_mb": float("nan")},
              {"gpu_memory_used_mb": -5.0}, ["gpu_memory_used_mb"], "gpu_memory_used_mb", None]


@pytest.mark.parametrize("bad", BAD_MEMORY, ids=repr)
def test_bad_memory_is_none_and_the_rest_arrives(bad):
    profiler = Profiler()
    profiler.get_memory_usage = lambda: bad
    samples = sampled(profiler)
    assert samples and all(s.gpu_mem_mb is None for s in samples)
    assert any(s.gpu_util == 40.0 for s in samples)


def test_numbers_of_any_real_type_are_read():
    profiler = Profiler()
    profiler.get_utilization = lambda: 55  # an int
    profiler.get_power_info = lambda: {"power_draw_w": Scalar(80.5)}  # no limit: still a draw
    profiler.get_clock_info = lambda: {"gpu_clock_mhz": Scalar(1200.0), "mem_clock_mhz": "fast"}
    samples = sampled(profiler)
    assert any(s.gpu_util == 55.0 and s.gpu_power_w == 80.5 and s.gpu_clock_mhz == 1200.0 for s in samples)


def test_failures_come_and_go_per_sample():
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) % 2:
            raise RuntimeError("every other call fails")
        return 30.0

    profiler = Profiler()
    profiler.get_utilization = flaky
    samples = sampled(profiler, 0.3, until=lambda samples: any(s.gpu_util == 30.0 for s in samples)
                      and any(s.gpu_util is None and has_gpu_reading(s) for s in samples[1:]))
    assert any(s.gpu_util == 30.0 for s in samples)
    assert any(s.gpu_util is None for s in samples[1:])
    assert len(calls) >= 4  # the monitor kept calling after failures


def test_a_slow_profiler_never_delays_cpu_samples():
    # The profiler's call hangs until the test lets it go (or 30 s): samples
    # that go on arriving meanwhile were not waiting for it (counted, not
    # timed: a busy machine may hold any thread off for long).
    entered, release = threading.Event(), threading.Event()

    def hanging_utilization():
        entered.set()
        release.wait(30)
        return 10.0

    profiler = Profiler()
    profiler.get_utilization = hanging_utilization
    with ResourceMonitor(sample_interval_sec=0.01, gpu_profiler=profiler) as mon:
        assert entered.wait(60)
        before = mon.summary.num_samples
        deadline = time.monotonic() + SAFETY_SEC
        while mon.summary.num_samples < before + 20 and time.monotonic() < deadline:
            time.sleep(0.01)
        hung = not release.is_set()
        taken = mon.summary.num_samples - before
        release.set()
    assert hung and taken >= 20, taken


def test_the_monitor_holds_its_profiler():
    profiler = Profiler()
    gone = threading.Event()
    ref = weakref.ref(profiler, lambda _: gone.set())
    mon = ResourceMonitor(sample_interval_sec=0.01, gpu_profiler=profiler)
    del profiler
    gc.collect()
    assert ref() is not None
    with mon:
        time.sleep(0.05)
    assert any(s.gpu_util == 40.0 for s in mon.samples)
    del mon
    assert gone.wait(SAFETY_SEC)


class SlowProfiler(Profiler):
    """get_utilization blocks until the test lets it return."""

    def __init__(self):
        self.entered = threading.Event()
        self.leave = threading.Event()

    def get_utilization(self):
        self.entered.set()
        self.leave.wait(SAFETY_SEC)
        return 1.0


@pytest.mark.parametrize("attempt", range(20))
def test_drop_during_a_slow_python_gpu_call(attempt):
    profiler = SlowProfiler()
    entered, leave = profiler.entered, profiler.leave
    released = threading.Event()
    ref = weakref.ref(profiler, lambda _: released.set())
    mon = ResourceMonitor(sample_interval_sec=0.002, gpu_profiler=profiler)
    del profiler
    mon.__enter__()
    assert entered.wait(SAFETY_SEC)
    began = time.monotonic()
    del mon  # while the call is in flight, without __exit__
    gc.collect()
    dropped_in = time.monotonic() - began
    # free waits at most 200 ms for the call (plus the stop's wait), not for
    # the call, which returns only at leave.set() below: any bound pins that,
    # and 10 s is one that load arriving mid-run does not reach (2 s could).
    assert dropped_in < 10.0
    assert not released.is_set() and ref() is not None  # the call in flight still owns it
    leave.set()
    assert released.wait(SAFETY_SEC)  # released once the call returned, on the GPU thread


@pytest.mark.parametrize("drop_first", [False, True])
def test_interpreter_exit_during_a_slow_python_gpu_call(drop_first):
    code = f"""
import sys, threading, time
import resmon

entered = threading.Event()

class Slow:
    def get_utilization(self):
        entered.set()
        time.sleep(1.0)
        return 1.0
    def get_memory_usage(self): return {{"gpu_memory_used_mb": 1.0}}
    def get_clock_info(self): return {{}}
    def get_power_info(self): return {{}}

mon = resmon.ResourceMonitor(sample_interval_sec=0.002, gpu_profiler=Slow())
mon.__enter__()
assert entered.wait({SAFETY_SEC})
if {drop_first}:
    del mon
print("exiting", flush=True)
sys.exit(0)
"""
    for _ in range(3):
        done = run_python(code, timeout=SAFETY_SEC)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "exiting\n"
        assert "Fatal" not in done.stderr


def test_gpu_readings_summarise():
    with ResourceMonitor(sample_interval_sec=0.01, gpu_profiler=Profiler()) as mon:
        time.sleep(0.1)
        deadline = time.monotonic() + SAFETY_SEC  # until two samples in a row have power (a busy machine)
        while time.monotonic() < deadline and not any(
                a.gpu_power_w is not None and b.gpu_power_w is not None for a, b in zip(mon.samples, mon.samples[1:])):
            time.sleep(0.05)
    s = mon.summary
    assert s.mean_gpu_util == 40.0 and s.peak_gpu_mem_mb == 1000.0
    assert s.mean_gpu_clock_mhz == 1500.0 and s.mean_gpu_power_w == 70.0
    assert s.gpu_energy_source == "integrated"
    # Integrated over the intervals whose both ends had a power reading.
    samples = mon.samples
    powered = sum(b.timestamp - a.timestamp for a, b in zip(samples, samples[1:])
                  if a.gpu_power_w is not None and b.gpu_power_w is not None)
    assert powered > 0
    assert math.isclose(s.gpu_energy_j, 70.0 * powered, rel_tol=1e-6)
