"""What the command's test files share (tests/cli/test_*.py import it).

ctest runs each file as `python3 tests/cli/test_X.py` (tests/CMakeLists.txt),
so this directory is sys.path[0] whatever the working directory; the
environment (RESMON, WORKLOAD, ...) comes from the test's ENVIRONMENT there.
"""
import os
import select
import shutil
import signal
import stat
import subprocess
import tempfile
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
# A wait on a workload that never comes, or on a command that never ends,
# fails here, not at ctest's timeout.  A safety net, not a bound on speed:
# load may arrive after the factor was chosen (a factor of 1 on a quiet
# machine, then six busy loops: `resmon compare` on a large report, 6.6 s of
# CPU, took 70 s at load 13), so it is never scaled by less than 5, as
# tests/scale_timeouts.cmake scales ctest's limits.
LOAD_MARGIN = 5
SAFETY_NET_SEC = 60 * max(TIME_FACTOR, LOAD_MARGIN)


NOBODY = 65534


def can_reach(uid, path):
    """Whether user `uid` may reach `path`: search rights on every directory
    above it, and execute rights on path itself -- search, for a directory
    (access(2) as that user, in a child).  Not root, this process cannot
    become `uid`: the rights of "others" on each of them then (the mode
    bits, as resmon's marks channel reads them)."""
    def by_mode_bits():
        real = os.path.realpath(path)
        prefixes = [real[:i] or "/" for i in range(len(real)) if real[i] == "/"] + [real]
        try:
            return all(os.stat(prefix).st_mode & stat.S_IXOTH for prefix in prefixes)
        except OSError:
            return False
    if os.geteuid() != 0:
        return by_mode_bits()
    try:
        return subprocess.run(["test", "-x", path], preexec_fn=lambda: os.setuid(uid), timeout=SAFETY_NET_SEC,
                              stdin=subprocess.DEVNULL).returncode == 0
    except subprocess.SubprocessError:  # root that cannot become uid (a user namespace): the mode bits, as not root
        return by_mode_bits()


# Where a directory for another user goes when the temporary directory
# (TMPDIR) is closed to that user: a private TMPDIR (0700, or under /root).
SHARED_BASES = ("/tmp", "/var/tmp", "/dev/shm")


def reachable_dir(test, uid, mode=0o755, prefix="resmon-as-user-"):
    """A new temporary directory (a tempfile.TemporaryDirectory, removed
    when `test` ends) with mode `mode`, that user `uid` can reach: in the
    temporary directory (TMPDIR) where that user can reach it, else in the
    first of SHARED_BASES it can.  Skips `test`, saying why, where it can
    reach none: a test that needs another user gets there or skips, it
    never fails or errors on a directory closed to that user."""
    tried = []
    for base in dict.fromkeys((tempfile.gettempdir(), *SHARED_BASES)):
        if os.path.isdir(base) and can_reach(uid, base):
            directory = tempfile.TemporaryDirectory(prefix=prefix, dir=base)
            test.addCleanup(directory.cleanup)
            os.chmod(directory.name, mode)
            return directory
        tried.append(base)
    test.skipTest(f"user {uid} can reach none of {', '.join(tried)} (search rights on every directory above): "
                  "no directory to share with it")


def program_for(test, uid, path):
    """The path at which user `uid` runs the program at `path`: the path
    itself, or, where a directory above it keeps that user out (a checkout
    under /root, mode 0700, built as the README says), a copy in a directory
    that user can reach (reachable_dir), removed when the test ends.  resmon
    and the workload link resmon statically, so the copy runs alone.  Skips
    `test`, saying why, where neither can be run: a test that needs another
    user gets there or skips, it never errors."""
    if can_reach(uid, path):
        return path
    directory = reachable_dir(test, uid).name
    copy = os.path.join(directory, os.path.basename(path))
    shutil.copy(path, copy)
    os.chmod(copy, 0o755)
    if not can_reach(uid, copy):
        test.skipTest(f"user {uid} can run neither {path} (a directory above it is closed to it) "
                      f"nor a copy in {directory}")
    return copy


def require_strace(test):
    """Skips `test`, saying why, where strace cannot trace a command here:
    not installed (scripts/deps installs it), or ptrace refused (a seccomp
    filter, Yama).  Tests that count what resmon did use it."""
    if not shutil.which("strace"):
        test.skipTest("strace is not installed (scripts/deps installs it)")
    probe = subprocess.run(["strace", "-qq", "-o", "/dev/null", "true"], capture_output=True, text=True,
                           timeout=SAFETY_NET_SEC)
    if probe.returncode != 0:
        test.skipTest(f"strace cannot trace here: {probe.stderr.strip()[-200:]}")


def fill_pipe(fd):
    """Writes to pipe fd, made non-blocking, until it is full (it stays
    non-blocking); returns how many bytes it took."""
    os.set_blocking(fd, False)
    filled = 0
    try:
        while True:
            filled += os.write(fd, b"x" * 4096)
    except BlockingIOError:
        pass
    return filled


def resmon(*args, timeout=SAFETY_NET_SEC, **kw):
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


def sticky_with_links(sticky, links, owner=65534):
    """Makes sticky a directory every user may write (mode 1777, as /tmp)
    holding links (name -> target) owned by owner (nobody): another user's
    links there, which the protected_symlinks rule refuses to follow."""
    os.mkdir(sticky)
    os.chmod(sticky, 0o1777)
    for name, target in links.items():
        os.symlink(target, os.path.join(sticky, name))
        os.lchown(os.path.join(sticky, name), owner, owner)
    return sticky
