"""resmon: measure what Python code costs while it runs -- CPU, memory, GPU.

A drop-in for calibrax's ``calibrax.profiling.resources``: the same
ResourceMonitor, ResourceSample, ResourceSummary and GPUProfilerProtocol,
backed by libresmon's C sampler thread, which takes no GIL per sample::

    from resmon import ResourceMonitor

    with ResourceMonitor(sample_interval_sec=0.01) as mon:
        run_benchmark()
    print(mon.summary.to_dict())

Beyond calibrax: exact peak RSS (``hwm_rss_mb``), CPU means, energy,
monitoring another process tree (``pid=``, ``include_children=``), a bounded
sample store (``max_samples=``) and built-in NVIDIA/AMD/Intel GPU readings
(``gpu="auto"``, ``list_gpus()``), and for a tree the processes that took
the memory and the CPU (``summary.processes``).
"""

from ._marks import mark
from ._monitor import GPUInfo, ResourceMonitor, list_gpus
from ._protocol import GPUProfilerProtocol
from ._records import PhaseSummary, ProcessRecord, ResourceSample, ResourceSummary
from ._resmon import library_version

__all__ = [
    "GPUInfo",
    "GPUProfilerProtocol",
    "PhaseSummary",
    "ProcessRecord",
    "ResourceMonitor",
    "ResourceSample",
    "ResourceSummary",
    "library_version",
    "list_gpus",
    "mark",
]
