"""Monitors under the ways Python programs end, fork, thread and fail."""

import errno
import gc
import os
import signal
import threading
import time
import tracemalloc
import weakref

import pytest

from helpers import SAFETY_SEC, count_named, count_named_settled
from resmon import ResourceMonitor, _resmon, list_gpus
from test_gpu_profiler import Profiler


def resident_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1048576


def test_keyboard_interrupt_inside_with_stops_the_sampler():
    before = count_named("resmon-sampler")
    mon = ResourceMonitor(sample_interval_sec=0.005)
    with pytest.raises(KeyboardInterrupt):
        with mon:
            assert count_named("resmon-sampler") == before + 1
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(10)  # interrupted
    assert not mon.running
    assert count_named_settled("resmon-sampler", before) == before
    taken = mon.summary.num_samples
    time.sleep(0.05)
    assert mon.summary.num_samples == taken >= 2


def wait_child(pid: int, timeout: float = SAFETY_SEC) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail("the forked child deadlocked")


def child_work(mon: ResourceMonitor) -> int:
    """What a forked child does with the parent's running monitor: leave its
    `with`, fail to read it, and monitor itself afresh."""
    mon.__exit__(None, None, None)  # nothing samples here: a no-op
    try:
        mon.summary
        return 2
    except RuntimeError:
        pass
    with ResourceMonitor(sample_interval_sec=0.001, gpu_profiler=Profiler()) as own:
        deadline = time.monotonic() + SAFETY_SEC  # the profiler runs at most every 20 ms; the machine may be busy
        while own.summary.mean_gpu_util is None and time.monotonic() < deadline:
            time.sleep(0.005)
    return 0 if own.summary.num_samples >= 2 and own.summary.mean_gpu_util == 40.0 else 3


# GCC 12's AddressSanitizer does not hold its allocator's locks across fork()
# (see the next test): a child forked while the sampler or the GPU thread is
# inside malloc can hang in its own first malloc.  CI's ASan stage hung here
# once in 15 forks (stop 37); glibc's malloc is fork-safe: the plain build
# runs this test.
@pytest.mark.skipif("ASAN_OPTIONS" in os.environ, reason="ASan's allocator is not fork-safe with other threads")
def test_fork_with_a_running_monitor_does_not_deadlock_the_child():
    idle = ResourceMonitor(sample_interval_sec=0.001)  # no window open: usable in the child
    with ResourceMonitor(sample_interval_sec=0.001, gpu_profiler=Profiler()) as mon:
        for attempt in range(15):
            time.sleep(0.003 * attempt)  # fork at different points of the sampler's cycle
            pid = os.fork()
            if pid == 0:
                code = 4
                try:
                    code = child_work(mon)
                    with idle:
                        time.sleep(0.005)
                    code = code or (0 if idle.summary.num_samples >= 2 else 5)
                finally:
                    os._exit(code)
            assert wait_child(pid) == 0, f"attempt {attempt}: see child_work for what the code means"
        assert mon.running  # the parent's monitor is untouched
    assert mon.summary.num_samples > 10


class SlowProfiler(Profiler):
    """A reading takes 2 ms, so start (which waits for the first) and stop
    (which waits for the last) each take a while."""

    def get_utilization(self):
        time.sleep(0.002)
        return 40.0


# GCC 12's AddressSanitizer does not hold its allocator's locks across fork(),
# so a child forked while another thread is inside malloc -- as start and stop
# are, and every new thread's ASan set-up -- can hang in its own first malloc
# (seen: the child's new sampler thread in ASan's SizeClassAllocator64 Refill).
# glibc's malloc is fork-safe: the plain build runs this test.
@pytest.mark.skipif("ASAN_OPTIONS" in os.environ, reason="ASan's allocator is not fork-safe with other threads")
def test_fork_while_another_thread_starts_or_stops_a_monitor_does_not_deadlock_the_child():
    mon = ResourceMonitor(sample_interval_sec=0.001, gpu_profiler=SlowProfiler())
    done = threading.Event()

    def toggle():  # inside start or stop most of the time
        while not done.is_set():
            with mon:
                pass

    toggler = threading.Thread(target=toggle)
    toggler.start()
    try:
        for attempt in range(100):
            pid = os.fork()
            if pid == 0:
                code = 4
                try:
                    mon.__exit__(None, None, None)  # the parent's window or start: a no-op here
                    with ResourceMonitor(sample_interval_sec=0.001) as own:
                        pass
                    code = 0 if own.summary.num_samples >= 2 else 3
                finally:
                    os._exit(code)
            assert wait_child(pid) == 0, f"attempt {attempt}"
    finally:
        done.set()
        toggler.join(60)
    assert not toggler.is_alive() and not mon.running


