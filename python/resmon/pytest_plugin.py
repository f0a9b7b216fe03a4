"""resmon's pytest plugin: per-test memory and CPU records, and limits on them.

Registered through the ``pytest11`` entry point ``resmon``, so installing the
package is all it takes; it is inert until used: no test is measured, and
nothing is reset or printed, unless a test has the marker, the ini file sets
``resmon_limit``, or ``--resmon`` / ``--resmon-json`` is given.  (Disable it
entirely with ``-p no:resmon``.)

Usage::

    @pytest.mark.resmon_limit(rss_growth_mb=200, cpu_sec=5)
    def test_parse_big_file(): ...

    pytest --resmon                 # the 10 heaviest tests at the end
    pytest --resmon-json=run.json   # every test's record, for resmon compare

    # pytest.ini / [tool.pytest.ini_options]: a limit for every test
    resmon_limit = rss_growth_mb=500

What a record covers: the test's call phase only (the test function's body),
not its fixtures' setup and teardown.  Memory a fixture allocated before the
call is in the RSS at the call's start, so it is not growth; memory the test
leaves for a fixture's teardown to free counts.  Its figures:

``rss_growth_mb``
    How much memory the test used: the largest of (a) the pytest process's
    exact peak during the call (``peak_rss_mb``) minus its RSS when the call
    began, (b) ``children_peak_rss_mb``, the whole of a child that did not
    exist when the call began, and (c) when a sample saw more than one
    process, the sampled peak of the process tree (pytest and every
    descendant alive at a sample) minus the tree's first sample.  (a) and
    (b) are exact; (c) catches children still running, or several running
    at once, to the sample interval's resolution.
``peak_rss_mb``
    The pytest process's exact peak RSS during the call: the kernel's
    high-water mark (VmHWM), reset when the call begins by writing 5 to
    /proc/self/clear_refs.  Where the kernel refuses the reset it is the
    sampled peak of the process tree and ``peak_rss_exact`` is false.
``children_peak_rss_mb``
    The exact peak RSS of the largest child process (with its own reaped
    descendants) that the test started and reaped (``ru_maxrss`` of
    RUSAGE_CHILDREN, when it rose during the call); None when no child
    reaped during the call exceeded the largest one reaped before it (the
    sampled tree figure still covers such a child).
``tree_peak_rss_mb``
    The sampled peak RSS of the whole process tree during the call (sum over
    the processes alive at each sample).
``cpu_sec``
    User + system CPU seconds from the kernel (getrusage): the pytest
    process (all its threads, resmon's sampler thread included) and every
    child reaped during the call; children still running at the end are not
    in it.  Exact: the name the command gives the kernel's CPU seconds
    (``cpu_sec``), where ``cpu_time_sec`` is the sampled figure; a limit
    still named ``cpu_time_sec`` is refused with a word on the new name.
``wall_sec``
    Wall-clock seconds of the call.
``peak_gpu_mem_mb``, ``gpu_energy_j``
    Only when a GPU is measured (ini ``resmon_gpu = auto`` or a device such
    as ``nvml:0``): the device's peak memory used and its energy in the call.

Peak mark: measuring a test resets the pytest process's peak-RSS mark at the
call's start, so after a measured run VmHWM and ``ru_maxrss`` of the pytest
process (and what a parent such as ``resmon -- pytest`` or ``/usr/bin/time``
reports as its exact peak) show the peak since the last measured test began,
not the session's.  Only measured tests reset it.

Under pytest-xdist each worker measures its own tests (its own process and
its children); the records travel with the test reports, so the controller's
``--resmon`` table and ``--resmon-json`` report hold every worker's tests.
"""

from __future__ import annotations

import json
import math
import os
import platform
import resource
import socket
import sys
import time
from typing import Any

import pytest

from . import _output

# The keys of a record that a limit may name, in the record's order.
LIMIT_KEYS = ("rss_growth_mb", "peak_rss_mb", "children_peak_rss_mb", "tree_peak_rss_mb", "cpu_sec",
              "wall_sec", "peak_gpu_mem_mb", "gpu_energy_j")
