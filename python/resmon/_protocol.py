"""GPUProfilerProtocol: what a Python GPU profiler provides (calibrax's)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class GPUProfilerProtocol(Protocol):
    """Protocol for GPU profilers providing utilization and memory data.

    resmon calls these on the monitor's GPU thread, holding the GIL only for
    each call.  A method that raises, returns the wrong type, leaves out the
    key, or gives NaN, infinity or a negative number makes that field None in
    that sample; the monitor carries on.  A slow method delays only GPU
    readings, never CPU/RSS samples.
    """

    def get_utilization(self) -> float:
        """Get current GPU utilization percentage (0-100)."""
        ...

    def get_memory_usage(self) -> dict[str, float]:
        """Get current GPU memory usage: at least 'gpu_memory_used_mb'
        (and optionally 'gpu_memory_total_mb')."""
        ...

    def get_clock_info(self) -> dict[str, float]:
        """Get current GPU clocks: 'gpu_clock_mhz' and 'mem_clock_mhz'."""
        ...

    def get_power_info(self) -> dict[str, float]:
        """Get current GPU power: 'power_draw_w' and 'power_limit_w'."""
        ...
