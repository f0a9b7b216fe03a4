"""calibrax's tests/profiling/test_resources.py, ported to resmon.

Each case keeps calibrax's name and checks.  The two that looked at
calibrax's private Python sampling thread (``mon._sampling_thread._thread``)
check the same promises on resmon's C sampler thread instead: it runs only
inside ``with``, and, like a daemon thread, it never keeps the interpreter
from exiting.  calibrax's factories (tests/factories.py) are inlined below.
"""

import dataclasses
import time
from unittest.mock import MagicMock

import pytest

from resmon import (
    GPUProfilerProtocol,
    ResourceMonitor,
    ResourceSample,
    ResourceSummary,
)
from helpers import SAFETY_SEC, count_named, count_named_settled, run_python


def make_default_resource_summary(
    *,
    peak_rss_mb: float = 512.0,
    mean_rss_mb: float = 400.0,
    peak_gpu_mem_mb: float | None = None,
    mean_gpu_util: float | None = None,
    memory_growth_mb: float = 10.0,
    num_samples: int = 50,
    duration_sec: float = 5.0,
    mean_gpu_clock_mhz: float | None = None,
    mean_gpu_power_w: float | None = None,
) -> ResourceSummary:
    return ResourceSummary(
        peak_rss_mb=peak_rss_mb,
        mean_rss_mb=mean_rss_mb,
        peak_gpu_mem_mb=peak_gpu_mem_mb,
        mean_gpu_util=mean_gpu_util,
        memory_growth_mb=memory_growth_mb,
        num_samples=num_samples,
        duration_sec=duration_sec,
        mean_gpu_clock_mhz=mean_gpu_clock_mhz,
        mean_gpu_power_w=mean_gpu_power_w,
    )


def sleep_until(seconds: float, condition) -> None:
    """calibrax's fixed sleep, then on until condition() holds (at most 60 s
    more): a busy machine can delay the GPU thread's first reading past a
    short window (a reading may be missing from a sample, never wrong)."""
    time.sleep(seconds)
    deadline = time.monotonic() + SAFETY_SEC
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


def assert_monitor_collects_samples_twice(monitor, *, sleep_seconds: float = 0.15) -> None:
    with monitor:
        time.sleep(sleep_seconds)
    first_count = len(monitor.samples)
    with monitor:
        time.sleep(sleep_seconds)
    second_count = len(monitor.samples)
    assert first_count > 0
    assert second_count > 0


def assert_monitor_thread_lifecycle(monitor) -> None:
    before = count_named("resmon-sampler")
    assert not monitor.running
    with monitor:
        assert monitor.running
        assert count_named("resmon-sampler") == before + 1
    assert not monitor.running
    assert count_named_settled("resmon-sampler", before) == before


class TestResourceSample:
    def test_creation_cpu_only(self) -> None:
        sample = ResourceSample(timestamp=1.0, cpu_percent=50.0, rss_mb=256.0, gpu_util=None, gpu_mem_mb=None)
        assert sample.cpu_percent == 50.0
        assert sample.rss_mb == 256.0
        assert sample.gpu_util is None

    def test_creation_with_gpu(self) -> None:
        sample = ResourceSample(timestamp=1.0, cpu_percent=30.0, rss_mb=512.0, gpu_util=75.0, gpu_mem_mb=4096.0)
        assert sample.gpu_util == 75.0
        assert sample.gpu_mem_mb == 4096.0

    def test_frozen_immutability(self) -> None:
        sample = ResourceSample(timestamp=1.0, cpu_percent=50.0, rss_mb=256.0, gpu_util=None, gpu_mem_mb=None)
        with pytest.raises(dataclasses.FrozenInstanceError):
            sample.cpu_percent = 99.0  # type: ignore[misc]

    def test_gpu_clock_power_defaults_to_none(self) -> None:
        sample = ResourceSample(timestamp=1.0, cpu_percent=50.0, rss_mb=256.0, gpu_util=None, gpu_mem_mb=None)
        assert sample.gpu_clock_mhz is None
        assert sample.gpu_power_w is None

    def test_gpu_clock_power_fields(self) -> None:
        sample = ResourceSample(timestamp=1.0, cpu_percent=30.0, rss_mb=512.0, gpu_util=75.0, gpu_mem_mb=4096.0,
                                gpu_clock_mhz=1500.0, gpu_power_w=250.0)
        assert sample.gpu_clock_mhz == 1500.0
        assert sample.gpu_power_w == 250.0