_PROPERTY = "resmon"  # the name of the record among a report's user_properties
_DEFAULT_INTERVAL_SEC = 0.01


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("resmon", "resmon: per-test memory and CPU")
    group.addoption("--resmon", action="store_true", default=False,
                    help="measure every test; print the heaviest by memory growth and by CPU at the end")
    group.addoption("--resmon-top", type=int, default=10, metavar="N",
                    help="how many tests --resmon lists (default 10)")
    group.addoption("--resmon-json", metavar="PATH", default=None,
                    help="measure every test; write each test's record, keyed by node id, to PATH")
    parser.addini("resmon_limit", type="args", default=[],
                  help="limits for every test, KEY=VALUE (e.g. rss_growth_mb=500); the marker overrides")
    parser.addini("resmon_interval", default=str(_DEFAULT_INTERVAL_SEC),
                  help="seconds between samples of the process tree (default 0.01)")
    parser.addini("resmon_gpu", default="none",
                  help="GPU to measure: none (default), auto, all, or a device such as nvml:0")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "resmon_limit(**limits): fail the test when a figure of its resmon record exceeds its limit, "
        f"e.g. rss_growth_mb=200 (keys: {', '.join(LIMIT_KEYS)}; None lifts an ini limit)")
    try:
        default_limits = _parse_ini_limits(config.getini("resmon_limit"))
        interval = float(config.getini("resmon_interval"))
        if not math.isfinite(interval) or interval <= 0:
            raise ValueError
    except ValueError as error:
        raise pytest.UsageError(f"resmon: {error}" if str(error) else
                                "resmon: resmon_interval must be a positive number of seconds") from None
    if config.getoption("resmon_top") < 0:
        raise pytest.UsageError("resmon: --resmon-top must be 0 or more")
    json_path = config.getoption("resmon_json")
    if json_path and not _is_worker(config):
        try:  # refused before any test runs, as the command refuses before the command starts
            _output.check_writable(json_path)
        except OSError as error:
            raise pytest.UsageError(f"resmon: cannot write --resmon-json {json_path!r}: {error.strerror}") from None
    config.pluginmanager.register(_Session(config, default_limits, interval), "resmon-session")


