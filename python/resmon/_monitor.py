"""ResourceMonitor: calibrax's context manager over a libresmon monitor."""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import TracebackType

from . import _resmon
from ._protocol import GPUProfilerProtocol
from ._intervals import checked_interval as _checked_interval
from ._marks import check_name
from ._records import METRICS, SAMPLE_METRIC_KEYS, PhaseSummary, ProcessRecord, ResourceSample, ResourceSummary

_MAX_PID = 2**31 - 1  # pid_t
# The metric groups' totals since the window began: a phase's add up.
_LAST_FOLDED = frozenset(m["summary_field"] for m in METRICS if m["fold"] == "last")
# The order of Monitor.processes()'s tuples.
_PROCESS_FIELDS = tuple(f.name for f in dataclasses.fields(ProcessRecord))


class ResourceMonitor:
    """Background resource sampling (10 Hz by default) via context manager.

    Usage::

        with ResourceMonitor() as mon:
            ...  # run benchmark
        summary = mon.summary

    The sampler is libresmon's C thread: it takes no GIL, so monitoring costs
    a pure-Python workload nothing per sample unless a Python ``gpu_profiler``
    is given (then only the GPU thread takes the GIL, once per call).  Each
    ``with`` opens a new window: samples and summary start afresh.  The
    sampler stops when the ``with`` block ends, also by an exception such as
    KeyboardInterrupt, and when the monitor is dropped.

    Args:
        sample_interval_sec: Seconds between samples, 1e-6 to 1e6.
        gpu_profiler: Optional profiler satisfying GPUProfilerProtocol.
        pid: resmon only: monitor this process instead of the calling one.
        include_children: resmon only: add every descendant of the monitored
            process alive at each sample.
        max_samples: resmon only: keep only the most recent samples (the
            summary still covers the whole window); None keeps all.
        gpu: resmon only: a built-in GPU backend instead of a Python profiler:
            "auto", "all", "nvml:0", "nvml:GPU-<uuid>", "amd:0", "intel:0"
            (see list_gpus()).
        metrics: resmon only: metric groups to read at each sample besides
            CPU and RSS, filling the summary's optional fields: "all", or an
            iterable of "io", "memory_detail" (vmem, PSS, swap), "counts",
            "cpu_split", "faults", "network".  Each costs a few /proc reads
            per process per sample; None reads none.
        reset_peak_mark: resmon only: reset each monitored process's kernel
            peak-RSS mark when a window starts (writes 5 to
            /proc/PID/clear_refs), so ``summary.hwm_rss_mb`` is the window's
            exact peak even below an earlier one.  This rewrites the process's
            own history: ``resource.getrusage(RUSAGE_SELF).ru_maxrss``, VmHWM
            and ``/usr/bin/time -v`` lose every peak before the window.  False
            (the default, as calibrax): nothing is written to any process; the
            mark is only read, and ``hwm_rss_mb`` is the window's exact peak
            when the mark rose during the window (``hwm_scope`` "window"),
            else the earlier lifetime peak (``hwm_scope`` "lifetime") while
            ``peak_rss_mb`` is the window's sampled peak.
        cgroup_path: resmon only: a cgroup directory (str, bytes or
            os.PathLike; bytes for a name that is not UTF-8) (such as
            "/sys/fs/cgroup/system.slice/x.service") whose figures each
            sample (``cgroup_mem_mb``) and the summary (``cgroup_version``,
            ``cgroup_peak_mb``, ``cgroup_oom_kills``, ...) carry, whoever is
            in it.  A cgroup that cannot be opened still opens the window,
            with ``summary.cgroup_error`` its negative errno and every cgroup
            figure None.  None: no cgroup.
        cgroup_members: resmon only: with cgroup_path and no pid, monitor the
            cgroup's processes (its cgroup.procs and its descendants', listed
            at each sample) instead of this one; starting fails with OSError
            when cgroup.procs cannot be read.
        memory_detail_interval: with the ``memory_detail`` metric group, read
            each process's PSS/USS (smaps_rollup, the costly read) at most
            this often, in seconds; None: the library's 0.5 s.  Between
            reads a process's figure is its last one.  In a tree of more
            than 64 processes the periodic tree-wide reading waits longer,
            as keeps it at 0.05 % of a CPU (at most 60 s).

    Raises:
        ValueError: A bad interval, pid, max_samples, metric group or GPU spec, a
            flag that is not True or False (``include_children="no"``), a
            cgroup_path that is not a path, a gpu_profiler without
            get_utilization() and get_memory_usage(), both gpu_profiler and
            gpu, or cgroup_members without cgroup_path or with pid.
        OSError: The library failed (errno and resmon's message), e.g. the
            GPU named by ``gpu`` cannot be opened.
    """

    def __init__(
        self,
        sample_interval_sec: float = 0.1,
        gpu_profiler: GPUProfilerProtocol | None = None,
        *,
        pid: int | None = None,
        include_children: bool = False,
        max_samples: int | None = None,
        gpu: str | None = None,
        metrics: str | Iterable[str] | None = None,
        reset_peak_mark: bool = False,
        cgroup_path: str | bytes | os.PathLike[str] | os.PathLike[bytes] | None = None,
        cgroup_members: bool = False,
        memory_detail_interval: float | None = None,
    ) -> None:
        self._interval = _checked_interval(sample_interval_sec)
        if memory_detail_interval is not None:
            memory_detail_interval = _checked_interval(memory_detail_interval, "memory_detail_interval")
        self._gpu_profiler = gpu_profiler
        if gpu is not None and not isinstance(gpu, str):
            raise ValueError(f"gpu must be a string such as 'auto' or 'nvml:0', got {gpu!r}")
        if gpu is not None and not gpu.isascii():  # a lone surrogate raised UnicodeEncodeError from inside
            raise ValueError(f"gpu must be a string such as 'auto' or 'nvml:0', got {gpu!r}")
        if gpu == "none":
            gpu = None
        if gpu_profiler is not None and gpu is not None:
            raise ValueError("give either gpu_profiler or gpu, not both")
        # A method that raises gives None for its field in that sample (the
        # protocol); an object with neither method -- a typo, a class for an
        # instance -- would give None in every sample, said nowhere.
        if gpu_profiler is not None and (isinstance(gpu_profiler, type) or  # the class: its methods want self
                                         not all(callable(getattr(gpu_profiler, name, None))
                                                 for name in ("get_utilization", "get_memory_usage"))):
            raise ValueError("gpu_profiler must have get_utilization() and get_memory_usage() "
                             f"(GPUProfilerProtocol), got {gpu_profiler!r}")
        for flag, value in (("include_children", include_children), ("reset_peak_mark", reset_peak_mark),
                            ("cgroup_members", cgroup_members)):
            if not isinstance(value, bool):  # "no" and "false" are truthy: a typo must not turn it on
                raise ValueError(f"{flag} must be True or False, got {value!r}")
        if pid is not None and (isinstance(pid, bool) or not isinstance(pid, int) or not 0 < pid <= _MAX_PID):
            raise ValueError(f"pid must be a positive integer up to {_MAX_PID}, got {pid!r}")
        if cgroup_path is not None:
            try:
                cgroup_path = os.fspath(cgroup_path)  # str or bytes: any name the file system has
            except TypeError:  # a ValueError, as every other argument's wrong type is
                raise ValueError(f"cgroup_path must be a path (str, bytes or os.PathLike) or None, "
                                 f"got {cgroup_path!r}") from None
        if cgroup_members and (cgroup_path is None or pid is not None or include_children):
            raise ValueError("cgroup_members needs cgroup_path, and no pid or include_children")
        if include_children and pid is None:
            pid = os.getpid()
        if max_samples is not None and (isinstance(max_samples, bool) or not isinstance(max_samples, int)
                                        or not 0 < max_samples <= sys.maxsize):
            raise ValueError(f"max_samples must be a positive integer up to {sys.maxsize} or None, "
                             f"got {max_samples!r}")
        self._last_mark = ""  # the name of the last mark taken in this window
        self._marks_taken = 0  # marks taken in this window: phase k is mark k (phase 0 is "")
        # phase() made the current phase at a block's end: (its index, when, whether "(after NAME)")
        self._gap: tuple[int, float, bool] | None = None
        self._adjacent_gaps: list[int] = []  # phase()'s gaps that no code filled: folded in summary
        self._monitor = _resmon.Monitor(self._interval, gpu_profiler, gpu, pid or 0, include_children,
                                        max_samples or 0, _metric_bits(metrics), reset_peak_mark, cgroup_path,
                                        cgroup_members, memory_detail_interval)

    def __enter__(self) -> ResourceMonitor:
        """Start background sampling; the first sample is taken before this returns.

        An exception raised here (KeyboardInterrupt while the first sample
        waits for a GPU reading) leaves no sampler running: ``__exit__`` is
        not called then, so the window is closed before it propagates."""
        try:
            self._last_mark = ""
            self._marks_taken, self._adjacent_gaps = 0, []
            self._monitor.start()
            # The unnamed first phase: a phase() block at once after the start leaves it no time.
            self._gap = (0, time.perf_counter(), True)
        except (OSError, ValueError, RuntimeError, MemoryError):
            raise  # start refused: it opened no window (or, EBUSY, not this one)
        except BaseException:  # such as KeyboardInterrupt raised as start returned
            self._monitor.stop()
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        """Stop background sampling; the last sample is taken before this returns."""
        self._note_adjacent_gap()  # a block's "(after NAME)" that the window's end follows at once
        self._monitor.stop()

    @property
    def running(self) -> bool:
        """True while a window is open (False after a monitored process exited)."""
        return self._monitor.running

    @property
    def samples(self) -> list[ResourceSample]:
        """Return a new list of the kept samples, oldest first."""
        return [_sample(*fields) for fields in self._monitor.samples()]

    @property
    def summary(self) -> ResourceSummary:
        """Aggregated metrics of the current (or last) window, or a zeroed
        summary if no sample has been taken; ``phases`` holds its phases
        (see mark); with ``include_children=True``, once the window closed,
        ``processes`` holds its processes (ProcessRecord) and
        ``processes_seen`` how many it saw."""
        phases = tuple(PhaseSummary(name=name, start_sec=start, summary=ResourceSummary(**fields))
                       for name, start, fields in self._monitor.phases())
        phases = _fold_gaps(phases, self._adjacent_gaps)
        found = self._monitor.processes()  # None: one process, or the window still open
        seen, processes = found if found is not None else (None, [])
        return ResourceSummary(**self._monitor.summary(), phases=phases,
                               processes=tuple(ProcessRecord(**dict(zip(_PROCESS_FIELDS, p))) for p in processes),
                               processes_seen=seen)

    def mark(self, name: str) -> bool:
        """resmon only: start the phase ``name`` of the open window.

        The sampler takes a sample at once (microseconds later), which ends
        the current phase and begins this one; the phase lasts until the
        next mark or the window's end.  The time before the first mark is a
        phase named "".  ``summary.phases`` gives each phase's figures.

        Args:
            name: 1 to 63 bytes of UTF-8 without control characters (bidirectional ones included).

        Returns:
            True, or False when the mark was refused: the window already
            holds 256 phases (the last then runs on to the end), 16 marks
            wait for the sampler, or the window is closing (another thread's
            stop has begun).  True means the phase is in the window.

        Raises:
            ValueError: A bad name.
            RuntimeError: No window is open.
        """
        check_name(name)
        taken = bool(self._monitor.mark(name))
        if taken:
            self._last_mark = name  # applied microseconds later: phase() below must not wait for it
            self._marks_taken += 1
            self._gap = None
        return taken

    def _note_adjacent_gap(self) -> None:
        """The current phase is a gap phase() made, and the next mark (or the
        window's end) follows it with no code between: it is no phase of its
        own, summary folds it into its neighbour."""
        if self._gap is not None and time.perf_counter() - self._gap[1] < _ADJACENT_SEC:
            self._adjacent_gaps.append(self._gap[0])
        self._gap = None

    @contextmanager
    def phase(self, name: str) -> Iterator[ResourceMonitor]:
        """resmon only: ``with mon.phase("load"):`` -- the phase ``name`` for
        the block.  When the block ends, the phase that was current when it
        began is marked again (its name: a second entry in
        ``summary.phases``), or, when that was the unnamed first phase, a
        phase named "(after NAME)"; what runs after the block until the next
        mark counts there.  Blocks one after another are each a phase, and
        the time after each until the next block is "(after NAME)" of the
        block before (or the enclosing block's, for blocks within one); such
        a phase, or the unnamed first one, that no code filled (the next block, or the window's end,
        follows within a millisecond) is none: summary.phases folds it into
        its neighbour, so no phase() block leaves a phase of 0 s.  Nothing
        is marked at the end when the window closed inside the block."""
        # The current phase an earlier block's "(after ...)": not one to return to.
        before = "" if self._gap is not None and self._gap[2] else self._last_mark
        self._note_adjacent_gap()
        self.mark(name)
        try:
            yield self
        finally:
            self._note_adjacent_gap()  # an inner block's end, at once followed by this one's
            if self.running and self.mark(before or _after_name(name)):
                self._gap = (self._marks_taken, time.perf_counter(), not before)

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<resmon.ResourceMonitor {state} every {self._interval} s>"


