"""What the tests learn from the kernel about this process's threads."""

import os
import subprocess
import sys


def thread_names() -> list[str]:
    """The names (comm) of this process's threads, from /proc."""
    names = []
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                names.append(f.read().strip())
        except FileNotFoundError:  # the thread ended while we listed
            pass
    return names


def count_named(name: str) -> int:
    return sum(1 for n in thread_names() if n == name)


def run_python(code: str, timeout: float = 60, **kwargs) -> "subprocess.CompletedProcess[str]":
    """Runs code in a fresh interpreter (this one's), from / so that the
    installed resmon is imported, not the source tree next to the tests."""
    return subprocess.run([sys.executable, "-c", code], cwd="/", timeout=timeout, text=True,
                          capture_output=True, **kwargs)