class _Session:
    """The plugin's state for one pytest process (the controller or a worker)."""

    def __init__(self, config: pytest.Config, default_limits: dict[str, float], interval: float) -> None:
        self.config = config
        self.default_limits = default_limits
        self.interval = interval
        self.gpu = config.getini("resmon_gpu")
        self.measure_all = bool(config.getoption("resmon") or config.getoption("resmon_json"))
        self.monitor: Any = None  # one ResourceMonitor, a new window per test
        self.records: dict[str, dict[str, Any]] = {}  # node id -> record (from the reports)
        self.exceeded: dict[str, str] = {}  # node id -> the failure's message, until its report

    def limits_of(self, item: pytest.Item) -> dict[str, float]:
        limits = dict(self.default_limits)
        # Closest marker last: a test's own marker overrides its class's and module's.
        for marker in reversed(list(item.iter_markers("resmon_limit"))):
            if marker.args:
                raise pytest.UsageError("resmon_limit takes keywords only, e.g. rss_growth_mb=200")
            for key, value in marker.kwargs.items():
                _check_limit(key, value, "resmon_limit")
                if value is None:
                    limits.pop(key, None)
                else:
                    limits[key] = float(value)
        return limits

    def open_monitor(self) -> Any:
        if self.monitor is None:
            from ._monitor import ResourceMonitor  # the extension loads only when a test is measured
            gpu = None if self.gpu == "none" else self.gpu
            self.monitor = ResourceMonitor(self.interval, pid=os.getpid(), include_children=True, max_samples=1,
                                           gpu=gpu, metrics=["counts"])
        return self.monitor

    @pytest.hookimpl(hookwrapper=True, trylast=True)
    def pytest_runtest_call(self, item: pytest.Item):
        try:
            limits = self.limits_of(item)
        except pytest.UsageError as error:  # a bad marker fails its test, with the reason
            self.exceeded[item.nodeid] = str(error)
            yield
            return
        if not limits and not self.measure_all:
            yield
            return
        children_maxrss_before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        cpu_before = _cpu_sec(resource.RUSAGE_SELF) + _cpu_sec(resource.RUSAGE_CHILDREN)
        exact = _reset_peak_mark()
        rss_start = _status_mb("VmRSS")
        try:
            monitor = self.open_monitor()
            monitor.__enter__()
        except (OSError, ValueError) as error:  # e.g. resmon_gpu names a GPU that is not there
            self.exceeded[item.nodeid] = f"resmon: the test cannot be measured: {error}"
            yield
            return
        wall_start = time.perf_counter()
        try:
            outcome = yield
        finally:
            wall = time.perf_counter() - wall_start
            monitor.__exit__(None, None, None)
        cpu = _cpu_sec(resource.RUSAGE_SELF) + _cpu_sec(resource.RUSAGE_CHILDREN) - cpu_before
        hwm = _status_mb("VmHWM") if exact else None
        children_maxrss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        record = _record(monitor.summary, monitor.samples, rss_start, hwm, children_maxrss_before,
                         children_maxrss, cpu, wall)
        item.user_properties.append((_PROPERTY, json.dumps(record)))
        if outcome.excinfo is None:  # a test that failed by itself keeps its own failure
            message = _over_limits(record, limits)
            if message:
                self.exceeded[item.nodeid] = message

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]):
        # A limit exceeded fails the call phase itself, as a failed assertion
        # would: FAILED, not ERROR, and "-x" and xdist see an ordinary failure.
        message = self.exceeded.pop(item.nodeid, None) if call.when == "call" else None
        if message and call.excinfo is None:
            try:
                pytest.fail(message, pytrace=False)
            except pytest.fail.Exception:
                call.excinfo = pytest.ExceptionInfo.from_current()
        yield

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # Here in the controller too under xdist: the record came with the report.
        if report.when == "call":
            for name, value in report.user_properties:
                if name == _PROPERTY:
                    self.records[report.nodeid] = json.loads(value)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        path = self.config.getoption("resmon_json")
        if not path or _is_worker(self.config):
            return
        from . import library_version
        report = {
            "resmon_version": library_version,
            "machine": _machine(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "tests": self.records,
        }
        try:
            # The command's rules (README, "Your files"): a temporary made with
            # O_EXCL, devices and FIFOs in place, a link kept, read-only refused.
            _output.write_file(path, json.dumps(report, indent=1) + "\n")
        except OSError as error:
            sys.stderr.write(f"resmon: cannot write --resmon-json {error.filename!r}: {error.strerror}\n")
            if session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
                session.exitstatus = pytest.ExitCode.USAGE_ERROR

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.config.getoption("resmon") or _is_worker(self.config):
            return
        top = self.config.getoption("resmon_top")
        write = terminalreporter.write_line
        for key, title in (("rss_growth_mb", "memory growth"), ("cpu_sec", "CPU time")):
            heaviest = sorted(self.records.items(), key=lambda item: item[1][key], reverse=True)[:top]
            terminalreporter.write_sep("-", f"resmon: {len(heaviest)} heaviest of {len(self.records)} tests "
                                            f"by {title}")
            if heaviest:
                write(f"{'growth MiB':>10} {'peak MiB':>9} {'CPU s':>8} {'wall s':>8}  test")
            for node_id, r in heaviest:
                write(f"{r['rss_growth_mb']:10.1f} {r['peak_rss_mb']:9.1f} {r['cpu_sec']:8.3f} "
                      f"{r['wall_sec']:8.3f}  {node_id}")


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")  # a pytest-xdist worker: the controller reports


def _check_limit(key: str, value: Any, where: str) -> None:
    if key == "cpu_time_sec":  # the record's name before 0.4: the kernel's seconds are cpu_sec, as in the command
        raise pytest.UsageError(f"{where}: cpu_time_sec is now cpu_sec (the kernel's CPU seconds)")
    if key not in LIMIT_KEYS:
        raise pytest.UsageError(f"{where}: unknown key {key!r} (one of {', '.join(LIMIT_KEYS)})")
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                              or not _finite(value) or value < 0):
        raise pytest.UsageError(f"{where}: {key}={value!r} is not a number >= 0")


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an int beyond any double, such as 10**400
        return False


