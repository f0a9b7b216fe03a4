"""What the tests learn from the kernel about this process's threads."""

import os
import subprocess
import sys
import tempfile


# The bound of a wait for an event that normally comes at once: it must hold
# whatever load arrives on the machine meanwhile (a fresh-clone CI run's
# busy-loop stage scales it by RESMON_TEST_TIME_FACTOR); a wait that passes
# returns as soon as its event comes, so its bound costs nothing.
SAFETY_SEC = 60 * float(os.environ.get("RESMON_TEST_TIME_FACTOR", "1"))


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


def count_named_settled(name: str, expected: int, timeout: float = SAFETY_SEC) -> int:
    """count_named once threads that were joined have left /proc: pthread_join
    returns when the kernel clears the thread's id, which it does in the
    middle of the thread's exit, before its task is released -- for a few
    microseconds (longer on a busy machine) a joined thread is still listed.
    Polls until the count is the expected one or the timeout passes; returns
    the last count (CI of stop 46 saw a joined sampler listed)."""
    import time
    deadline = time.monotonic() + timeout
    count = count_named(name)
    while count != expected and time.monotonic() < deadline:
        time.sleep(0.001)
        count = count_named(name)
    return count


def run_python(code: str, timeout: float = SAFETY_SEC, **kwargs) -> "subprocess.CompletedProcess[str]":
    """Runs code in a fresh interpreter (this one's), from / so that the
    installed resmon is imported, not the source tree next to the tests."""
    return subprocess.run([sys.executable, "-c", code], cwd="/", timeout=timeout, text=True,
                          capture_output=True, **kwargs)


def bind_mount(request, source, target) -> None:
    """Bind-mounts source over target (a directory or a single file, as
    Docker's -v does) for the test that asked (request: its pytest request),
    unmounted in its teardown; skips, saying why, where mounting is not
    permitted (not root, no CAP_SYS_ADMIN, a seccomp filter, no mount(8))."""
    import pytest
    try:
        done = subprocess.run(["mount", "--bind", str(source), str(target)], capture_output=True, text=True,
                              timeout=SAFETY_SEC, stdin=subprocess.DEVNULL)
    except OSError as error:
        pytest.skip(f"cannot run mount(8): {error}")
    if done.returncode != 0:
        pytest.skip(f"a bind mount is not permitted here (needs root): {done.stderr.strip()[-200:]}")

    def unmount():
        done = subprocess.run(["umount", str(target)], capture_output=True, text=True, timeout=SAFETY_SEC,
                              stdin=subprocess.DEVNULL)
        if done.returncode != 0:  # busy: detached now, and the teardown says so
            subprocess.run(["umount", "-l", str(target)], capture_output=True, timeout=SAFETY_SEC,
                           stdin=subprocess.DEVNULL)
            raise AssertionError(f"umount {target}: {done.stderr.strip()}")

    request.addfinalizer(unmount)


def can_reach(uid: int, path) -> bool:
    """Whether user uid may reach path: search rights on every directory
    above it, and execute rights on path itself -- search, for a directory
    (access(2) as that user, in a child; root only: another process cannot
    become uid, and False is said)."""
    if os.geteuid() != 0:
        return False

    def become():
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    try:
        return subprocess.run(["test", "-x", os.fspath(path)], preexec_fn=become, stdin=subprocess.DEVNULL,
                              timeout=SAFETY_SEC).returncode == 0
    except subprocess.SubprocessError:  # root that cannot become uid (a user namespace): said False, as not root
        return False


# Where a directory for another user goes when the temporary directory
# (TMPDIR) is closed to that user: a private TMPDIR (0700, or under /root).
SHARED_BASES = ("/tmp", "/var/tmp", "/dev/shm")


def reachable_tempdir(uid: int, prefix: str = "resmon-") -> "tempfile.TemporaryDirectory[str]":
    """A new temporary directory (mode 0755; use it as a context manager)
    user uid can reach: in the temporary directory (TMPDIR) where that user
    can reach it, else in the first of SHARED_BASES it can.  Skips the
    test, saying why, where it can reach none: a test that needs another
    user gets there or skips, it never fails on a directory closed to that
    user."""
    import pytest
    tried = []
    for base in dict.fromkeys((tempfile.gettempdir(), *SHARED_BASES)):
        if os.path.isdir(base) and can_reach(uid, base):
            directory = tempfile.TemporaryDirectory(prefix=prefix, dir=base)
            os.chmod(directory.name, 0o755)
            return directory
        tried.append(base)
    pytest.skip(f"user {uid} can reach none of {', '.join(tried)} (search rights on every directory above): "
                "no directory to share with it")