class InterruptingProfiler(Profiler):
    """Its first reading, which the window's first sample waits for inside
    __enter__, sends this process SIGINT."""

    def __init__(self):
        self.interrupted = False

    def get_utilization(self):
        if not self.interrupted:
            self.interrupted = True
            os.kill(os.getpid(), signal.SIGINT)
        return 40.0


def test_keyboard_interrupt_during_enter_leaves_no_sampler_running():
    # At a 0.2 s interval the first sample waits up to 0.2 s for the GPU
    # reading, so the signal nearly always lands inside __enter__; one that
    # comes later (a very busy machine) lands in the body, which waits for it.
    before, inside_enter, inside_start = count_named("resmon-sampler"), 0, 0
    for attempt in range(20):
        profiler, entered = InterruptingProfiler(), False
        mon = ResourceMonitor(sample_interval_sec=0.2, gpu_profiler=profiler)
        with pytest.raises(KeyboardInterrupt):
            with mon:
                entered = True
                time.sleep(10)  # interrupted
        inside_enter += not entered
        assert not mon.running, f"attempt {attempt}"
        assert count_named_settled("resmon-sampler", before) == before, f"attempt {attempt}"
        low, started = _resmon.Monitor(0.2, InterruptingProfiler()), False  # the binding's own start
        try:
            low.start()
            started = True
            time.sleep(10)  # interrupted
        except KeyboardInterrupt:
            pass
        inside_start += not started
        assert started or not low.running, f"attempt {attempt}"
        low.stop()
    assert inside_enter > 0 and inside_start > 0  # the case this test is about did happen


def test_a_running_monitor_in_a_cycle_through_its_profiler_is_collected():
    # A monitor an earlier test left in a cycle (a failed test's traceback
    # holds its frame) keeps its GPU thread until collected: collect first, so
    # that the baseline does not fall during this test.
    gc.collect()
    deadline = time.monotonic() + SAFETY_SEC
    while count_named("resmon-gpu") > 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    samplers, gpu_threads = count_named("resmon-sampler"), count_named("resmon-gpu")
    profiler = Profiler()
    mon = ResourceMonitor(sample_interval_sec=0.001, gpu_profiler=profiler)
    profiler.monitor = mon  # profiler -> mon -> the C monitor -> (the library's reference) -> profiler
    mon.__enter__()
    assert count_named("resmon-sampler") == samplers + 1
    profiler_ref = weakref.ref(profiler)
    del mon, profiler
    gc.collect()
    assert count_named_settled("resmon-sampler", samplers) == samplers  # free joined it
    deadline = time.monotonic() + SAFETY_SEC
    while (profiler_ref() is not None or count_named("resmon-gpu") > gpu_threads) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert profiler_ref() is None and count_named("resmon-gpu") == gpu_threads


def test_many_monitors_in_many_threads():
    threads, failures = 8, []
    barrier = threading.Barrier(threads)

    def work(index):
        try:
            barrier.wait()
            for round_ in range(10):
                profiler = Profiler() if (index + round_) % 2 else None
                with ResourceMonitor(sample_interval_sec=0.001, gpu_profiler=profiler) as mon:
                    sum(i * i for i in range(20_000))
                summary = mon.summary
                assert summary.num_samples >= 2 and len(mon.samples) == summary.num_samples
                assert (summary.mean_gpu_util == 40.0) == (profiler is not None)
        except BaseException as e:  # reported below, on the test's thread
            failures.append(e)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    assert not failures, failures
    assert not any(w.is_alive() for w in workers)