def _parse_ini_limits(words: list[str]) -> dict[str, float]:
    limits = {}
    for word in (w for text in words for w in text.split(",") if w):
        key, sep, value = word.partition("=")
        try:
            number = float(value) if sep else None
        except ValueError:
            number = None
        if number is None:
            raise ValueError(f"resmon_limit: {word!r} is not KEY=VALUE, e.g. rss_growth_mb=500")
        _check_limit(key, number, "resmon_limit (ini)")
        limits[key] = number
    return limits


# ---- measuring one call ----------------------------------------------------

def _status_mb(field: str) -> float | None:
    """A "kB" line of /proc/self/status (VmRSS, VmHWM) in MiB."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(field.encode() + b":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _reset_peak_mark() -> bool:
    """Resets this process's VmHWM to its current RSS, as the library does."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _cpu_sec(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _record(summary: Any, samples: list[Any], rss_start: float | None, hwm: float | None,
            children_before_kb: int, children_after_kb: int, cpu: float, wall: float) -> dict[str, Any]:
    # The tree's first sample: the last one kept, less the window's growth.
    tree_first = samples[-1].rss_mb - summary.memory_growth_mb if samples else summary.peak_rss_mb
    tree_growth = max(summary.peak_rss_mb - tree_first, 0.0)
    children_peak = children_after_kb / 1024 if children_after_kb > children_before_kb else None
    exact = hwm is not None and rss_start is not None
    peak = hwm if exact else summary.peak_rss_mb  # the tree's, without the exact figure
    # The sampled tree counts pages slightly differently from VmHWM (statm):
    # it stands in for the exact figure only where other processes ran.
    several = summary.peak_nprocs is not None and summary.peak_nprocs > 1
    growth = max(peak - rss_start if exact else tree_growth, tree_growth if several else 0.0,
                 children_peak or 0.0, 0.0)
    record: dict[str, Any] = {
        "rss_growth_mb": growth,
        "peak_rss_mb": peak,
        "peak_rss_exact": exact,
        "rss_start_mb": rss_start,
        "children_peak_rss_mb": children_peak,
        "tree_peak_rss_mb": summary.peak_rss_mb,
        "cpu_sec": cpu,
        "wall_sec": wall,
    }
    if summary.peak_gpu_mem_mb is not None:
        record["peak_gpu_mem_mb"] = summary.peak_gpu_mem_mb
    if summary.gpu_energy_j is not None:
        record["gpu_energy_j"] = summary.gpu_energy_j
    return record


def _over_limits(record: dict[str, Any], limits: dict[str, float]) -> str:
    lines = []
    for key, limit in limits.items():
        value = record.get(key)
        if value is None:
            lines.append(f"resmon_limit: {key} was not measured (limit {limit:g})")
        elif value > limit:
            lines.append(f"resmon_limit: {key} = {value:.4g} exceeds the limit of {limit:g}")
    return "\n".join(lines)


def _machine() -> dict[str, Any]:
    model = None
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), None)
    except OSError:
        pass
    memory = None
    try:
        with open("/proc/meminfo") as f:
            memory = int(f.readline().split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return {"hostname": socket.gethostname(), "system": platform.system(), "release": platform.release(),
            "machine": platform.machine(), "cpu_model": model, "cpus": os.cpu_count(),
            "memory_total_mb": memory, "python": sys.version.split()[0]}
