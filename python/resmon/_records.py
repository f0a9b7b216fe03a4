"""The records a monitor produces: ResourceSample and ResourceSummary.

They are calibrax's (``calibrax.profiling.resources``) field for field, in
its order, frozen and keyword-only; ``None`` is what the C library calls NAN
(unknown).  resmon's additional measurements are additional optional fields
that default to ``None``, so code that builds these records the calibrax way
keeps working.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, make_dataclass
from typing import Any

from . import _resmon

# The C library's metric list (resmon_metric_info), in its order: the
# metric-group fields of both records are made from it, so a metric the
# library gains is a field here without a line of Python.
METRICS: tuple[dict[str, Any], ...] = _resmon.metrics()
# The summary's cgroup figures (ResourceMonitor(cgroup_path=...)), in the
# JSON's order, from the binding's one table of them.
CGROUP_KEYS: tuple[str, ...] = _resmon.cgroup_fields()


@dataclass(frozen=True, slots=True, kw_only=True)
class _SampleFields:
    """Single resource measurement at a point in time.

    Attributes:
        timestamp: Time of measurement, seconds on the clock of
            ``time.perf_counter()`` (CLOCK_MONOTONIC on Linux).
        cpu_percent: CPU time over wall time since the previous sample, x100
            (above 100 with several busy threads; 0 in a window's first sample).
        rss_mb: Resident set size in MiB.
        gpu_util: GPU utilization percentage (None if no GPU or no reading).
        gpu_mem_mb: GPU memory used in MiB (None if no GPU or no reading).
        gpu_clock_mhz: GPU SM clock in MHz (None if unavailable).
        gpu_power_w: GPU power draw in watts (None if unavailable).
        gpu_proc_mem_mb: resmon only: GPU memory of the monitored process(es)
            in MiB (None if unavailable).

    Then, resmon only, one field per metric of the metric groups
    (``ResourceMonitor(metrics=...)``), named as resmon_sample's field
    (``sample_field`` of each entry of ``resmon._records.METRICS``),
    summed over the monitored processes; None when the group was off.
    Totals count from the window's start.  Last, ``cgroup_mem_mb``: the
    memory charged to the cgroup of ``ResourceMonitor(cgroup_path=...)`` in
    MiB, page cache and kernel memory included (None without a cgroup or a
    reading).
    """

    timestamp: float
    cpu_percent: float
    rss_mb: float
    gpu_util: float | None
    gpu_mem_mb: float | None
    gpu_clock_mhz: float | None = None
    gpu_power_w: float | None = None
    gpu_proc_mem_mb: float | None = None


_SEED_REQUIRED = ("peak_rss_mb", "mean_rss_mb", "peak_gpu_mem_mb", "mean_gpu_util",
                  "memory_growth_mb", "num_samples", "duration_sec")


@dataclass(frozen=True, slots=True, kw_only=True)
class ProcessRecord:
    """One process of a monitored tree (``ResourceMonitor(pid=...,
    include_children=True)``), as the library's samples saw it
    (resmon_monitor_get_processes): ``summary.processes``.

    Sampled: a process that lived less than a sample interval may have no
    record (its CPU is still in the window's ``cpu_time_sec``).  Bounded: the
    64 largest by peak RSS and the 64 largest by CPU are kept;
    ``summary.processes_seen`` counts every process seen.

    Attributes:
        pid: The process.
        ppid: Its parent at its latest reading.
        comm: Its command name (15 bytes at most) at its latest reading.
        start_sec: When it started (the kernel's start time, to a clock
            tick), seconds after the window's first sample; negative when it
            is older than the window.
        end_sec: The last reading that saw it: the window's last for one
            still running; an exited one ended within an interval after.
        cpu_sec: Its CPU time (all its threads, since it started) at its last
            reading, without the children it reaped.
        peak_rss_mb: Its own peak RSS: the larger of its largest sample and
            the kernel's mark (VmHWM) as read.
        end: "running" (alive at the window's end), "exited", or "left" (moved
            out of a monitored cgroup).
        source: "sampled": the figures come from the monitor's readings.
    """

    pid: int
    ppid: int
    comm: str
    start_sec: float
    end_sec: float
    cpu_sec: float
    peak_rss_mb: float
    end: str
    source: str

    def to_dict(self) -> dict[str, Any]:
        """The fields as a JSON-compatible dictionary."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True, slots=True, kw_only=True)
class _SummaryFields:
    """Aggregated resource usage over a monitoring period.

    The first nine fields are calibrax's.  The rest are resmon's and default
    to None (unknown), so ``ResourceSummary(**calibrax_fields)`` works.

    Attributes:
        peak_rss_mb: Maximum sampled RSS, MiB.
        mean_rss_mb: Average RSS across all samples.
        peak_gpu_mem_mb: Maximum GPU memory (None if no GPU).
        mean_gpu_util: Average GPU utilization (None if no GPU).
        memory_growth_mb: Last RSS minus first RSS (positive = growth).
        num_samples: Total samples of the window (including any no longer
            kept because of max_samples).
        duration_sec: Time span of monitoring (0 with fewer than 2 samples).
        mean_gpu_clock_mhz: Average GPU SM clock in MHz (None if unavailable).
        mean_gpu_power_w: Average GPU power draw in watts (None if unavailable).
        mean_cpu_percent: CPU seconds over the window's duration, x100.
        peak_cpu_percent: Largest per-sample CPU percent.
        cpu_time_sec: CPU seconds consumed between the first and last sample.
        hwm_rss_mb: Exact peak RSS from the kernel's high-water mark.
        hwm_scope: "window" (exact for the window) or "lifetime" (the
            process's lifetime peak, which may predate the window: the mark,
            left alone, did not rise in the window, or the reset that
            reset_peak_mark asked for was refused).
        skipped_slots: Schedule slots the sampler missed by running late.
        gpu_energy_j: GPU energy of the window, joules.
        gpu_energy_source: "counter" (the GPU's energy counter: exact) or
            "integrated" (power integrated over the samples).
        cpu_energy_j: CPU package energy from RAPL, joules (usually root only).
        peak_gpu_proc_mem_mb: Peak GPU memory of the monitored processes.

    The rest come from the metric groups (``ResourceMonitor(metrics=...)``),
    one field per metric of the C library's list, named as resmon_summary's
    field and JSON key (``summary_field`` of each entry of
    ``resmon._records.METRICS``, whose ``words`` say what it is), summed over the
    monitored processes; None when the group was off.  Totals count from the
    window's start; peaks are the largest sampled.  peak_unreadable_procs
    above 0 means the group figures are sums over the readable rest.

    With ``ResourceMonitor(cgroup_path=...)``, the cgroup's figures
    (resmon_summary's, over the cgroup's life unless resmon made it):
    ``cgroup_version`` (1 or 2; None without a cgroup), ``cgroup_error`` (0,
    or the negative errno of opening the cgroup, when every figure is None),
    then ``CGROUP_KEYS``: ``cgroup_peak_mb`` (the kernel's peak charged
    memory), ``cgroup_oom_kills``, ``cgroup_throttled_sec``,
    ``cgroup_nr_throttled``, ``cgroup_io_read_bytes``,
    ``cgroup_io_write_bytes`` and ``walk_interval_sec`` (a wide tree in a
    leaf resmon made: the CPU came from the leaf's total and the processes
    were walked this often; None when every sample walked); None where the
    cgroup does not say.
    """

    peak_rss_mb: float
    mean_rss_mb: float
    peak_gpu_mem_mb: float | None
    mean_gpu_util: float | None
    memory_growth_mb: float
    num_samples: int
    duration_sec: float
    mean_gpu_clock_mhz: float | None = None
    mean_gpu_power_w: float | None = None
    mean_cpu_percent: float | None = None
    peak_cpu_percent: float | None = None
    cpu_time_sec: float | None = None
    hwm_rss_mb: float | None = None
    hwm_scope: str | None = None
    skipped_slots: int | None = None
    gpu_energy_j: float | None = None
    gpu_energy_source: str | None = None
    cpu_energy_j: float | None = None
    peak_gpu_proc_mem_mb: float | None = None
    cgroup_version: int | None = None
    cgroup_error: int = 0
    # The window's phases (ResourceMonitor.mark), oldest first; () without marks.
    phases: tuple[PhaseSummary, ...] = ()
    # A tree's processes (include_children=True), once the window closed:
    # the kept records, by peak RSS; processes_seen counts every process the
    # window saw.  () and None otherwise.  Not in to_dict (the library's JSON).
    processes: tuple[ProcessRecord, ...] = ()
    processes_seen: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """Serialize to a JSON-compatible dictionary.

        calibrax's keys in calibrax's order (its optional GPU fields only when
        not None; numbers converted to Python primitives, so NumPy and JAX
        scalars are safe), then resmon's extras, each only when known, in the
        order of ``resmon_summary_to_json``: ``json.dumps`` of the result is
        byte for byte the C library's JSON.  (skipped_slots is written with
        cpu_time_sec, the figures of a measured window.)

        Returns:
            Dictionary representation of the summary.
        """
        d: dict[str, Any] = {
            "peak_rss_mb": float(self.peak_rss_mb),
            "mean_rss_mb": float(self.mean_rss_mb),
            "peak_gpu_mem_mb": _optional_float(self.peak_gpu_mem_mb),
            "mean_gpu_util": _optional_float(self.mean_gpu_util),
            "memory_growth_mb": float(self.memory_growth_mb),
            "num_samples": int(self.num_samples),
            "duration_sec": float(self.duration_sec),
        }
        if self.mean_gpu_clock_mhz is not None:
            d["mean_gpu_clock_mhz"] = float(self.mean_gpu_clock_mhz)
        if self.mean_gpu_power_w is not None:
            d["mean_gpu_power_w"] = float(self.mean_gpu_power_w)
        if _known(self.mean_cpu_percent):
            d["mean_cpu_percent"] = float(self.mean_cpu_percent)
        if _known(self.peak_cpu_percent):
            d["peak_cpu_percent"] = float(self.peak_cpu_percent)
        if _known(self.cpu_time_sec):
            d["cpu_time_sec"] = float(self.cpu_time_sec)
            d["skipped_slots"] = int(self.skipped_slots or 0)
        if _known(self.hwm_rss_mb) and self.hwm_scope is not None:
            d["hwm_rss_mb"] = float(self.hwm_rss_mb)
            d["hwm_scope"] = "window" if self.hwm_scope == "window" else "lifetime"
        if _known(self.gpu_energy_j):
            d["gpu_energy_j"] = float(self.gpu_energy_j)
            d["gpu_energy_source"] = "counter" if self.gpu_energy_source == "counter" else "integrated"
        if _known(self.cpu_energy_j):
            d["cpu_energy_j"] = float(self.cpu_energy_j)
        if _known(self.peak_gpu_proc_mem_mb):
            d["peak_gpu_proc_mem_mb"] = float(self.peak_gpu_proc_mem_mb)
        for key in METRIC_GROUP_KEYS:
            value = getattr(self, key)
            if _known(value):
                d[key] = float(value)
        if self.cgroup_version in (1, 2):
            d["cgroup_version"] = int(self.cgroup_version)
            for key in CGROUP_KEYS:
                value = getattr(self, key)
                if _known(value):
                    d[key] = float(value)
        if self.phases:
            d["phases"] = [phase.to_dict() for phase in self.phases]
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ResourceSummary:
        """Deserialize from a dictionary such as ``to_dict`` writes.

        Keys this class does not know are ignored; optional keys may be
        missing or None.

        Args:
            data: Dictionary with resource summary fields.

        Returns:
            Reconstructed ResourceSummary instance.

        Raises:
            TypeError: data is not a mapping (a dict).
            ValueError: A required key is missing, or a value has the wrong type.
        """
        _require_mapping("ResourceSummary.from_dict", data)
        missing = [key for key in _SEED_REQUIRED if key not in data]
        if missing:
            raise ValueError(f"ResourceSummary.from_dict: missing required key(s) {', '.join(missing)}")
        known = {f.name for f in fields(cls)} - {"phases", "processes", "processes_seen"}
        values = {key: value for key, value in data.items() if key in known}
        for key, value in values.items():
            _check_field(key, value)
        phases = data.get("phases")
        if phases is not None:
            if not isinstance(phases, (list, tuple)) or not all(isinstance(p, Mapping) for p in phases):
                raise ValueError("ResourceSummary.from_dict: phases must be a list of objects")
            values["phases"] = tuple(PhaseSummary.from_dict(p) for p in phases)
        return cls(**values)


def _with_metrics(base: type, name: str, key: str, extra: tuple[str, ...] = ()) -> type:
    """base, frozen, with one optional float field per metric, named by key,
    then one per name of extra."""
    names = [m[key] for m in METRICS] + list(extra)
    made = make_dataclass(name, [(n, float | None, field(default=None)) for n in names], bases=(base,),
                          frozen=True, slots=True, kw_only=True)
    made.__module__, made.__qualname__, made.__doc__ = __name__, name, base.__doc__
    return made


ResourceSample = _with_metrics(_SampleFields, "ResourceSample", "sample_field", ("cgroup_mem_mb",))
ResourceSummary = _with_metrics(_SummaryFields, "ResourceSummary", "summary_field", CGROUP_KEYS)

# The metric-group fields of each record, in the library's order (the JSON's).
SAMPLE_METRIC_KEYS = tuple(m["sample_field"] for m in METRICS)
METRIC_GROUP_KEYS = tuple(m["summary_field"] for m in METRICS)


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseSummary:
    """One phase of a window (ResourceMonitor.mark): its name, its start and
    its own summary, whose fields read through: ``phase.peak_rss_mb``.

    Attributes:
        name: The mark's name; "" for the time before the first mark.
        start_sec: Its first sample, seconds after the window's first.
        summary: The phase's figures by the window's rules (a ResourceSummary
            without phases; duration_sec is the phase's).
    """

    name: str
    start_sec: float
    summary: ResourceSummary

    def __getattr__(self, key: str) -> Any:
        if key in ("summary", "__getstate__", "__setstate__") or key.startswith("__"):
            raise AttributeError(key)
        return getattr(self.summary, key)

    def to_dict(self) -> dict[str, Any]:
        """name, start_sec, then the summary's keys: the C library's JSON of a phase."""
        return {"name": self.name, "start_sec": float(self.start_sec), **self.summary.to_dict()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PhaseSummary:
        """Reads what to_dict writes (and resmon's summary JSON holds under "phases").

        Raises:
            TypeError: data is not a mapping (a dict).
            ValueError: A required key is missing, or a value has the wrong type.
        """
        _require_mapping("PhaseSummary.from_dict", data)
        name, start = data.get("name"), data.get("start_sec")
        if not isinstance(name, str):
            raise ValueError(f"PhaseSummary.from_dict: name must be a string, got {name!r}")
        if isinstance(start, bool) or not isinstance(start, (int, float)):
            raise ValueError(f"PhaseSummary.from_dict: start_sec must be a number, got {start!r}")
        rest = {k: v for k, v in data.items() if k not in ("name", "start_sec", "phases")}
        return cls(name=name, start_sec=_as_double("PhaseSummary.from_dict", "start_sec", start),
                   summary=ResourceSummary.from_dict(rest))


def _require_mapping(where: str, data: Any) -> None:
    """Every from_dict's first check: a string, None or a list is no record
    ("x".get was an AttributeError, None a TypeError about iteration, and a
    string passed the key check by substring: attack 56b, B7)."""
    if not isinstance(data, Mapping):
        raise TypeError(f"{where}: expected a mapping (a dict such as to_dict returns), got {type(data).__name__}")


_TEXT_FIELDS = {"hwm_scope": ("window", "lifetime"), "gpu_energy_source": ("counter", "integrated")}
_COUNT_FIELDS = ("num_samples", "skipped_slots")
_NULLABLE_REQUIRED = ("peak_gpu_mem_mb", "mean_gpu_util")


def _check_field(key: str, value: Any) -> None:
    if value is None:
        if key in _SEED_REQUIRED and key not in _NULLABLE_REQUIRED:
            raise ValueError(f"ResourceSummary.from_dict: {key} is required, got None")
        return
    if key in _TEXT_FIELDS:
        if value not in _TEXT_FIELDS[key]:
            raise ValueError(f"ResourceSummary.from_dict: {key} must be one of {_TEXT_FIELDS[key]}, got {value!r}")
    elif key == "cgroup_version":
        if value not in (1, 2) or isinstance(value, bool):
            raise ValueError(f"ResourceSummary.from_dict: cgroup_version must be 1, 2 or None, got {value!r}")
    elif key == "cgroup_error":
        if isinstance(value, bool) or not isinstance(value, int) or value > 0:
            raise ValueError(f"ResourceSummary.from_dict: cgroup_error must be 0 or a negative errno, got {value!r}")
    elif key in _COUNT_FIELDS:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"ResourceSummary.from_dict: {key} must be a non-negative integer, got {value!r}")
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"ResourceSummary.from_dict: {key} must be a number, got {value!r}")
    else:
        _as_double("ResourceSummary.from_dict", key, value)


def _as_double(who: str, key: str, value: int | float) -> float:
    """value as a float; an integer past the largest double (10**400) is a
    ValueError naming the key, never an OverflowError from deep inside."""
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{who}: {key} is too large for a number of the summary, got an integer of "
                         f"{len(str(abs(value)))} digits") from None


def _optional_float(value: float | None) -> float | None:
    return float(value) if value is not None else None


def _known(value: float | None) -> bool:
    return value is not None and math.isfinite(value)