class TestResourceSummary:
    def test_creation(self) -> None:
        summary = make_default_resource_summary()
        assert summary.peak_rss_mb == 512.0
        assert summary.num_samples == 50

    def test_frozen_immutability(self) -> None:
        summary = make_default_resource_summary()
        with pytest.raises(dataclasses.FrozenInstanceError):
            summary.peak_rss_mb = 0.0  # type: ignore[misc]

    def test_gpu_clock_power_defaults_to_none(self) -> None:
        summary = make_default_resource_summary()
        assert summary.mean_gpu_clock_mhz is None
        assert summary.mean_gpu_power_w is None

    def test_gpu_clock_power_fields(self) -> None:
        summary = make_default_resource_summary(mean_gpu_clock_mhz=1400.0, mean_gpu_power_w=200.0)
        assert summary.mean_gpu_clock_mhz == 1400.0
        assert summary.mean_gpu_power_w == 200.0


class TestGPUProfilerProtocol:
    def test_conforming_class_satisfies_protocol(self) -> None:
        class GoodProfiler:
            def get_utilization(self) -> float:
                return 75.0

            def get_memory_usage(self) -> dict[str, float]:
                return {"gpu_memory_used_mb": 2048.0}

            def get_clock_info(self) -> dict[str, float]:
                return {"gpu_clock_mhz": 1500.0, "mem_clock_mhz": 900.0}

            def get_power_info(self) -> dict[str, float]:
                return {"power_draw_w": 250.0, "power_limit_w": 350.0}

        assert isinstance(GoodProfiler(), GPUProfilerProtocol)

    def test_non_conforming_class_fails(self) -> None:
        class BadProfiler:
            def get_utilization(self) -> float:
                return 0.0

        assert not isinstance(BadProfiler(), GPUProfilerProtocol)