# A gap phase() made that the next mark follows within this is no code's time.
_ADJACENT_SEC = 0.001

# A phase's figures that add up over phases; the rest are peaks (the larger
# counts), or means and states (the block's own stand).
_ADDITIVE = ("duration_sec", "cpu_time_sec", "memory_growth_mb", "gpu_energy_j", "cpu_energy_j", "skipped_slots")


def _fold_gaps(phases: tuple[PhaseSummary, ...], gaps: list[int]) -> tuple[PhaseSummary, ...]:
    """Folds each of the gap phases (indices) into the block after it, or,
    last, the one before: their durations, CPU seconds and totals add up."""
    out = list(phases)
    for index in sorted(set(gaps), reverse=True):
        if not 0 <= index < len(out) or len(out) < 2:
            continue
        gap = out.pop(index)
        at = index if index < len(out) else index - 1
        block = out[at]
        first = gap if at == index else block
        fields = {}
        for key in (f.name for f in dataclasses.fields(block.summary)):
            a, b = getattr(block.summary, key), getattr(gap.summary, key)
            if key == "phases" or b is None or (isinstance(b, float) and math.isnan(b)):
                continue
            if a is None or (isinstance(a, float) and math.isnan(a)):
                fields[key] = b
            elif key in _ADDITIVE or key in _LAST_FOLDED:
                fields[key] = a + b
            elif key == "num_samples":
                fields[key] = a + b - 1  # the sample at the mark was in both
            elif key.startswith("peak_") or key == "cgroup_peak_mb":
                fields[key] = max(a, b)
        summary = dataclasses.replace(block.summary, **fields)
        if summary.duration_sec > 0 and summary.cpu_time_sec is not None:
            summary = dataclasses.replace(summary, mean_cpu_percent=100.0 * summary.cpu_time_sec / summary.duration_sec)
        out[at] = PhaseSummary(name=block.name, start_sec=first.start_sec, summary=summary)
    return tuple(out)


