"""The library's range of sampling intervals, checked in Python: used by
ResourceMonitor and by the pytest plugin at start-up, where the extension
is not loaded yet (an ini value outside it failed every measured test,
attack 59)."""

from __future__ import annotations

import math
import numbers

MIN_INTERVAL_SEC = 1e-6
MAX_INTERVAL_SEC = 1e6


def checked_interval(value: object, name: str = "sample_interval_sec") -> float:
    """value as seconds, or ValueError naming name."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number of seconds, got {value!r}")
    try:
        interval = float(value)
    except OverflowError:  # an int beyond any double, such as 10**400
        raise ValueError(f"{name} must be finite, got {value!r}") from None
    if not math.isfinite(interval):
        raise ValueError(f"{name} must be finite, got {interval}")
    if interval <= 0:
        raise ValueError(f"{name} must be positive, got {interval}")
    if not MIN_INTERVAL_SEC <= interval <= MAX_INTERVAL_SEC:
        raise ValueError(f"{name} must be between {MIN_INTERVAL_SEC} and {MAX_INTERVAL_SEC}, got {interval}")
    return interval
