"""What the command's test files share (tests/cli/test_*.py import it).

ctest runs each file as `python3 tests/cli/test_X.py` (tests/CMakeLists.txt),
so this directory is sys.path[0] whatever the working directory; the
environment (RESMON, WORKLOAD, ...) comes from the test's ENVIRONMENT there.
"""
import os
import select
import signal
import subprocess
import time

# A test run started as a background job (a non-interactive shell's `&`) has
# SIGINT and SIGQUIT ignored, and an ignored signal stays ignored across exec:
# the commands these tests start get the default dispositions back.  Done on
# import, before any test starts a command.
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGQUIT, signal.SIG_DFL)

RESMON = os.environ["RESMON"]
WORKLOAD = os.environ["WORKLOAD"]
SANITIZED = os.environ.get("RESMON_TEST_SANITIZED") == "1"
SAFETY_NET_SEC = 60  # a wait on a workload that never comes fails here, not at ctest's timeout


def time_factor():
    """How much longer than on an idle machine a time bound may take, from
    RESMON_TEST_TIME_FACTOR (default 1; scripts/test-busy sets 10), as in
    tests/test_util.h.  Only bounds whose point is time scale with it; the
    rest synchronise with the workload."""
    text = os.environ.get("RESMON_TEST_TIME_FACTOR") or "1"
    factor = float(text)
    if not 1 <= factor <= 1000:
        raise ValueError(f"RESMON_TEST_TIME_FACTOR={text!r}: expected a number from 1 to 1000")
    return factor


TIME_FACTOR = time_factor()


def resmon(*args, timeout=60, **kw):
    """Runs the command to its end; its output as text."""
    return subprocess.run([RESMON, *args], capture_output=True, text=True, timeout=timeout, **kw)


class Ready:
    """A pipe the workload writes once it is ready (WORKLOAD_READY_FD in
    tests/cli/workload.c): memory touched, handler installed, spinning done."""

    def __init__(self):
        self.read_fd, self.write_fd = os.pipe()

    def popen_args(self):
        return {"pass_fds": (self.write_fd,), "env": dict(os.environ, WORKLOAD_READY_FD=str(self.write_fd))}

    def wait(self, count=1):
        """Call after starting the processes: waits for `count` of them."""
        os.close(self.write_fd)
        deadline = time.monotonic() + SAFETY_NET_SEC
        got = b""
        while len(got) < count and time.monotonic() < deadline:
            readable, _, _ = select.select([self.read_fd], [], [], deadline - time.monotonic())
            chunk = os.read(self.read_fd, count - len(got)) if readable else b""
            if not chunk:
                break
            got += chunk
        os.close(self.read_fd)
        if len(got) < count:
            raise AssertionError(f"only {len(got)} of {count} workload processes became ready")