def _after_name(name: str) -> str:
    """"(after NAME)", cut to the 63-byte limit on a character boundary."""
    room = 63 - len("(after )")
    return "(after " + name.encode()[:room].decode("utf-8", "ignore") + ")"


_SAMPLE_FIELDS = ("timestamp", "cpu_percent", "rss_mb", "gpu_util", "gpu_mem_mb", "gpu_clock_mhz", "gpu_power_w",
                  "gpu_proc_mem_mb") + SAMPLE_METRIC_KEYS + ("cgroup_mem_mb",)


def _sample(*values: float | None) -> ResourceSample:
    """A ResourceSample of the C monitor's tuple: the eight fields above, then
    the metric list's (SAMPLE_METRIC_KEYS), then cgroup_mem_mb."""
    return ResourceSample(**dict(zip(_SAMPLE_FIELDS, values)))


def _metric_bits(metrics: str | Iterable[str] | None) -> int:
    if metrics is None:
        return 0
    groups = _resmon.METRIC_GROUPS
    if metrics == "all":
        return sum(groups.values())
    if isinstance(metrics, str):  # one name, not its letters
        metrics = (metrics,)
    if isinstance(metrics, (bytes, bytearray, memoryview)):  # its bytes would be named as numbers
        raise ValueError(f"metrics must be 'all' or an iterable of {sorted(groups)}, got {metrics!r}")
    try:
        names = list(metrics)
    except TypeError:
        raise ValueError(f"metrics must be 'all' or an iterable of {sorted(groups)}, got {metrics!r}") from None
    unknown = [name for name in names if not isinstance(name, str) or name not in groups]
    if unknown:
        raise ValueError(f"unknown metric group(s) {unknown!r}: choose from {sorted(groups)} or 'all'")
    bits = 0
    for name in names:
        bits |= groups[name]
    return bits


@dataclass(frozen=True, slots=True, kw_only=True)
class GPUInfo:
    """A GPU one of resmon's built-in backends found.

    Attributes:
        backend: "nvml", "amd" or "intel".
        index: Index within the backend.
        name: Product name as the driver reports it.
        id: NVML: the UUID; sysfs backends: the PCI address.
        memory_total_mb: Total memory in MiB (None if unknown).
        spec: What ResourceMonitor(gpu=...) takes to open this GPU.
    """

    backend: str
    index: int
    name: str
    id: str
    memory_total_mb: float | None
    spec: str


def list_gpus() -> list[GPUInfo]:
    """List the GPUs resmon's NVML, AMD and Intel backends find (none is not an error)."""
    return [GPUInfo(spec=f"{info['backend']}:{info['index']}", **info) for info in _resmon.list_gpus()]