def test_one_monitor_started_and_stopped_from_many_threads():
    mon = ResourceMonitor(sample_interval_sec=0.001)
    errors = []

    def toggle():
        for _ in range(50):
            try:
                mon._monitor.start()
            except OSError as e:
                if e.errno != errno.EBUSY:
                    errors.append(e)
            mon._monitor.stop()

    workers = [threading.Thread(target=toggle) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    assert not errors
    assert not mon.running


BAD_INTERVALS = [0, 0.0, -0.1, float("nan"), float("inf"), -float("inf"), 1e-7, 1e7, "0.1", None, True]


@pytest.mark.parametrize("interval", BAD_INTERVALS, ids=repr)
def test_bad_interval_raises_value_error(interval):
    with pytest.raises(ValueError, match="sample_interval_sec"):
        ResourceMonitor(sample_interval_sec=interval)


@pytest.mark.parametrize("kwargs", [dict(pid=0), dict(pid=-3), dict(pid="1"), dict(max_samples=0),
                                    dict(max_samples=-1), dict(gpu=3), dict(gpu="auto", gpu_profiler=Profiler()),
                                    dict(metrics="everything"), dict(metrics=["io", "pss"]), dict(metrics=3),
                                    dict(metrics=[["io"]])])
def test_bad_options_raise_value_error(kwargs):
    with pytest.raises(ValueError):
        ResourceMonitor(**kwargs)


def test_only_the_metric_groups_asked_for_are_read():
    with ResourceMonitor(sample_interval_sec=0.01, metrics={"counts", "cpu_split"}) as mon:
        sum(i * i for i in range(100_000))
    s = mon.summary
    assert s.peak_nprocs == 1 and s.peak_nthreads >= 2
    assert s.cpu_user_sec is not None and s.cpu_sys_sec is not None
    assert s.io_rchar is None and s.peak_pss_mb is None and s.net_rx_bytes is None and s.minor_faults is None
    with ResourceMonitor(sample_interval_sec=0.01, metrics="io") as mon:  # one name, not its letters
        pass
    assert mon.summary.io_rchar is not None and mon.summary.peak_nprocs is None
    with ResourceMonitor(sample_interval_sec=0.01) as mon:
        pass
    assert all(getattr(mon.summary, key) is None for key in ("io_rchar", "peak_pss_mb", "cpu_user_sec"))


def test_os_errors_carry_errno_and_resmon_message():
    mon = ResourceMonitor(pid=2 ** 22 + 12345)  # above pid_max's ceiling: never a process
    with pytest.raises(OSError) as caught:
        mon.__enter__()
    assert caught.value.errno == errno.ESRCH and isinstance(caught.value, ProcessLookupError)
    assert caught.value.strerror == "no such process"


def test_starting_twice_is_ebusy():
    with ResourceMonitor(sample_interval_sec=0.01) as mon:
        with pytest.raises(OSError) as caught:
            mon.__enter__()
        assert caught.value.errno == errno.EBUSY
    assert not mon.running


def test_no_gpu_is_an_os_error_naming_the_problem(tmp_path, monkeypatch):
    monkeypatch.setenv("RESMON_SYSFS_ROOT", str(tmp_path))  # no DRM cards at all
    monkeypatch.setenv("RESMON_NVML_LIBRARY", str(tmp_path / "no-libnvidia-ml.so.1"))
    assert list_gpus() == []
    with pytest.raises(OSError) as caught:
        ResourceMonitor(gpu="amd:0")
    assert caught.value.errno in (errno.ENOENT, errno.ENODEV)
    assert caught.value.strerror
    with pytest.raises(ValueError):
        ResourceMonitor(gpu="no-such-backend:0")
    # a selector that names nothing is bad input, with a driver or without
    for spec in ("nvml:-1", "nvml:", "amd:-1"):
        with pytest.raises(ValueError, match="chosen by index"):
            ResourceMonitor(gpu=spec)


def test_monitoring_another_process_tree_matches_the_kernel():
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # busy until the parent closes the pipe
        os.close(write_end)
        os.set_blocking(read_end, False)
        try:
            while True:
                try:
                    if os.read(read_end, 1) == b"":
                        break
                except BlockingIOError:
                    pass
        finally:
            os._exit(0)
    os.close(read_end)

    def child_cpu():
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime

    try:
        # Until the child has used 0.2 CPU seconds in the window (a fixed
        # amount of work, however busy the machine), not for a time.
        with ResourceMonitor(sample_interval_sec=0.01, pid=pid, include_children=True) as mon:
            at_start = child_cpu()  # after the window's first sample
            deadline = time.monotonic() + SAFETY_SEC
            while child_cpu() < at_start + 0.2 and time.monotonic() < deadline:
                time.sleep(0.01)
            in_window = child_cpu() - at_start  # before its last sample
        kernel_cpu = child_cpu()
    finally:
        os.close(write_end)
        os.waitpid(pid, 0)
    summary = mon.summary
    # The window saw what the child used in it (a tick's slack at each edge)
    # and never more than all of the child's life.
    assert in_window >= 0.2
    assert in_window - 0.03 <= summary.cpu_time_sec <= kernel_cpu + 0.05
    assert summary.peak_rss_mb > 0


def test_thousands_of_monitors_leak_nothing():
    profilers = weakref.WeakSet()

    def churn(count):
        for i in range(count):
            profiler = None
            if i % 2:
                profiler = Profiler()
                profilers.add(profiler)
            mon = ResourceMonitor(sample_interval_sec=0.001, gpu_profiler=profiler, max_samples=16)
            with mon:
                pass
            assert mon.summary.num_samples >= 2 and mon.samples
            del mon, profiler

    churn(300)  # allocator and interpreter warm-up
    gc.collect()
    threads_before = len(os.listdir("/proc/self/task"))
    rss_before = resident_mb()
    tracemalloc.start()
    traced_before = tracemalloc.get_traced_memory()[0]
    churn(3000)
    gc.collect()
    traced_growth = tracemalloc.get_traced_memory()[0] - traced_before
    tracemalloc.stop()
    rss_growth = resident_mb() - rss_before
    deadline = time.monotonic() + SAFETY_SEC
    while len(profilers) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(profilers) == 0  # every profiler's reference was released
    assert len(os.listdir("/proc/self/task")) == threads_before
    # A monitor's sample store alone is 64 KiB: a leak of 3000 would be ~190 MiB.
    assert traced_growth < 256 * 1024, traced_growth
    if "ASAN_OPTIONS" not in os.environ:  # ASan's quarantine holds freed memory back on purpose
        assert rss_growth < 8, rss_growth


def test_max_samples_keeps_memory_flat_at_1khz():
    with ResourceMonitor(sample_interval_sec=0.001, max_samples=500) as mon:
        # Counted in samples, not timed: the store is full, then 1000 more.
        deadline = time.monotonic() + SAFETY_SEC
        while mon.summary.num_samples < 800 and time.monotonic() < deadline:
            time.sleep(0.01)
        rss_early = resident_mb()
        early = mon.summary.num_samples
        # Polled seldom: each poll makes a summary object, and under ASan a
        # freed one stays in the quarantine, so polling every 10 ms grew this
        # process by 1.03 MiB in 2000 samples -- the test's memory, not the
        # monitor's.
        while mon.summary.num_samples < early + 2000 and time.monotonic() < deadline:
            time.sleep(0.25)
        rss_late = resident_mb()
        assert len(mon.samples) == 500
    summary = mon.summary
    assert summary.num_samples > 1000  # the summary covers the whole window
    assert len(mon.samples) == 500
    assert rss_late - rss_early < 1.0


def spike(megabytes: int) -> None:
    """Touches and unmaps megabytes: the kernel's peak-RSS mark rises above the RSS."""
    import mmap
    block = mmap.mmap(-1, megabytes << 20)
    for offset in range(0, megabytes << 20, mmap.PAGESIZE):
        block[offset] = 1
    block.close()


def own_maxrss_mb() -> float:
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def test_a_window_leaves_the_process_peak_alone():
    spike(300)
    before = own_maxrss_mb()
    with ResourceMonitor(sample_interval_sec=0.01) as mon:
        pass
    assert own_maxrss_mb() >= before  # what getrusage and /usr/bin/time -v report is intact
    s = mon.summary
    assert s.hwm_scope == "lifetime"  # the mark did not rise: it is the earlier peak
    assert before - 1 <= s.hwm_rss_mb <= before + 1
    assert s.peak_rss_mb < before - 250  # the window's own, sampled figure
    with ResourceMonitor(sample_interval_sec=600) as mon:  # no sample inside the spike
        spike(int(before) + 100)
    after = own_maxrss_mb()
    assert after >= before + 95
    assert mon.summary.hwm_scope == "window"  # it rose: exact for the window
    assert after - 1 <= mon.summary.hwm_rss_mb <= after + 1


def test_reset_peak_mark_asks_for_the_window_peak_at_the_cost_of_ru_maxrss():
    spike(300)
    before = own_maxrss_mb()
    with ResourceMonitor(sample_interval_sec=0.01, reset_peak_mark=True) as mon:
        pass
    s = mon.summary
    if s.hwm_scope == "window":
        assert s.hwm_rss_mb < before - 250
        assert own_maxrss_mb() < before - 250  # as documented
    else:
        assert s.hwm_scope == "lifetime"  # the kernel refused the reset