class TestResourceMonitor:
    def test_context_manager_starts_and_stops_thread(self) -> None:
        mon = ResourceMonitor(sample_interval_sec=0.05)
        assert_monitor_thread_lifecycle(mon)

    def test_samples_grow_during_monitoring(self) -> None:
        with ResourceMonitor(sample_interval_sec=0.05) as mon:
            time.sleep(0.3)
        assert len(mon.samples) > 0

    def test_summary_returns_resource_summary(self) -> None:
        with ResourceMonitor(sample_interval_sec=0.05) as mon:
            time.sleep(0.3)
        summary = mon.summary
        assert isinstance(summary, ResourceSummary)
        assert summary.num_samples > 0

    def test_peak_rss_at_least_mean_rss(self) -> None:
        with ResourceMonitor(sample_interval_sec=0.05) as mon:
            time.sleep(0.3)
        summary = mon.summary
        assert summary.peak_rss_mb >= summary.mean_rss_mb

    def test_gpu_fields_none_without_profiler(self) -> None:
        with ResourceMonitor(sample_interval_sec=0.05) as mon:
            time.sleep(0.2)
        summary = mon.summary
        assert summary.peak_gpu_mem_mb is None
        assert summary.mean_gpu_util is None
        assert summary.mean_gpu_clock_mhz is None
        assert summary.mean_gpu_power_w is None

    def test_mock_gpu_profiler_provides_data(self) -> None:
        mock_gpu = MagicMock()
        mock_gpu.get_utilization.return_value = 65.0
        mock_gpu.get_memory_usage.return_value = {"gpu_memory_used_mb": 2048.0}
        mock_gpu.get_clock_info.return_value = {"gpu_clock_mhz": 1500.0, "mem_clock_mhz": 900.0}
        mock_gpu.get_power_info.return_value = {"power_draw_w": 250.0, "power_limit_w": 350.0}

        with ResourceMonitor(sample_interval_sec=0.05, gpu_profiler=mock_gpu) as mon:
            sleep_until(0.25, lambda: any(s.gpu_util is not None for s in mon.samples))

        gpu_samples = [s for s in mon.samples if s.gpu_util is not None]
        assert len(gpu_samples) > 0
        assert gpu_samples[0].gpu_util == 65.0

        summary = mon.summary
        assert summary.peak_gpu_mem_mb is not None
        assert summary.mean_gpu_util is not None
        assert summary.mean_gpu_clock_mhz is not None
        assert summary.mean_gpu_power_w is not None

    def test_mock_gpu_profiler_clock_power_in_samples(self) -> None:
        mock_gpu = MagicMock()
        mock_gpu.get_utilization.return_value = 50.0
        mock_gpu.get_memory_usage.return_value = {"gpu_memory_used_mb": 1024.0}
        mock_gpu.get_clock_info.return_value = {"gpu_clock_mhz": 1200.0, "mem_clock_mhz": 800.0}
        mock_gpu.get_power_info.return_value = {"power_draw_w": 180.0, "power_limit_w": 300.0}

        with ResourceMonitor(sample_interval_sec=0.05, gpu_profiler=mock_gpu) as mon:
            sleep_until(0.2, lambda: any(s.gpu_clock_mhz is not None and s.gpu_power_w is not None
                                         for s in mon.samples))

        clock_samples = [s for s in mon.samples if s.gpu_clock_mhz is not None]
        power_samples = [s for s in mon.samples if s.gpu_power_w is not None]
        assert len(clock_samples) > 0
        assert clock_samples[0].gpu_clock_mhz == 1200.0
        assert len(power_samples) > 0
        assert power_samples[0].gpu_power_w == 180.0

    def test_gpu_profiler_exception_graceful_degradation(self) -> None:
        mock_gpu = MagicMock()
        mock_gpu.get_utilization.side_effect = RuntimeError("GPU error")
        mock_gpu.get_memory_usage.side_effect = RuntimeError("GPU error")
        mock_gpu.get_clock_info.side_effect = RuntimeError("GPU error")
        mock_gpu.get_power_info.side_effect = RuntimeError("GPU error")

        with ResourceMonitor(sample_interval_sec=0.05, gpu_profiler=mock_gpu) as mon:
            sleep_until(0.25, lambda: mock_gpu.get_utilization.call_count >= 2)

        for sample in mon.samples:
            assert sample.gpu_util is None
            assert sample.gpu_mem_mb is None
            assert sample.gpu_clock_mhz is None
            assert sample.gpu_power_w is None

        summary = mon.summary
        assert summary.peak_gpu_mem_mb is None
        assert summary.mean_gpu_util is None
        assert summary.mean_gpu_clock_mhz is None
        assert summary.mean_gpu_power_w is None
        # Beyond calibrax: the profiler was really asked, the failures did not stop it.
        assert mock_gpu.get_utilization.call_count >= 2

    def test_gpu_profiler_malformed_memory_payload_graceful_degradation(self) -> None:
        mock_gpu = MagicMock()
        mock_gpu.get_utilization.return_value = 42.0
        mock_gpu.get_memory_usage.return_value = 123.0  # Not a dict
        mock_gpu.get_clock_info.return_value = {}
        mock_gpu.get_power_info.return_value = {}

        with ResourceMonitor(sample_interval_sec=0.05, gpu_profiler=mock_gpu) as mon:
            sleep_until(0.2, lambda: any(s.gpu_util == 42.0 for s in mon.samples))

        assert len(mon.samples) > 0
        assert any(sample.gpu_util == 42.0 for sample in mon.samples)
        assert all(sample.gpu_mem_mb is None for sample in mon.samples)

    def test_thread_is_daemon(self) -> None:
        # calibrax checks Thread.daemon; what that promises is that a program
        # ending inside `with` (no __exit__) still exits.
        code = (
            "import resmon, sys\n"
            "mon = resmon.ResourceMonitor(sample_interval_sec=0.05)\n"
            "mon.__enter__()\n"
            "assert mon.running\n"
            "sys.exit(7)\n"
        )
        done = run_python(code)
        assert done.returncode == 7, done.stderr

    def test_multiple_enter_exit_cycles(self) -> None:
        mon = ResourceMonitor(sample_interval_sec=0.05)
        assert_monitor_collects_samples_twice(mon)

    def test_empty_summary_when_no_samples(self) -> None:
        mon = ResourceMonitor(sample_interval_sec=0.05)
        summary = mon.summary
        assert summary.num_samples == 0
        assert summary.peak_rss_mb == 0
        assert summary.duration_sec == 0

    def test_rss_values_positive(self) -> None:
        with ResourceMonitor(sample_interval_sec=0.05) as mon:
            time.sleep(0.2)
        for sample in mon.samples:
            assert sample.rss_mb > 0
