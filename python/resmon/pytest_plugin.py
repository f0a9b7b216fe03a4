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

    # a gate: this session against a baseline report, by resmon compare's
    # own engine; a limit exceeded fails the session (exit status 1)
    pytest --resmon-compare=base.json --resmon-compare-fail=rss_growth_mb=10%,8

    # pytest.ini / [tool.pytest.ini_options]: a limit for every test
    resmon_limit = rss_growth_mb=500

What a record covers: the test's call phase only (the test function's body),
not its fixtures' setup and teardown.  What pytest holds when the call begins
(``rss_start_mb``: a fixture's, a conftest's) is the base and never charged.

How: where a leaf memory cgroup can be made (root, or a delegated subtree;
ini ``resmon_cgroup = no`` turns it off), the pytest process joins a leaf of
the test's own for the call and leaves it (removed) at the end; every page
the test's processes newly touch is charged there once, the test's own and
its children's (forked, spawned, double-forked; a forked child's inherited
pages only if it writes them): ``"measured_by": "cgroup"``.  Elsewhere the
process tree's PSS is sampled (``"measured_by": "sampled-tree"``: each page
once, but only what a sample sees; a double-forked grandchild leaves the tree
and is not seen; ``cgroup_error`` says why no leaf).  Its figures, which add
up:

``rss_growth_mb``
    What the test added at its peak (the C heap's free memory is handed back
    to the kernel before a call when the process's RSS rose by a MiB since
    the last time, glibc's ``malloc_trim``, so that what an earlier test
    freed is not reused unseen; memory the process still holds and reuses --
    a cache, another allocator's pool -- is not added): the
    larger of the pytest process's
    exact rise (VmHWM minus ``rss_start_mb``: in a leaf when the mark rose in
    the call, else reset when the call begins by writing 5 to
    /proc/self/clear_refs) and the leaf's exact
    peak (``cgroup_peak_mb``).
``peak_rss_mb``
    ``rss_start_mb + rss_growth_mb``.
``retained_mb``
    What the test still held when it returned (the leaf's charge then, or
    the process's RSS rise), at most ``rss_growth_mb``.
    The leaf is charged with the page cache of files the test writes or
    reads too (no RSS holds it, the kernel drops it at will): what of it is
    still cached at the end (``cgroup_file_mb``) is taken out of the leaf's
    peak and charge; over 1 MiB of it makes ``exact`` false.  Page cache
    freed before the end (a file written and deleted, or dropped by the
    kernel) stays in the leaf's peak, and no memory.stat (v1 or v2) counts
    it after the fact, so ``exact`` is false too when the pytest process
    and the children reaped in the call read from storage or dirtied over
    1 MiB of file pages (``file_io_mb``: read_bytes + write_bytes of
    /proc/self/io, absent where the kernel does not count them), or when
    the leaf's peak less ``cgroup_file_mb`` exceeds what any RSS was seen
    to hold (the pytest process's exact rise, the sampled tree's) by more
    than 4 MiB and 1/16 of it (``cgroup_unseen_mb``: the page cache of a
    child running at the end or double-forked, tmpfs files, kernel memory,
    or a peak between two samples).  ``rss_growth_mb`` is then an upper
    bound, the leaf's peak, and a limit judges that.
``exact``
    True when the figures above are the kernel's, not samples
    (``peak_rss_exact``: the process's own mark could be reset), and in a
    leaf hold no page cache as far as can be told (above).
``tree_peak_rss_mb``
    The sampled peak RSS of the whole process tree during the call (sum over
    the processes alive at each sample; pages shared after fork in each).
``cpu_sec``
    User + system CPU seconds from the kernel (getrusage): the pytest
    process (all its threads, resmon's sampler thread included) and every
    child that ended in the call: reaped in it, or left unreaped (a zombie,
    whose CPU is read from /proc/PID/stat, to the clock tick); children
    still running at the end are not in it.  A child reaped in the call
    that ended before it (an earlier test's zombie) is taken out: each
    test is charged with what its own children used, whichever test reaps
    them.  Each such zombie's CPU is known to the clock tick only: then
    ``cpu_sec_exact`` is false, ``cpu_sec_error_sec`` says by how much the
    figure may be off (a tick a zombie), and a limit judges ``cpu_sec``
    less it.  A child reaped just as the call's CPU clock is read may be in it
    or not: then ``cpu_sec_exact`` is false, ``cpu_sec_unsure`` names the
    child, a warning says so and no limit on ``cpu_sec`` is applied.
    In a leaf, ``cgroup_cpu_sec`` is the leaf's own CPU clock: every process
    that ran in it during the call, a double-forked grandchild too (no
    getrusage of this process counts it) and children still running at the
    end (their CPU so far).  Where it exceeds getrusage's figure by more
    than a clock tick (and one for each zombie charged), ``cpu_sec`` is
    ``cgroup_cpu_sec``, the figure a limit and a gate judge
    (``cpu_sec_exact`` false; getrusage's kept as ``cpu_sec_rusage``).
    Exact: the name the command gives the kernel's CPU seconds
    (``cpu_sec``), where ``cpu_time_sec`` is the sampled figure; a limit
    still named ``cpu_time_sec`` is refused with a word on the new name.
``wall_sec``
    Wall-clock seconds of the call.
``peak_gpu_mem_mb``, ``gpu_energy_j``
    Only when a GPU is measured (ini ``resmon_gpu = auto`` or a device such
    as ``nvml:0``): the device's peak memory used and its energy in the call.

Peak mark: where a test runs in a leaf cgroup, the pytest process's peak-RSS
mark (VmHWM, ``ru_maxrss``) is left alone, so a parent such as
``resmon -- pytest`` or ``/usr/bin/time`` still reports the session's exact
peak.  Without a leaf (``resmon_cgroup = no``, no cgroup to make) measuring a
test resets the mark at the call's start -- the one exact figure of the
process's own rise there is -- and such a parent then reports the peak since
the last measured test began, not the session's.

Leaving the leaf: a test may move its processes out of its leaf (root, or
a delegated subtree, may write any cgroup.procs), and what they touch there
is charged elsewhere.  Where the pytest process is outside the leaf at the
call's end, a process the test started runs outside it then, or the pytest
process and the children reaped in the call took more than 256 page faults
that the leaf did not count (a process moved out and back, or run and
reaped outside it), the record names them (``left_leaf``, a warning), is not
``exact``, and ``rss_growth_mb`` (and ``peak_rss_mb``) is the sampled tree's
rise where that is larger: the figure a limit and a gate judge.  A child
reaped in the call has its CPU in ``cpu_sec`` wherever it ran; one left
running outside the leaf is named left, and its CPU so far is added to
``cpu_sec`` (``cpu_sec_exact`` false).  A process that leaves the tree too
(double-forked) as well as the leaf is seen by nothing.

Work left running when a test returns (threads, processes) is named in its
record (``left_running``) and a warning, and not charged to a later test: a
child leaves the leaf with its test, and a later test that runs beside such
work names it (``overlapped_by``, a warning) and gets no limit on the figures
that work can enter: ``cpu_sec`` where such a process ended in the call or
they ran over 10 ms in all (an idle one is in no CPU figure) and, in a leaf,
``tree_peak_rss_mb`` (the
sampled tree); outside a leaf, or beside a thread, every memory figure too.
In a leaf, beside a process, every memory figure too (and ``exact`` is
false) when that process started processes during the call (by the
monitor's kept records) and the sampled tree rose more than the leaf was
charged: such work may have done the test's outside the leaf (the pool
workers of a forkserver an earlier test started).  An idle process beside
(a session fixture's server) takes no more than the figures it can enter.
The figures no limit judges are listed in the record (``unjudged``: with the
memory figures every host memory key, the leaf's too, with ``cpu_sec``
``cgroup_cpu_sec``; a forkserver beside that started processes takes
``cpu_sec`` too); a gate
(``--resmon-compare``, ``resmon compare``) leaves them out of that run.

Under pytest-xdist each worker measures its own tests (its own process and
its children); the records travel with the test reports, so the controller's
``--resmon`` table and ``--resmon-json`` report hold every worker's tests.

``--resmon-compare BASELINE`` measures every test and, at the session's end
(in the controller), compares this session's report with BASELINE (a
``--resmon-json`` report, or a directory of them) by running ``resmon
compare``'s own engine, compiled into the extension: ``_resmon.compare``.  The
limits (``--resmon-compare-fail``, repeatable, and the ini's
``resmon_compare_fail``, whose limit of a KEY the command line's replaces; a
KEY given two different limits is refused) are its ``--max-increase`` limits, spelled
the same: ``KEY=N%``, ``KEY=N`` or ``KEY=N%,M``; a KEY names that figure in
every test, ``NODEID::KEY`` one test's.  The verdict is printed at the end;
a limit exceeded fails the session (exit status 1), and BASELINE or a limit
that the engine refuses is a usage error before any test runs.  A limit that
judges nothing is named: on a test this session did not measure, a warning;
otherwise it fails the session (exit status 1).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import math
import os
import platform
import re
import resource
import socket
import sys
import tempfile
import threading
import time
from stat import S_ISDIR
from typing import Any

import pytest

from . import _output
from ._intervals import checked_interval

# The keys of a record that a limit may name, in the record's order.
LIMIT_KEYS = ("rss_growth_mb", "peak_rss_mb", "retained_mb", "tree_peak_rss_mb", "cpu_sec",
              "wall_sec", "peak_gpu_mem_mb", "gpu_energy_j")
# The figures that work left running by an earlier test can inflate.
MEMORY_KEYS = ("rss_growth_mb", "peak_rss_mb", "retained_mb", "tree_peak_rss_mb")
_PROPERTY = "resmon"  # the name of the record among a report's user_properties
_DEFAULT_INTERVAL_SEC = 0.01
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100  # /proc/PID/stat's time unit
# resmon_cgroup's words (case and spaces aside); anything else is refused.
_CGROUP_ON = ("auto", "yes", "on", "true", "1")
_CGROUP_OFF = ("no", "off", "false", "0", "none")


class _GivenOnce(argparse.Action):
    """Stores an option's one value.  pytest's parser keeps the last of
    two, so "--resmon-json=b --resmon-json=c" wrote c alone without a word;
    a second, different value is noted for pytest_configure to refuse as a
    usage error (argparse's own error would print its usage too)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        old = getattr(namespace, self.dest, None)
        if old is not None and old != values and not getattr(namespace, "resmon_given_twice", None):
            namespace.resmon_given_twice = f"resmon: {option_string} given twice ({values!r} after {old!r}): give it once"
        setattr(namespace, self.dest, values)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("resmon", "resmon: per-test memory and CPU")
    group.addoption("--resmon", action="store_true", default=False,
                    help="measure every test; print the heaviest by memory growth and by CPU at the end. "
                         "rss_growth_mb: what the test (with its children) added at its peak over pytest's RSS "
                         "at the call's start (rss_start_mb, never charged); peak_rss_mb = rss_start_mb + "
                         "rss_growth_mb; retained_mb: what it still held when it returned (<= rss_growth_mb); "
                         "measured_by: cgroup (a leaf of the test's own: exact, each page once) or sampled-tree")
    group.addoption("--resmon-top", type=int, default=10, metavar="N",
                    help="how many tests --resmon lists (default 10)")
    group.addoption("--resmon-json", metavar="PATH", default=None, action=_GivenOnce,
                    help="measure every test; write each test's record, keyed by node id, to PATH")
    group.addoption("--resmon-compare", metavar="BASELINE", default=None, action=_GivenOnce,
                    help="measure every test and compare the session with BASELINE (a --resmon-json report or "
                         "a directory of them) by resmon compare's own engine; its verdict at the end, and a "
                         "limit exceeded fails the session (exit status 1)")
    group.addoption("--resmon-compare-fail", metavar="KEY=LIMIT", action="append", default=[],
                    help="with --resmon-compare: fail when KEY rises by more than LIMIT, spelled as resmon "
                         "compare's --max-increase: N%% (of BASELINE), N (KEY's unit) or N%%,M (both); KEY alone "
                         "(rss_growth_mb) names it in every test, NODEID::KEY one test's; repeatable, one limit a "
                         "KEY; a KEY given here replaces the ini's resmon_compare_fail limit of it")
    parser.addini("resmon_limit", type="args", default=[],
                  help="limits for every test, KEY=VALUE (e.g. rss_growth_mb=500); the marker overrides")
    parser.addini("resmon_compare_fail", type="args", default=[],
                  help="limits for --resmon-compare, each KEY=LIMIT as --resmon-compare-fail "
                       "(e.g. rss_growth_mb=10%,8 cpu_sec=30%,0.5)")
    parser.addini("resmon_interval", default=str(_DEFAULT_INTERVAL_SEC),
                  help="seconds between samples of the process tree (default 0.01)")
    parser.addini("resmon_cgroup", default="auto",
                  help="auto (default): measure each test in a leaf memory cgroup of its own where one can be "
                       "made (exact, each page once); no (or none, off): sample the process tree instead; "
                       "any other value is refused")
    parser.addini("resmon_gpu", default="none",
                  help="GPU to measure: none (default), auto, all, or a device such as nvml:0")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "resmon_limit(**limits): fail the test when a figure of its resmon record exceeds its limit, "
        f"e.g. rss_growth_mb=200 (keys: {', '.join(LIMIT_KEYS)}; None lifts an ini limit)")
    if getattr(config.option, "resmon_given_twice", None):
        raise pytest.UsageError(config.option.resmon_given_twice)
    try:
        default_limits = _parse_ini_limits(config.getini("resmon_limit"))
        interval = _decimal(str(config.getini("resmon_interval")))
        if not math.isfinite(interval) or interval <= 0:
            raise ValueError
        # the library's range, refused here once, not by every measured test
        checked_interval(interval, "resmon_interval")
    except ValueError as error:
        raise pytest.UsageError(f"resmon: {error}" if str(error) else
                                "resmon: resmon_interval must be a positive number of seconds") from None
    cgroup = config.getini("resmon_cgroup").strip().lower()
    if cgroup not in _CGROUP_ON + _CGROUP_OFF:  # "none" or a typo must not measure otherwise than asked
        raise pytest.UsageError(f"resmon: resmon_cgroup = {config.getini('resmon_cgroup')!r}: auto or no")
    if config.getoption("resmon_top") < 0:
        raise pytest.UsageError("resmon: --resmon-top must be 0 or more")
    json_path = config.getoption("resmon_json")
    json_place = None
    if json_path == "":  # "--resmon-json=$OUT" with OUT unset: no report, and a CI gate reading a stale one
        raise pytest.UsageError("resmon: --resmon-json needs a PATH (it was empty)")
    if json_path == "-":  # the command's "-o -"; here the report would be glued into pytest's own output
        raise pytest.UsageError("resmon: --resmon-json needs a file: '-' (standard output) would mix the report "
                                "with pytest's output; give /dev/stdout to write it there anyway")
    if json_path and not _is_worker(config):
        try:  # refused before any test runs, as the command refuses before the command starts
            json_place = _output.hold(json_path)  # and written at the end where it led now
        except OSError as error:
            raise pytest.UsageError(f"resmon: cannot write --resmon-json {json_path!r}: {error.strerror}") from None
    try:
        compare = _compare_setup(config)
    except BaseException:
        if json_place is not None:
            json_place.close()
        raise
    config.pluginmanager.register(_Session(config, default_limits, interval, compare, json_place), "resmon-session")


_exit_seen = False  # pytest.exit() stopped the session (this module's hook below)


def pytest_keyboard_interrupt(excinfo: Any) -> None:
    global _exit_seen
    _exit_seen = _exit_seen or isinstance(excinfo.value, pytest.exit.Exception)


# pytest's options under which no test runs: --collect-only, --fixtures,
# --fixtures-per-test, --setup-plan, --setup-only.  Nothing is judged then,
# never a failure (--setup-plan failed the session, review 62; --fixtures
# said "this fails the session" and exited 0: its exit is pytest's own).
_NO_TEST_RUNS = ("collectonly", "showfixtures", "show_fixtures_per_test", "setupplan", "setuponly")


def pytest_unconfigure(config: pytest.Config) -> None:
    # pytest.exit() in a conftest's pytest_configure, before this plugin's
    # (the session's plugin was never made): nothing ran and nothing was
    # judged, yet the session would exit with pytest.exit's status -- 0
    # passed the gate (review 61).  A usage error or a crash already fails;
    # Ctrl-C exits 2 (review 62: it was said to be pytest.exit).
    global _exit_seen
    stopped, _exit_seen = _exit_seen, False  # pytest.main may run again in this process
    if not stopped or not config.getoption("resmon_compare", None) or _is_worker(config):
        return
    if config.pluginmanager.get_plugin("resmon-session") is not None:
        return  # the session's plugin judges, or says why not
    session = config.pluginmanager.get_plugin("session")
    if session is not None and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        sys.stderr.write(_fail_stopped_short(session, " before resmon started"))


def _fail_stopped_short(session: pytest.Session, when: str = "") -> str:
    """pytest.exit() ended the session before its tests were all run:
    nothing is judged, and the gate fails it whatever status pytest.exit
    chose -- a gate passes only what it judged (review 60: returncode=0
    after one test of three passed the gate, exit 0).  Returns the line
    that says so."""
    if session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    return (f"resmon: --resmon-compare: the session was stopped short (pytest.exit){when}: nothing judged, and a "
            "gate never passes what it did not judge\n")


def _compare_setup(config: pytest.Config) -> tuple[list[str], frozenset[str], frozenset[str]] | None:
    """--resmon-compare's arguments for the engine, less the two inputs,
    BASELINE's rows (NODEID::KEY, numeric in each of its reports) and its
    tests (each report's node ids); None
    without it.  In the controller, BASELINE and the limits are checked at
    once, so a limit the engine refuses or a BASELINE that is no pytest
    report is a usage error before any test runs, in the engine's own words
    where it has some.  BASELINE is never compared with itself: twice its
    size could pass the engine's memory bound that BASELINE and a session
    fit in."""
    baseline = config.getoption("resmon_compare")
    given = config.getoption("resmon_compare_fail")
    if baseline is None:
        if given:
            raise pytest.UsageError("resmon: --resmon-compare-fail needs --resmon-compare BASELINE")
        return None
    if baseline in ("", "-"):
        raise pytest.UsageError("resmon: --resmon-compare needs a BASELINE file or directory "
                                f"({'it was empty' if baseline == '' else 'not standard input'})")
    # A KEY given on the command line replaces the ini's limit of it; the
    # engine refuses a KEY given two different limits (the last would win
    # without a word: "rss_growth_mb=10%" then "=900%" loosened the gate).
    keys_given = {limit.rpartition("=")[0] for limit in given}
    ini = [limit for limit in config.getini("resmon_compare_fail") if limit.rpartition("=")[0] not in keys_given]
    args = [f"--max-increase={limit}" for limit in [*ini, *given]]
    json_path = config.getoption("resmon_json")
    if json_path and _replaces_input(json_path, baseline):
        # Written before the comparison, it would be compared with itself.
        raise pytest.UsageError(f"resmon: --resmon-json {json_path!r} is in --resmon-compare {baseline!r}: "
                                "an output never replaces an input")
    if _is_worker(config):
        return args, frozenset(), frozenset()
    try:
        return _check_baseline(baseline, args)
    except OSError as error:  # a full or unwritable TMPDIR
        raise pytest.UsageError(f"resmon: --resmon-compare cannot write its check of BASELINE"
                                f"{_temporary_problem(error)}") from None


def _temporary_problem(error: OSError) -> str:
    """' in DIRECTORY: why' for a failed write of a temporary file, or ':
    why' where no temporary directory was found (tempfile.gettempdir()
    raises then: it must not be asked again)."""
    where = f" in {tempfile.tempdir!r}" if tempfile.tempdir else ""
    return f"{where}: {error.strerror or error}"


class _PrivateDirectory:
    """A temporary directory worked through a descriptor held open, never
    by its name: in a TMPDIR others may write without the sticky bit,
    another user renamed the plugin's directory away, put one of the same
    name holding links, and root's session wrote its probe over a file
    the links named and read another's first word into its error (attack
    58) -- the marks channel refuses such a TMPDIR; here its name is not
    needed.  Files are made with O_EXCL|O_NOFOLLOW in the directory the
    descriptor holds (0700, this user's: checked), and the engine, in this
    process, reads them as /proc/self/fd/N/NAME."""

    def __init__(self, fd: int, name: str, identity: tuple[int, int]) -> None:
        self.fd, self.name, self.identity = fd, name, identity
        self.written: list[str] = []

    def write(self, name: str, text: str) -> str:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                     dir_fd=self.fd)
        self.written.append(name)  # made here (O_EXCL): the only names the clean-up removes
        with open(fd, "w", encoding="utf-8") as f:
            f.write(text)
        return f"/proc/self/fd/{self.fd}/{name}"


@contextlib.contextmanager
def _private_directory(prefix: str) -> Any:
    # A TMPDIR others may write without the sticky bit lets them rename the
    # directory between its making and its open -- even put another of this
    # user's directories in its place, whose files a clean-up by listing
    # removed (review 58b): refused, as the marks channel refuses it.
    parent = tempfile.gettempdir()
    st = os.stat(parent)
    if st.st_mode & 0o022 and not st.st_mode & 0o1000:
        raise OSError(errno.EPERM, "writable by others without the sticky bit: another user could swap the "
                                   "temporary directory (set TMPDIR to a directory only you may write, or "
                                   "one with the sticky bit, as /tmp)")
    name = tempfile.mkdtemp(prefix=prefix)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        with contextlib.suppress(OSError):
            os.rmdir(name)
        raise
    try:
        st = os.fstat(fd)
        if st.st_uid != os.geteuid() or st.st_mode & 0o077 or os.listdir(fd):  # not the one just made
            raise OSError(errno.EPERM, "its temporary directory was replaced by another")
    except BaseException:
        os.close(fd)
        raise
    made = _PrivateDirectory(fd, name, (st.st_dev, st.st_ino))
    try:
        if not os.path.isdir(f"/proc/self/fd/{fd}"):
            raise OSError(errno.ENOENT, "/proc is not mounted: the temporary files are reached through it")
        yield made
    finally:
        for entry in made.written:
            with contextlib.suppress(OSError):
                os.unlink(entry, dir_fd=fd)
        with contextlib.suppress(OSError):  # by name only while the name is still this directory
            now = os.stat(name, follow_symlinks=False)
            if (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino):
                os.rmdir(name)
        os.close(fd)


def _check_baseline(baseline: str, args: list[str]) -> tuple[list[str], frozenset[str], frozenset[str]]:
    with _private_directory("resmon-compare-") as directory:
        empty = directory.write("empty.json", json.dumps({"resmon_version": "0", "tests": {}}))
        # The engine reads BASELINE once (beside an empty report): its words
        # for a file it cannot read, and its memory bound.
        status, _, err = _compare_run(["--allow-different-commands"], baseline, empty)
        if status not in (0, 1) and "compare runs of one kind" not in err:
            raise pytest.UsageError(_usage_words(err))
        rows, tests, unjudged = _baseline_rows(baseline)  # a command's summary: refused here, in a session's words
        _check_renamed_keys(baseline, args, rows)
        for limit in args:  # not "not a numeric key": BASELINE holds it, unjudged
            if not any(_limit_names(limit, row) for row in rows) and any(_limit_names(limit, row) for row in unjudged):
                named = limit.partition("=")[2]
                raise pytest.UsageError(
                    f"resmon: --resmon-compare-fail {named}: BASELINE leaves {named.rpartition('=')[0]} unjudged "
                    "wherever it holds it (its tests ran beside other work: \"unjudged\" in their records): record "
                    "a BASELINE without that work (pytest --resmon-json)")
        # The limits, on a report of one test holding every key BASELINE
        # has, and every row a NODEID::KEY limit names as the engine matches
        # it (the whole row or its tail after a "::": test_grow::KEY): a typo
        # or a fact of the run is refused in the engine's words.
        probe: dict[str, dict[str, int]] = {}
        for row in rows:
            node, _, key = row.rpartition("::")
            probe.setdefault("resmon-compare-probe", {})[key] = 0
        for limit in args:
            for row in rows:
                if _limit_names(limit, row):
                    node, _, key = row.rpartition("::")
                    probe.setdefault(node, {})[key] = 0
        # Two files, as two runs: the engine refuses one run on both sides.
        base, new = (directory.write(f"limits-{side}.json", json.dumps({
            "resmon_version": "0", "created": f"the limits' probe, {side}", "tests": probe})) for side in ("base", "new"))
        status, _, err = _compare_run(args, base, new)
        if status not in (0, 1):
            raise pytest.UsageError(_usage_words(err))
    return args, rows, tests


def _check_renamed_keys(baseline: str, args: list[str], rows: frozenset[str]) -> None:
    """A limit on a key that a BASELINE from resmon 0.3 spells otherwise
    (its record's cpu_time_sec is 0.4's cpu_sec) is a usage error saying
    so, not "not a numeric key" or a limit that names no test."""
    old = any(row.endswith("::cpu_time_sec") for row in rows)
    new = any(row.endswith("::cpu_sec") for row in rows)
    for limit in args:
        named = limit.partition("=")[2].rpartition("=")[0]
        key = named.rpartition("::")[2]
        if key == "cpu_time_sec" or (key == "cpu_sec" and old and not new):
            words = "cpu_time_sec is now cpu_sec (the kernel's CPU seconds)" if key == "cpu_time_sec" else \
                "cpu_sec was cpu_time_sec in the records of resmon 0.3"
            raise pytest.UsageError(f"resmon: --resmon-compare-fail {limit.partition('=')[2]}: {words}"
                                    + (f"; BASELINE {baseline!r} is from resmon 0.3: record a new one "
                                       "(pytest --resmon-json) and limit cpu_sec" if old and not new else ""))


_COMPARE_INPUT_MAX = 32 << 20  # tools/resmon/compare.c COMPARE_INPUT_MAX


def _baseline_rows(baseline: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """BASELINE's rows (NODEID::KEY with a numeric value in any report it
    holds: the engine judges a key over the reports that hold it, so a
    partial report of a `-k` session ungates nothing), tests (in any
    report) and rows its records leave unjudged (in none of the rows), or a
    usage error when a report is not a pytest report (a command's summary
    has no "tests": it would judge nothing)."""
    # Read as the engine reads (_output.open_input): the link rule kept, a
    # FIFO put among the reports refused (it hung pytest for ever), the
    # engine's 32 MiB bound.
    try:
        if os.path.isdir(baseline):
            fd = _output.open_input(baseline, directory=True)
            try:
                names = os.listdir(fd)
            finally:
                os.close(fd)
            # The engine's *.json: any case (runs/R1.JSON), as resmon
            # picks every format by its name (compare.c, directory_files).
            paths = [os.path.join(baseline, name) for name in sorted(names)
                     if not name.startswith(".") and name.lower().endswith(".json")]
        else:
            paths = [baseline]
    except OSError as error:
        raise pytest.UsageError(f"resmon: --resmon-compare {baseline!r}: {error.strerror}") from None
    rows: set[str] = set()
    tests_in_any: set[str] = set()
    unjudged: set[str] = set()
    for path in paths:
        try:
            with os.fdopen(_output.open_input(path), "rb") as f:
                data = f.read(_COMPARE_INPUT_MAX + 1)
            if len(data) > _COMPARE_INPUT_MAX:
                raise ValueError(f"larger than the {_COMPARE_INPUT_MAX >> 20} MiB compare reads")
            root = json.loads(data)
        except OSError as error:
            raise pytest.UsageError(f"resmon: --resmon-compare {path!r}: {error.strerror}") from None
        except ValueError as error:  # the engine read it a moment ago
            raise pytest.UsageError(f"resmon: --resmon-compare {path!r}: {error}") from None
        except RecursionError:  # valid JSON nested deeper than Python's parser goes
            raise pytest.UsageError(f"resmon: --resmon-compare {path!r}: nested too deeply to read (a "
                                    "--resmon-json report is a few levels deep)") from None
        tests = root.get("tests") if isinstance(root, dict) else None
        if not isinstance(tests, dict):
            raise pytest.UsageError(f"resmon: --resmon-compare {path!r} is not a pytest report (no \"tests\" "
                                    "object): the baseline of a session is a --resmon-json report")
        # A skipped test's record is no run of it: the engine leaves it out.
        found = {f"{node}::{key}" for node, record in tests.items() for key in _judged_numbers(record)}
        rows |= found
        tests_in_any |= {node for node, record in tests.items() if isinstance(record, dict)}
        unjudged |= {f"{node}::{key}" for node, record in tests.items() if isinstance(record, dict)
                     and record.get("outcome") != "skipped" and isinstance(record.get("unjudged"), list)
                     for key in record["unjudged"] if isinstance(key, str) and _is_number(record.get(key))}
    return frozenset(rows), frozenset(tests_in_any), frozenset(unjudged - rows)


def _judged_numbers(record: Any) -> list[str]:
    """A record's keys a gate judges, as the engine reads it: its numbers,
    less those it says no limit judges (``unjudged``: the test ran beside
    other work); none for a skipped test (no run of it)."""
    if not isinstance(record, dict) or record.get("outcome") == "skipped":
        return []
    unjudged = record.get("unjudged")
    unjudged = [key for key in unjudged if isinstance(key, str)] if isinstance(unjudged, list) else []
    return [key for key, value in record.items() if _is_number(value) and key not in unjudged]


def _some(names: list[str]) -> str:
    """The first three names, and how many more."""
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _limit_names(limit: str, row: str) -> bool:
    """Whether a --max-increase limit names row, as the engine's
    limit_names: the whole row, or its NODEID::KEY's tail after a "::"."""
    key = limit.partition("=")[2].rpartition("=")[0]
    return row == key or row.endswith("::" + key)


def _replaces_input(output: str, baseline: str) -> bool:
    """Whether writing output changes BASELINE: the same file, or a file of
    BASELINE's directory.  Told by what the kernel says the files are, never
    by their names: the output as hold() resolves it for writing (a file by
    (st_dev, st_ino), a new one by its directory's and its name) against
    BASELINE as the engine reads it.  By os.path.realpath strings, a bind
    mount (or any other second mount) of BASELINE's directory gave one
    directory two names: the report replaced BASELINE, or joined its
    directory, and the gate then judged the session against itself (attack
    56a, B2)."""
    try:
        place = _output.hold(output)
    except OSError:
        return False  # refused as an output already, in the controller
    with place:
        if place.stream_fd >= 0:  # written where stdout or stderr stands: that file
            written = _identity(os.fstat(place.stream_fd))
            directory = None
        else:
            held = os.fstat(place.dir_fd)
            there = place.existing or place.in_place
            written = _identity(there) if there is not None else _identity(held, place.name)
            directory = _identity(held)
    try:
        base = os.stat(baseline)
    except OSError:
        return False  # no BASELINE to replace: _check_baseline says so
    if written == _identity(base):
        return True
    return S_ISDIR(base.st_mode) and directory == _identity(base)


def _identity(st: os.stat_result, name: str | bytes | None = None) -> tuple[Any, ...]:
    """A file as the kernel tells it, whatever its name: (st_dev, st_ino);
    an entry not there yet, by its directory's and its name."""
    return (st.st_dev, st.st_ino) if name is None else (st.st_dev, st.st_ino, os.fsencode(name))


def _compare_run(args: list[str], base: str, new: str, utf8: bool = True) -> tuple[int, str, str]:
    """The engine's exit status, report and messages, in the words of this
    plugin: the session's report is a private temporary file, and the
    engine's hints name `resmon compare` flags that pytest does not have.
    utf8: whether the stream the text goes to can show check marks."""
    from . import _resmon
    # "--": BASELINE is an input whatever it starts with.
    status, out, err = _resmon.compare([*args, "--", base, new], utf8=utf8)
    return status, _in_pytest_words(out, new), _in_pytest_words(err, new)


def _report_stream(config: pytest.Config) -> Any:
    """Where the verdict is shown: the terminal reporter's stream, or
    standard error without one (-p no:terminal: pytest_unconfigure)."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    return getattr(getattr(reporter, "_tw", None), "_file", None) or sys.stderr


def _takes_check_marks(stream: Any) -> bool:
    """Whether stream's encoding has the engine's check marks (its own, not
    the locale's: PYTHONIOENCODING=ascii under a UTF-8 locale)."""
    try:
        "\u2713\u2717".encode(getattr(stream, "encoding", None) or "ascii")
        return True
    except (LookupError, UnicodeEncodeError):
        return False


_PYTEST_WORDS = (
    ("resmon compare: --max-increase ", "resmon: --resmon-compare-fail "),
    (" is not a numeric key of both BASE and NEW (see resmon compare without limits)",
     " is not a numeric key of BASELINE's tests"),
    (": --all shows them)", ": `resmon compare --all BASELINE REPORT` shows them, REPORT from --resmon-json)"),
)


def _usage_words(err: str) -> str:
    """The engine's refusal as a usage error: a limit's in the plugin's own
    words, the rest naming the option whose input it refused."""
    err = err.strip()
    if err.startswith("resmon: "):
        return err
    # "--resmon-compare: resmon compare: base.json: ..." said both names (stop 54's attack).
    return f"resmon: --resmon-compare: {err.removeprefix('resmon compare: ')}"


def _in_pytest_words(text: str, new: str) -> str:
    text = text.replace(new, "this session")
    for engine, plugin in _PYTEST_WORDS:
        text = text.replace(engine, plugin)
    # One session is one run: say what a test of significance would need.
    return re.sub(r"not enough runs: (\d+) a side needed to tell a change from noise at --alpha (\S+) "
                  r"\(BASE has (\d+), NEW \d+\)",
                  r"one session is one run, and telling a change from noise at alpha \2 needs \1 a side "
                  r"(BASELINE has \3)", text)


class _Session:
    """The plugin's state for one pytest process (the controller or a worker)."""

    def __init__(self, config: pytest.Config, default_limits: dict[str, float], interval: float,
                 compare: tuple[list[str], frozenset[str], frozenset[str]] | None = None,
                 json_place: "_output.Place | None" = None) -> None:
        self.config = config
        self.json_place = json_place  # --resmon-json, resolved and held when pytest started
        self.default_limits = default_limits
        self.interval = interval
        self.gpu = config.getini("resmon_gpu")
        self.measure_all = bool(config.getoption("resmon") or config.getoption("resmon_json") or compare is not None)
        # Under --resmon-compare: the engine's limit arguments and BASELINE's
        # rows (NODEID::KEY); else None.
        self.compare = compare[0] if compare is not None else None
        self.baseline_rows = compare[1] if compare is not None else frozenset()
        self.baseline_tests = compare[2] if compare is not None else frozenset()
        self.baseline_unjudged: frozenset[str] = frozenset()  # rows BASELINE leaves unjudged (compare_session)
        self.compared: tuple[int, str, str] | None = None  # its (exit status, report, messages)
        # pytest.exit() or Ctrl-C stopped the session short, whatever exit
        # status it chose (pytest_keyboard_interrupt is called for both).
        self.stopped_short = False
        self.session: pytest.Session | None = None  # from pytest_sessionstart
        self.finished = False  # pytest_sessionfinish ran (not when sessionstart was stopped)
        self.compare_shown = False  # whether the terminal summary showed it
        # A test that forks and whose child returns into pytest leaves a copy
        # of the session running the rest in that child: the copy measures
        # nothing and writes no report (it replaced the session's with an
        # empty one, and its monitor, forked while sampling, failed every
        # later test).
        self.session_pid = os.getpid()
        self.monitor: Any = None  # one ResourceMonitor, a new window per test
        # Its threads (the walker and the GPU poller live as long as it; a
        # sampler per window), by the keys _threads gives: seen appearing
        # while it starts.  Only these are left out of the threads beside a
        # test -- not every "resmon-" thread: a session fixture's own
        # ResourceMonitor sampled beside every test, uncounted, and its CPU
        # failed a test's limit "exact" (attack 59).
        self.own_threads: set[Any] = set()
        self.records: dict[str, dict[str, Any]] = {}  # node id -> record (from the reports)
        self.exceeded: dict[str, Any] = {}  # node id -> the failure's message (and short line), until its report
        # A leaf cgroup per test unless the ini says no; the first refusal
        # (its reason) ends the tries for the session.
        self.use_cgroup = config.getini("resmon_cgroup").strip().lower() in _CGROUP_ON
        self.leaf_error: str | None = None
        # Threads and processes a test left running: key -> (node id, name).
        self.lingering: dict[Any, tuple[str, str]] = {}
        # Children of this process that ended and are not yet reaped
        # (zombies), seen at a measured call's start or end: (pid, start
        # time) -> their CPU seconds.  Each is charged once, to the test it
        # ran in (or to none), and taken out of the RUSAGE_CHILDREN rise of
        # whichever test reaps it.
        self.zombies: dict[tuple[int, int], float] = {}

    def limits_of(self, item: pytest.Item) -> dict[str, float]:
        limits = dict(self.default_limits)
        # Closest first.  Two markers stacked on one function, class or
        # module that name a key give it the stricter limit (attack 70: a
        # tighter one added above another was ignored unsaid), None only
        # where neither gives one.  A class node lists its own markers and
        # its bases' together: each class's are a group of their own, the
        # closest winning, so that a subclass's overrides its base's
        # (review 71).
        # Grouped by what they were written on: the test function, a class
        # (each base class apart: review 72, stacked markers on a class or
        # a module were ignored again), the module.
        nodes: list[tuple[Any, dict[str, Any]]] = []
        for node, marker in item.iter_markers_with_node("resmon_limit"):
            if marker.args:
                raise pytest.UsageError("resmon_limit takes keywords only, e.g. rss_growth_mb=200")
            written_on = (node, _marker_class(node, marker))
            if not nodes or nodes[-1][0] != written_on:
                nodes.append((written_on, {}))
            merged = nodes[-1][1]
            for key, value in marker.kwargs.items():
                _check_limit(key, value, "resmon_limit")
                was = merged.get(key, value)
                merged[key] = value if was is None else was if value is None else min(float(was), float(value))
        # Closest node last: a test's own marker overrides its class's and module's.
        for _, merged in reversed(nodes):
            for key, value in merged.items():
                if value is None:
                    limits.pop(key, None)
                else:
                    limits[key] = float(value)
        return limits

    def open_monitor(self) -> Any:
        if self.monitor is None:
            from ._monitor import ResourceMonitor  # the extension loads only when a test is measured
            gpu = None if self.gpu == "none" else self.gpu
            # Without leaf cgroups the tree's PSS too (each page once, shared
            # ones split among their sharers): a few /proc reads per sample.
            metrics = ["counts"] if self.leaf_error is None else ["counts", "memory_detail"]
            # PSS as often as the samples: at the library's 0.5 s a child
            # holding its memory for less than that was seen at a fraction of
            # it (23 of 80 MiB, one run in four under load).
            self.monitor = ResourceMonitor(self.interval, pid=os.getpid(), include_children=True, max_samples=1,
                                           gpu=gpu, metrics=metrics, memory_detail_interval=self.interval)
        return self.monitor

    def make_leaf(self) -> Any:
        """A new leaf cgroup for one test, (handle, path, version), or None
        where none can be made (then the session stops trying)."""
        if self.leaf_error is not None:
            return None
        from . import _resmon
        try:
            handle, path, version = _resmon.cgroup_create(0)
        except OSError as error:
            self.leaf_error = str(error)
            return None
        try:
            _resmon.cgroup_join(handle, 0)  # this process: what it and its children charge from now on
        except OSError as error:
            self.leaf_error = str(error)
            _resmon.cgroup_remove(handle)
            return None
        return handle, os.fsdecode(path), version

    def settle_zombies(self, cpu: float, at_start: dict[tuple[int, int], float],
                       before_end: dict[tuple[int, int], float], at_end: dict[tuple[int, int], float],
                       procs_before: dict[Any, str]) -> tuple[float, list[str], int, int]:
        """cpu_sec of a call from its RUSAGE_CHILDREN (and SELF) rise cpu,
        and the children that make it unsure.  at_start: the zombies just
        after the rise's start; before_end and at_end: just before and
        after its end.

        A zombie of at_start gone before the end was reaped in the call:
        its CPU, charged already (to the test it ran in, or to none), is
        taken out.  A zombie at the end that was not running when the call
        began ended in it unreaped: the test's own child, whose CPU is in no
        rise yet, is charged here, read from /proc/PID/stat (to the clock
        tick), and remembered for the test that reaps it; one an earlier
        test left running is remembered only (that test's CPU is charged to
        no test).  A zombie seen just before the end and gone just after
        was reaped as the rise was read: in it or not, no one can say.

        The third and fourth values count the zombies whose CPU, read to the
        clock tick (rounded down), entered the figure: taken out (the kernel
        added the exact time at the reap: the figure may be up to a tick
        high for each -- a test that reaped 100 of an earlier test's was
        charged the 100 remainders, 0.98 s for 0.016 s, stop 56's last
        attack), and charged (up to a tick low for each)."""
        unsure = []
        taken_out = charged = 0
        for key in at_start:
            if key not in before_end:
                if key in self.zombies:
                    taken_out += 1
                cpu -= self.zombies.pop(key, 0.0)
            elif key not in at_end:
                self.zombies.pop(key, None)
                unsure.append(f"process {key[0]} (ended before the test, reaped as it ended)")
        for key, sec in at_end.items():
            if key in at_start:
                continue
            if ("process", *key) not in procs_before:
                cpu += sec
                charged += 1
            self.zombies[key] = sec
        unsure += [f"process {key[0]} (ended in the test, reaped as it ended)"
                   for key in before_end if key not in at_start and key not in at_end]
        return max(cpu, 0.0), unsure, taken_out, charged

    def in_fork(self) -> bool:
        """Whether this is a forked copy of the session (see session_pid)."""
        return os.getpid() != self.session_pid

    @pytest.hookimpl(hookwrapper=True, trylast=True)
    def pytest_runtest_call(self, item: pytest.Item):
        if self.in_fork():
            yield
            return
        try:
            limits = self.limits_of(item)
        except pytest.UsageError as error:  # a bad marker fails its test, with the reason
            self.exceeded[item.nodeid] = str(error)
            yield
            return
        if not limits and not self.measure_all:
            yield
            return
        # Before anything is read for the test: the trim's own CPU (270 ms
        # over a fragmented 800 MiB heap) is no test's (review 75).
        _trim_heap()  # what earlier tests freed is no longer resident for this one to reuse unseen
        threads_before = _threads(self.own_threads)
        procs_before = _descendants()
        # cpu_sec is the rise of getrusage's SELF + CHILDREN, and a child's
        # CPU joins CHILDREN when it is reaped, whoever started it: a zombie
        # an earlier test left is reaped in some later test (stop 56's
        # attack: an earlier test's 0.84 s failed a test that ran 0.05 s).
        # The zombies now, read before and after the rise's start: one seen
        # before and gone after may be in the rise or not.
        zombies_before = _zombie_children()
        cpu_before = _cpu_sec(resource.RUSAGE_SELF) + _cpu_sec(resource.RUSAGE_CHILDREN)
        zombies_at_start = _zombie_children()
        cpu_unsure = [f"process {pid} (ended before the test, reaped as it began)"
                      for pid, start in zombies_before if (pid, start) not in zombies_at_start]
        for key in [key for key in self.zombies if key not in zombies_at_start]:
            del self.zombies[key]  # reaped outside any measured call
        for key, sec in zombies_at_start.items():
            self.zombies.setdefault(key, sec)  # ended outside a measured call: charged to no test
        if self.use_cgroup:
            leaf = self.make_leaf()
        else:
            leaf, self.leaf_error = None, self.leaf_error or "off (resmon_cgroup = no)"
        # Work an earlier test left running, still running now, whose use
        # from here on lands in some of this test's figures (tainted): a
        # thread in all of them (it shares this process's memory and CPU
        # clock); a process outside a leaf in all of them, and in a leaf in
        # the figures not the leaf's: the sampled tree's peak (pytest's
        # descendants, the earlier test's child among them -- stop 54's
        # attack: its 150 MiB failed a later test's tree_peak_rss_mb limit)
        # and cpu_sec (a child's CPU joins pytest's when it is reaped,
        # whichever test is running then).
        for key in [key for key in self.lingering if not _still_running(key)]:
            del self.lingering[key]
        overlapped, tainted, processes_beside = [], set(), {}
        beside_pids = set()  # processes running outside this test's leaf when it began
        # A process running as the test begins that no measured test left --
        # an unmeasured test's (stop 54's second attack: its 150 MiB failed
        # the next test's tree_peak_rss_mb limit, unsaid), a session
        # fixture's server -- is in the sampled tree all the same.
        running = {key: (None, what) for key, what in procs_before.items() if key not in self.lingering}
        # A thread running as the test begins that no measured test left (a
        # session fixture's, an unmeasured test's, xdist's channel) shares
        # this process's CPU clock and memory: a fixture's busy thread failed
        # a test's cpu_sec limit of 0.3 with 0.69 s, "exact", unsaid (attack
        # 58).  Its CPU clock and page faults are read at both ends: its CPU
        # is taken out of cpu_sec (and of the leaf's clock), and one that
        # faulted in pages during the call is named and taints the memory
        # figures; an idle one -- most session threads -- is in no figure.
        # A thread an earlier measured test left is judged alike, by what it
        # did in this call (review 58c: an idle pool a test started lazily
        # took every limit from every later test of the session).
        threads_beside = {key: (f"{self.lingering[key][1]} (left by {self.lingering[key][0]})"
                                if key in self.lingering else f"{what} (running when the test began)",
                                _thread_usage(key[1])) for key, what in threads_before.items()}
        for key, (node, what) in [*self.lingering.items(), *running.items()]:
            if key[0] == "thread":
                continue  # in threads_beside
            overlapped.append(f"{what} (left by {node})" if node else f"{what} (running when the test began)")
            tainted |= set(MEMORY_KEYS) if leaf is None else {"tree_peak_rss_mb"}
            processes_beside[key] = _process_cpu_ns(key[1])  # cpu_sec too if it ran or ended in the call (below)
            if key[0] == "process":
                beside_pids.add(key[1])
        # In a leaf, the peak mark is left alone (faults.md 24: a reset makes
        # an outer resmon or /usr/bin/time lose the session's peak): the leaf
        # is charged with every page the test newly touches, and a mark that
        # rose during the call is this process's own exact peak.  Without a
        # leaf the mark is reset, the one exact figure there is.
        hwm_before = _status_mb("VmHWM") if leaf else None
        exact = hwm_before is not None if leaf else _reset_peak_mark()
        rss_start = _status_mb("VmRSS")
        io_start = _file_io_mb() if leaf else None
        # The page faults of this process and its reaped children from here
        # on, against the leaf's count of them (below): every fault they take
        # in the leaf is counted there too.  The faults of an earlier test's
        # zombie are taken out when it is reaped in the call (it faulted
        # elsewhere).
        faults_start = _faults() if leaf else None
        zombie_faults = {key: _stat_faults(*key) for key in zombies_at_start} if leaf else {}
        try:
            monitor = self.open_monitor()
            threads_then = _threads()
            monitor.__enter__()
            first = monitor.samples[-1:]  # the first sample is taken before __enter__ returns
            self.own_threads = {key for key in self.own_threads if _still_running(key)}
            self.own_threads |= {key for key in _threads() if key not in threads_then
                                 and _comm(key[1]).startswith("resmon-")}
        except (OSError, ValueError) as error:  # e.g. resmon_gpu names a GPU that is not there
            if leaf:
                _remove_leaf(item, leaf)
            self.exceeded[item.nodeid] = f"resmon: the test cannot be measured: {error}"
            yield
            return
        wall_start = time.perf_counter()
        forked = False
        try:
            outcome = yield
        finally:
            forked = self.in_fork()  # the test forked and its child returned here: the session's to measure
            if not forked:
                wall = time.perf_counter() - wall_start
                monitor.__exit__(None, None, None)
                hwm = _status_mb("VmHWM") if exact else None
                if hwm is not None and hwm_before is not None and hwm <= hwm_before and rss_start is not None:
                    hwm = rss_start  # the mark did not rise: the process's own new pages are the leaf's charge
                rss_end = _status_mb("VmRSS")
                leaf_figures = None
                leaf_cpu = None
                left = {}
                faults_end = leaf_faults = None
                in_leaf = set()  # the processes in the leaf (and below) at the end
                # Listed before the leaf's cgroup.procs: one forked after it
                # (a left-running child's fresh fork) would be in neither
                # list of the leaf and named outside it (review 67 R2, 1 run
                # in 3); one that ended between the two is not alive below.
                descendants_at_leaf = _descendants() if leaf else {}
                if leaf:
                    io_end = _file_io_mb()
                    faults_end = _faults()  # before the leaf's count: a fault between the two is the leaf's
                    leaf_figures = _leaf_figures(leaf)
                    leaf_cpu = _leaf_cpu_sec(leaf)
                    if leaf_figures is not None and io_start is not None and io_end is not None:
                        leaf_figures["file_io_mb"] = max(io_end - io_start, 0.0)
                    leaf_faults = (leaf_figures or {}).pop("faults", None)
                    in_leaf = set((leaf_figures or {}).get("pids", []))
                    for pid in (leaf_figures or {}).pop("pids", []):
                        start = _start_time(pid)
                        if pid != os.getpid() and start is not None:  # a zombie is done
                            left[("process", pid, start)] = f"process {pid} ({_comm(pid)})"
                    _remove_leaf(item, leaf)  # this process and anything left running go back to the parent cgroup
        if forked:
            return
        zombies_before_end = _zombie_children()
        cpu = _cpu_sec(resource.RUSAGE_SELF) + _cpu_sec(resource.RUSAGE_CHILDREN) - cpu_before
        zombies_at_end = _zombie_children()
        cpu, unsure, taken_out, charged = self.settle_zombies(cpu, zombies_at_start, zombies_before_end,
                                                              zombies_at_end, procs_before)
        cpu_unsure += unsure
        if cpu_unsure:
            tainted.add("cpu_sec")
        # A process beside enters cpu_sec when pytest reaps it (its CPU joins
        # RUSAGE_CHILDREN), and may have done the test's work when it ran
        # (a server answering it): cpu_sec then judges nothing.  One that
        # neither ended nor ran over 10 ms in all is in no figure of the
        # test's: any one running beside took cpu_sec from every limit and
        # gate -- a session fixture's sleeping server, from every test
        # (review 64 F1).
        ran_beside_ns, ended_beside = 0, False
        for key, before in processes_beside.items():
            now = _process_cpu_ns(key[1]) if _still_running(key) else None
            if before is None or now is None:
                ended_beside = True
            else:
                ran_beside_ns += max(now - before, 0)
        if ended_beside or ran_beside_ns > _BESIDE_THREAD_RAN_NS:
            tainted.add("cpu_sec")
        beside_cpu_ns, beside_unknown, beside_touched, beside_ran = 0, [], [], []
        for key, (what, before) in threads_beside.items():
            now = _thread_usage(key[1]) if _still_running(key) else None
            if before is None or now is None:  # it ended during the call: what it did there is unknown
                beside_unknown.append(what)
                continue
            ran_ns = max(now[0] - before[0], 0)
            beside_cpu_ns += ran_ns
            if now[1] - before[1] > _BESIDE_THREAD_FAULTS:
                beside_touched.append(what)
            elif ran_ns > 0:
                beside_ran.append(what)
        # Over 10 ms of theirs in all (review 58c: 16 threads of a pool at
        # 8 ms each hid 0.13 s under a per-thread bound), those that ran are
        # named and cpu_sec judges nothing.
        if beside_cpu_ns <= _BESIDE_THREAD_RAN_NS:
            beside_ran = []
        for what in beside_unknown + beside_touched + beside_ran:
            overlapped.append(what)
        if beside_unknown or beside_touched:
            tainted |= set(MEMORY_KEYS)
        if beside_unknown or beside_touched or beside_ran:
            # It may have done the test's work (a session pool, a live
            # server) or its own (review 58b): not known which, so no limit
            # judges cpu_sec, which counts the test's own threads.
            tainted.add("cpu_sec")
        cpu = max(cpu - beside_cpu_ns / 1e9, 0.0)
        if leaf_cpu is not None:
            leaf_cpu = max(leaf_cpu - beside_cpu_ns / 1e9, 0.0)
        for key, name in _threads(self.own_threads).items():
            if key not in threads_before:
                left[key] = name
        # Processes of the test's that left its leaf (a test may write any
        # cgroup.procs as root, or in a delegated subtree): what they touched
        # there was charged elsewhere, and the leaf's exact figures judged
        # 0.25 MiB where a child that pytest ran from its parent cgroup
        # touched 200 MiB (finding F2).  Told by the pytest process out of
        # the leaf at the end, a process it started running outside it then,
        # or page faults of this process and its reaped children that the
        # leaf did not count (pytest moved out and back meanwhile, its child
        # run and reaped outside: no process is left to ask).
        escaped: list[str] = []
        escaped_cpu_ns = 0
        # (a forkserver's workers, outside the leaf, are spawned_beside's: below)
        under_beside = set(_descendants(beside_pids)) if leaf and beside_pids else set()
        for key, name in _descendants().items():
            if key in procs_before:
                continue
            if not leaf:
                left[key] = name
            elif (leaf_figures is not None and key[1] not in in_leaf and key not in under_beside
                  and key in descendants_at_leaf and _start_time(key[1]) == key[2]):
                left[key] = name
                escaped.append(f"{name} (outside the leaf at the end)")
                escaped_cpu_ns += _process_cpu_ns(key[1]) or 0  # its CPU so far, in no clock of the call
        if leaf_figures is not None:
            if os.getpid() not in in_leaf:
                escaped.append("the pytest process (outside the leaf at the end)")
            elif faults_start is not None and faults_end is not None and leaf_faults is not None \
                    and not ended_beside:  # a process beside reaped in the call faulted elsewhere: not told
                reaped = sum(zombie_faults.get(key) or 0 for key in zombies_at_start if key not in zombies_before_end)
                outside = faults_end - faults_start - reaped - leaf_faults
                if outside > _ESCAPED_FAULTS:
                    escaped.append(f"{outside} page faults of the pytest process and its reaped children outside "
                                   "the leaf (a process moved out and back, or ended outside it)")
        samples = first + monitor.samples
        record = _record(monitor.summary, samples, rss_start, hwm, rss_end, leaf_figures, cpu, wall)
        if escaped:
            # The leaf's figures miss what was charged outside it: the
            # sampled tree's rise (RSS: an upper bound where forked children
            # share pages) is judged where it is larger, never exact -- a
            # limit that a test escapes by leaving its cgroup judges nothing.
            rise = max(record["tree_peak_rss_mb"] - samples[0].rss_mb, 0.0) if samples else 0.0
            if rise > record["rss_growth_mb"]:
                record["rss_growth_mb"] = rise
                record["peak_rss_mb"] = record["rss_start_mb"] + rise
            record["exact"] = False
            record["left_leaf"] = escaped
            item.warn(pytest.PytestWarning(
                f"resmon: {item.nodeid}: processes of the test left its leaf cgroup: {', '.join(escaped)}; "
                "what they used there was charged elsewhere, so its rss_growth_mb is the sampled tree's rise "
                "where larger, not exact" + ("; their CPU so far is in cpu_sec" if escaped_cpu_ns else "")))
        if escaped_cpu_ns:
            cpu += escaped_cpu_ns / 1e9
            record["cpu_sec"] = cpu
        spawned_beside = bool(samples) and _spawned_beside(monitor.summary.processes, beside_pids)
        if spawned_beside:  # processes it started did work outside this process's children: maybe the test's
            tainted.add("cpu_sec")
        if leaf_figures is not None and spawned_beside:
            # A process running outside the leaf when the call began (a
            # forkserver an earlier test started -- multiprocessing's default
            # from Python 3.14 --, a fixture's server) may do this test's work
            # there: the pool's workers it forks are in the sampled tree and
            # never in the leaf (attack 57b: 400 MiB of workers, rss_growth_mb
            # 0.8 "exact", and a limit of 50 passed).  Where such a process
            # started processes during the call and the tree rose more than
            # the leaf was charged, the leaf's figures may miss it.  (Not
            # where it started none: a fork Pool of the test's own, in the
            # leaf, rises in the tree by the pages its workers share -- a
            # session fixture's idle server beside it lost the test's limits,
            # review 57c.)
            rise = record["tree_peak_rss_mb"] - samples[0].rss_mb
            leaf_charge = record["cgroup_peak_mb"] - record["cgroup_file_mb"]
            if rise > leaf_charge + _UNSEEN_MB + leaf_charge * _UNSEEN_SHARE:
                tainted |= set(MEMORY_KEYS)
                record["exact"] = False
        if leaf is None and self.leaf_error:
            record["cgroup_error"] = self.leaf_error
        if left:
            record["left_running"] = sorted(left.values())
            for key, what in left.items():
                self.lingering[key] = (item.nodeid, what)
            item.warn(pytest.PytestWarning(
                f"resmon: {item.nodeid} left running after it returned: {', '.join(sorted(left.values()))}; "
                "what they use later is charged to no test"))
        # Processes a process beside the test started during the call (a
        # forkserver's pool workers) ran outside this process's children and
        # outside the leaf: their CPU is in no figure of the test -- and was
        # called exact (57c).  cpu_sec judges no limit already (the process
        # beside taints it); it is not exact either.
        record["cpu_sec_exact"] = (not cpu_unsure and not (taken_out or charged) and not beside_unknown
                                   and not beside_touched and not beside_ran and not spawned_beside
                                   and not escaped_cpu_ns)
        if beside_unknown or beside_touched:  # its pages are this process's: no memory figure is the test's alone
            record["exact"] = False
        if beside_cpu_ns > _BESIDE_THREAD_NS:
            record["beside_threads_cpu_sec"] = beside_cpu_ns / 1e9
        # The leaf's own CPU clock counts every process that ran in it, a
        # double-forked grandchild too (reparented to init and reaped there:
        # in no getrusage of this process): attack 57b's grandchild burned
        # 1 s in a test of cpu_sec 0.04, "exact".  Above cpu_sec by more than
        # a tick for each zombie charged to the tick (and one), cpu_sec is no
        # longer exact and a limit judges the leaf's figure.
        # cpu_sec is then the leaf's figure, the one a limit and a gate both
        # judge (getrusage's kept as cpu_sec_rusage): the report kept
        # getrusage's, and --resmon-compare passed as +10 % a grandchild's
        # 0.6 s that resmon_limit failed (attack 63 F1).
        if leaf_cpu is not None:
            record["cgroup_cpu_sec"] = leaf_cpu
            if leaf_cpu - cpu > (charged + 1) / _CLOCK_TICKS:
                record["cpu_sec_exact"] = False
                record["cpu_sec_rusage"] = record["cpu_sec"]
                record["cpu_sec"] = leaf_cpu
        # The clock ticks of the zombies' CPU: cpu_sec within this of the
        # truth.  A limit judges cpu_sec less what it may be high by (the
        # zombies taken out), never failed on rounding -- and never given
        # the slack of zombies it was charged low for (the final attack: a
        # test of 0.8 s that left 100 zombies passed a limit of 0.3).
        slack = {"cpu_sec": taken_out / _CLOCK_TICKS} if taken_out else {}
        if taken_out or charged:
            record["cpu_sec_error_sec"] = (taken_out + charged) / _CLOCK_TICKS
        if record.get("oom_kills"):
            item.warn(pytest.PytestWarning(
                f"resmon: {item.nodeid}: the OOM killer killed {record['oom_kills']} process(es) of the test "
                "(oom_kills): its figures are of work cut short, and resmon compare takes the run for a failed one"))
        if cpu_unsure:
            record["cpu_sec_unsure"] = cpu_unsure
            item.warn(pytest.PytestWarning(
                f"resmon: {item.nodeid}: a child was reaped just as the call's CPU was read: "
                f"{', '.join(cpu_unsure)}; its cpu_sec may be off by that child's CPU, so no limit on it is "
                "applied"))
        # The keys no limit judges here are named in the record: a gate
        # judged them all the same, and failed a test for the 100 MiB of a
        # session fixture's thread beside it (attack 63 F2).
        # What taints the memory figures taints every memory figure of the
        # record (the leaf's peak holds a thread's pages too: a gate on
        # cgroup_peak_mb still failed the test, review 64 F3), and what
        # taints cpu_sec the leaf's CPU clock.
        also = {key for key in record if key.endswith("_mb") and "gpu" not in key} \
            if tainted & set(MEMORY_KEYS) - {"tree_peak_rss_mb"} else set()
        if "cpu_sec" in tainted:
            also |= {"cgroup_cpu_sec", "cpu_sec_rusage"}
        unjudged = sorted(key for key in tainted | also if _is_number(record.get(key)))
        if unjudged:
            record["unjudged"] = unjudged
        if overlapped:
            record["overlapped_by"] = overlapped
            named = [key for key in LIMIT_KEYS if key in tainted]
            item.warn(pytest.PytestWarning(
                f"resmon: {item.nodeid} ran beside work an earlier test left running: {', '.join(overlapped)}; "
                f"its {', '.join(named)} may include that work's (or miss what it did for this test), so no limit "
                "on them is applied to it"))
        item.user_properties.append((_PROPERTY, json.dumps(record)))
        if outcome.excinfo is None:  # a test that failed by itself keeps its own failure
            checked = {k: v for k, v in limits.items() if k not in tainted}
            failures = _over_limits(record, checked, slack)
            if failures:
                self.exceeded[item.nodeid] = failures

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]):
        # A limit exceeded fails the call phase itself, as a failed assertion
        # would: FAILED, not ERROR, and "-x" and xdist see an ordinary failure.
        failure = self.exceeded.pop(item.nodeid, None) if call.when == "call" else None
        if failure and call.excinfo is None:
            message, short = failure if isinstance(failure, tuple) else (failure, failure.splitlines()[0])
            try:
                pytest.fail(message, pytrace=False)
            except pytest.fail.Exception:
                call.excinfo = pytest.ExceptionInfo.from_current()
            outcome = yield
            # pytest's short summary ("FAILED t.py::test_x - reason") shows the
            # report's crash line, which a failure without a traceback lacks.
            report = outcome.get_result()
            if getattr(report.longrepr, "reprcrash", False) is None:
                from _pytest._code.code import ReprFileLocation
                path, lineno, _ = item.location
                crash = ReprFileLocation(path, (lineno or 0) + 1, short)
                report.longrepr.reprcrash = crash
                chain = getattr(report.longrepr, "chain", None)
                if chain:  # what pytest-xdist sends the controller
                    chain[-1] = (chain[-1][0], crash, chain[-1][2])
            return
        yield

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # Here in the controller too under xdist: the record came with the report.
        if report.when == "call":
            for name, value in report.user_properties:
                # The test's own record_property("resmon", ...) shares the
                # name: not a record (it crashed every session, the plugin
                # unused, with an INTERNALERROR: attack 57b).  The plugin's
                # is a JSON object, appended last.
                record = _own_record(value) if name == _PROPERTY else None
                if record is not None:
                    self.records[report.nodeid] = record
                    # How it ended, for `resmon compare`: a test that failed
                    # early is quick and lean, not an improvement.
                    record["outcome"] = report.outcome
        elif report.failed and report.nodeid in self.records:  # its teardown failed
            self.records[report.nodeid]["outcome"] = "error"

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session  # before a conftest's sessionstart can stop the session

    def pytest_keyboard_interrupt(self, excinfo: Any) -> None:
        # pytest.exit("no GPU here", returncode=0) ends the session after
        # some tests with status 0: its report looked whole, and a gate
        # passed it (attack 59).
        self.stopped_short = True

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if _is_worker(self.config) or self.in_fork():
            return
        self.finished = True
        path = self.config.getoption("resmon_json")
        if not path and self.compare is None:
            return
        from . import library_version
        text = json.dumps({
            "resmon_version": library_version,
            "machine": _machine(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            # How the session ended: an interrupted one (Ctrl-C, a CI's
            # timeout, pytest.exit() whatever its status) holds some tests'
            # records and must not pass a gate.
            "exit_status": int(session.exitstatus),
            "interrupted": self.stopped_short or session.exitstatus == pytest.ExitCode.INTERRUPTED,
            "tests": self.records,
        }, indent=1) + "\n"
        if path:
            try:
                # The command's rules (README, "Your files"): a temporary made with
                # O_EXCL, devices and FIFOs in place, a link kept, read-only refused;
                # where the path led when pytest started, never resolved again.
                if self.json_place is not None:
                    try:
                        _output.write_held(self.json_place, text)
                    finally:
                        self.json_place.close()
                else:
                    _output.write_file(path, text)
            except OSError as error:
                _say(self.config, f"resmon: cannot write --resmon-json {error.filename!r}: {error.strerror}\n")
                if session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
                    session.exitstatus = pytest.ExitCode.USAGE_ERROR
        if self.compare is not None and session.exitstatus == pytest.ExitCode.INTERRUPTED:
            pass  # Ctrl-C: pytest's exit 2 says it
        elif self.compare is not None and self.stopped_short:
            self.fail_stopped_short(session)
        elif self.compare is not None:
            self.compare_session(session, text)

    def compare_session(self, session: pytest.Session, text: str) -> None:
        """Runs the engine on BASELINE and this session's report (written to
        a private temporary directory), keeps its verdict for the terminal
        summary, and fails the session as `resmon compare` would exit.

        A limit that judges nothing here is left out of the engine's run and
        named, by one rule whatever the other limits: one naming a test
        (NODEID::KEY) that this session did not measure (deselected, skipped:
        a shard of a sharded suite) is a warning, never a failure; any other
        (a KEY, or a test measured here) that judges nothing because
        BASELINE has no number for it fails the session (a gate that judged
        nothing is no pass).  BASELINE is read again here, as the engine
        reads it now: a start-up read may be stale."""
        if any(self.config.getoption(name, False) for name in _NO_TEST_RUNS):
            return  # no test ran: nothing to judge
        baseline = self.config.getoption("resmon_compare")
        try:
            self.baseline_rows, self.baseline_tests, self.baseline_unjudged = _baseline_rows(baseline)
        except pytest.UsageError as error:  # changed or removed since start-up
            self.compared = 2, "", f"{error}\n"
            self.fail_session(session, 2, [])
            return
        # A test skipped in its body (pytest.skip(), an xfail) is no run of
        # it: the engine leaves its record out, as _baseline_rows does, and a
        # limit naming it alone judges nothing here (a warning, not the
        # engine's usage error that its key is in no NEW).
        measured = {f"{node}::{key}" for node, record in self._ran() for key in _judged_numbers(record)}
        beside = {f"{node}::{key}" for node, record in self._ran()
                  for key in record.get("unjudged", []) if isinstance(key, str)}
        rows = measured & self.baseline_rows
        limits = [limit for limit in self.compare if any(_limit_names(limit, row) for row in rows)]
        unjudged, failed = [], False
        for limit in self.compare:
            if limit in limits:
                continue
            words = limit.partition("=")[2]
            named = words.rpartition("=")[0]
            here = [row.rpartition("::")[0] for row in sorted(measured) if _limit_names(limit, row)]
            if not here and "::" in named and not any(_limit_names(limit, row) for row in beside):
                unjudged.append(f"resmon compare: {words} names no test measured in this session (deselected, "
                                "skipped or not collected): not judged here, never a failure\n")
                continue
            if not here and any(_limit_names(limit, row) for row in beside):
                tests = sorted({row.rpartition("::")[0] for row in beside if _limit_names(limit, row)})
                unjudged.append(f"resmon compare: {words} judged nothing: {_some(tests)} ran beside other work "
                                "(unjudged in the record, as resmon_limit leaves it): never a failure\n")
                continue
            failed = True
            where = (f"in {_some(here)}, measured here," if here else "in any test measured here")
            held = [row for row in measured if _limit_names(limit, row) and row in self.baseline_unjudged]
            what = ("BASELINE leaves it unjudged (its tests ran beside other work there)" if held
                    else "BASELINE has no number for it")
            unjudged.append(f"resmon compare: {words} judged nothing: {what} {where} - this fails the session; "
                            "record a BASELINE that holds them (pytest --resmon-json)\n")
        if not rows:
            why = "resmon compare: no measured test in common with BASELINE: nothing judged\n"
            self.compared = (1 if failed else 0), "", "".join(unjudged) + why
        else:
            try:
                with _private_directory("resmon-compare-") as directory:
                    new = directory.write("this-session.json", text)
                    status, out, err = _compare_run(limits, baseline, new,
                                                    _takes_check_marks(_report_stream(self.config)))
            except KeyboardInterrupt:  # Ctrl-C stops the engine at once: nothing judged, pytest's exit 2
                self.compared = 2, "", "resmon: --resmon-compare interrupted: nothing judged\n"
                session.exitstatus = pytest.ExitCode.INTERRUPTED
                return
            except OSError as error:  # a full or unwritable TMPDIR: one line, as --resmon-json's
                status, out, err = 2, "", (f"resmon: --resmon-compare cannot write this session's report"
                                           f"{_temporary_problem(error)}\n")
            if self.compare and not limits:  # the engine ran without limits: not "no limits, a report"
                out = out.replace("no limits, a report", f"no limit judged ({len(self.compare)} given: below), "
                                                         "a report", 1).replace("; limits judge the medians alone", "")
            if failed and status == 0:
                status = 1
            self.compared = status, out, "".join(unjudged) + self.unjudged_tests(limits) + err
        self.fail_session(session, self.compared[0], limits)

    def fail_stopped_short(self, session: pytest.Session) -> None:
        self.compared = 1, "", _fail_stopped_short(session)  # said in the terminal summary, or at unconfigure

    def fail_session(self, session: pytest.Session, status: int, limits: list[str]) -> None:
        # Nothing judged keeps pytest's own "no tests ran" (5), and any failure.
        failing = (pytest.ExitCode.OK,) if not limits else (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED)
        if status != 0:  # the reason lines are the terminal summary's
            if session.exitstatus in failing:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED if status == 1 else pytest.ExitCode.USAGE_ERROR

    def _ran(self) -> list[tuple[str, dict[str, Any]]]:
        """This session's records of the tests that ran: a skipped test's
        (outcome "skipped") is left out, as the engine leaves it out."""
        return [(node, record) for node, record in self.records.items() if record.get("outcome") != "skipped"]

    def unjudged_tests(self, limits: list[str]) -> str:
        """A line per limit that some test measured here escaped, because
        BASELINE holds no number for the key there (missing, or a string),
        and one per limit for the tests BASELINE lacks: a limit that holds
        for the rest must not read as holding for those."""
        lines = []
        for limit in limits:
            beside = [node for node, record in self._ran() for key in record.get("unjudged", [])
                      if isinstance(key, str) and _limit_names(limit, f"{node}::{key}")]
            if beside:
                lines.append(f"resmon compare: {limit.partition('=')[2]} not judged in {len(beside)} "
                             f"test{'s' if len(beside) != 1 else ''} that ran beside other work (unjudged in "
                             f"the record, as resmon_limit leaves it): {_some(beside)}\n")
            missed = [node for node, record in self._ran() if node in self.baseline_tests
                      for key in _judged_numbers(record)
                      if _limit_names(limit, f"{node}::{key}") and f"{node}::{key}" not in self.baseline_rows]
            held = [node for node, record in self._ran() for key in _judged_numbers(record)
                    if f"{node}::{key}" in self.baseline_unjudged and _limit_names(limit, f"{node}::{key}")]
            missed = [node for node in missed if node not in held]
            if held:
                lines.append(f"resmon compare: {limit.partition('=')[2]} not judged in {len(held)} "
                             f"test{'s' if len(held) != 1 else ''} that BASELINE leaves unjudged (they ran beside "
                             f"other work there): {_some(held)}\n")
            if missed:
                lines.append(f"resmon compare: {limit.partition('=')[2]} not judged in {len(missed)} "
                             f"test{'s' if len(missed) != 1 else ''} where BASELINE has no number for it: "
                             f"{_some(missed)}\n")
            absent = [node for node, record in self._ran() if node not in self.baseline_tests
                      and any(_limit_names(limit, f"{node}::{key}") for key in _judged_numbers(record))]
            if absent:
                lines.append(f"resmon compare: {limit.partition('=')[2]} not judged in {len(absent)} "
                             f"test{'s' if len(absent) != 1 else ''} that BASELINE lacks (new, or not in its "
                             f"reports): {_some(absent)}\n")
        return "".join(lines)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if _is_worker(self.config) or self.in_fork():
            return
        if self.compared is not None:
            self.compare_shown = True
            status, out, err = self.compared
            terminalreporter.write_sep("-", f"resmon compare: {self.config.getoption('resmon_compare')} vs "
                                            "this session")
            for line in out.splitlines():
                terminalreporter.write_line(line)
            for line in err.splitlines():
                terminalreporter.write_line(line, red=True, bold=True)
        if not self.config.getoption("resmon"):
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


    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.in_fork():
            return
        # pytest.exit() in a conftest's pytest_sessionstart or pytest_configure:
        # no sessionfinish, and pytest returns the session's status after this
        # hook.  Stopped in pytest_configure there was no sessionstart either;
        # the session is a plugin of pytest's from its start (review 61).
        session = self.session or config.pluginmanager.get_plugin("session")
        if (self.compare is not None and self.stopped_short and not self.finished and session is not None
                and session.exitstatus != pytest.ExitCode.INTERRUPTED and not _is_worker(config)):
            self.fail_stopped_short(session)  # (Ctrl-C: pytest's exit 2 says it)
        # Without pytest's terminal summary (--no-summary, -p no:terminal) the
        # reason a gate failed the session still reaches the user.
        if self.compared is not None and not self.compare_shown and self.compared[2]:
            sys.stderr.write(self.compared[2])


def _say(config: pytest.Config, line: str) -> None:
    """line on stderr, on a line of its own: where stdout is the same
    terminal or file, the progress line ("....  [100%]") is ended first
    (stop 54's attack: the report's write error was glued to it)."""
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    if terminal is not None:
        terminal.ensure_newline()  # after a file's results (-v and plain)
        writer = getattr(terminal, "_tw", None)  # -q's dots and "[100%]" leave no mark ensure_newline sees
        if writer is not None and getattr(writer, "width_of_current_line", 0) > 0:
            writer.line()
    sys.stdout.flush()  # the terminal writer's file
    sys.stderr.write(line)


def _own_record(value: Any) -> dict[str, Any] | None:
    """A user property's value as a record this plugin wrote (a JSON object
    with its measured_by), else None."""
    try:
        record = json.loads(value) if isinstance(value, (str, bytes)) else None
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) and "measured_by" in record else None


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")  # a pytest-xdist worker: the controller reports


def _check_limit(key: str, value: Any, where: str) -> None:
    if key == "cpu_time_sec":  # the record's name before 0.4: the kernel's seconds are cpu_sec, as in the command
        raise pytest.UsageError(f"{where}: cpu_time_sec is now cpu_sec (the kernel's CPU seconds)")
    if key == "children_peak_rss_mb":  # the kernel's ru_maxrss of reaped children: inherited pages too
        raise pytest.UsageError(f"{where}: children_peak_rss_mb is no more: rss_growth_mb holds what a test's "
                                "children added")
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


_DECIMAL = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _decimal(text: str) -> float:
    """A number written in decimal, as the ini's help says: float() also
    takes " 1 ", "1_0", "inf" and "nan" (review 71).  ValueError otherwise."""
    if not _DECIMAL.fullmatch(text):
        raise ValueError  # the caller says what the number is for
    return float(text)


def _marker_class(node: Any, marker: Any) -> int:
    """For a class node, the place in its MRO of the class that was marked
    with marker (the farthest whose own pytestmark holds it: a subclass's
    list copies its base's); 0 for any other node."""
    cls = getattr(node, "obj", None)
    if not isinstance(cls, type):
        return 0
    introduced = 0
    for depth, klass in enumerate(cls.__mro__):
        own = klass.__dict__.get("pytestmark", [])
        # A decorator stores Marks; a pytestmark written as a class attribute
        # holds MarkDecorators, whose .mark is what pytest hands out (attack 73).
        if any(getattr(mark, "mark", mark) is marker for mark in (own if isinstance(own, list) else [own])):
            introduced = depth
    return introduced


def _parse_ini_limits(words: list[str]) -> dict[str, float]:
    limits = {}
    for word in (w for text in words for w in text.split(",") if w):
        key, sep, value = word.partition("=")
        try:
            number = _decimal(value) if sep else None
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


# glibc's malloc_trim (None where absent), and this process's RSS (MiB) right
# after the last trim.
_TRIM_HEAP: dict[str, Any] = {}
_TRIM_WHEN_RISEN_MB = 1.0


def _trim_heap() -> None:
    """Hands the C heap's free memory back to the kernel (glibc's
    malloc_trim(0): the top of the heap, and the free pages within it), so
    that a test's allocations fault in pages of their own.  Memory an
    earlier test freed stayed resident in the heap (glibc raises its mmap
    threshold after a large block is freed, up to 32 MiB), and a later test
    that reused it rose by nothing: a 20 MiB test marked rss_growth_mb=5
    passed at 0.2 MiB after two larger ones and failed alone (attack 74).
    A trim walks every free chunk (270 ms over a fragmented 800 MiB heap,
    review 75), so it is done only when the process's RSS rose by a MiB
    since the last: whatever an earlier test freed and left resident --
    first touched then, or reused and freed again (review 76: the heap's
    free bytes, read instead, stood still there) -- is in that rise.
    Another libc, or a Python without ctypes, has no such call: nothing is
    done."""
    if not _TRIM_HEAP:
        try:
            import ctypes  # here, not at import: the plugin loads in every pytest, ctypes or not

            trim = ctypes.CDLL(None).malloc_trim
            trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
        except (ImportError, OSError, AttributeError):
            trim = None
        _TRIM_HEAP.update(trim=trim, rss=None)
    if _TRIM_HEAP["trim"] is None:
        return
    rss = _status_mb("VmRSS")
    if rss is not None and _TRIM_HEAP["rss"] is not None and rss < _TRIM_HEAP["rss"] + _TRIM_WHEN_RISEN_MB:
        _TRIM_HEAP["rss"] = min(rss, _TRIM_HEAP["rss"])
        return
    _TRIM_HEAP["trim"](0)
    _TRIM_HEAP["rss"] = _status_mb("VmRSS")


def _reset_peak_mark() -> bool:
    """Resets this process's VmHWM to its current RSS, as the library does."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _faults() -> int:
    """The page faults (minor and major) of this process and its reaped children."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_minflt + own.ru_majflt + children.ru_minflt + children.ru_majflt


def _stat_faults(pid: int, start: int) -> int | None:
    """The page faults a zombie child adds to RUSAGE_CHILDREN when reaped
    (minflt + cminflt + majflt + cmajflt of /proc/PID/stat); None when it
    is gone or another process has its id."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        fields = stat[stat.rindex(b")") + 2:].split()
        if int(fields[19]) != start:
            return None
        return sum(int(n) for n in fields[7:11])
    except (OSError, ValueError, IndexError):
        return None


def _cpu_sec(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _record(summary: Any, samples: list[Any], rss_start: float | None, hwm: float | None, rss_end: float | None,
            leaf: dict[str, Any] | None, cpu: float, wall: float) -> dict[str, Any]:
    # samples: the window's first and last (the tree, pytest and its descendants).
    tree_first = samples[0].rss_mb if samples else summary.peak_rss_mb
    tree_growth = max(summary.peak_rss_mb - tree_first, 0.0)
    first_pss = samples[0].pss_mb if samples else None
    if first_pss is not None and summary.peak_pss_mb is not None and not math.isnan(first_pss):
        # PSS counts a page shared after fork once over the tree, where RSS
        # counts it in each process: the tree's growth in PSS is what its
        # processes added.
        tree_growth = max(summary.peak_pss_mb - first_pss, 0.0)
    exact = hwm is not None and rss_start is not None
    # The pytest process's own rise: exact from its high-water mark, else sampled.
    own_growth = max(hwm - rss_start, 0.0) if exact else tree_growth
    own_retained = max(rss_end - rss_start, 0.0) if exact and rss_end is not None else None
    if leaf is not None:
        # Every page the test's processes were charged with while in the
        # leaf, once: the pytest process's new pages and its children's (a
        # forked child's inherited pages only once written).  A page the
        # process maps without a charge of its own (a file already cached)
        # raises its RSS only: hence the larger of the two exact figures.
        # The leaf is also charged with the page cache of the files the test
        # wrote or read: memory the kernel may drop at will, which no RSS
        # holds.  What of it is still cached at the end is taken out of the
        # peak and the charge; then the figure is a close estimate, no
        # longer exact (how much was cached at the peak is not known).
        # Page cache freed before the end (a file written and deleted, or
        # dropped by the kernel) stays in the peak, and neither v1's nor
        # v2's memory.stat counts the file pages a cgroup was ever charged
        # with (stop 56's attack: 200 MiB written and deleted read as an
        # exact rss_growth_mb of 206, RSS never above 33).  So the figure is
        # no longer exact either when the test's processes read or dirtied
        # file pages (file_io_mb, from /proc/self/io: this process and the
        # children reaped in the call), or when the peak holds more than
        # any RSS was seen to hold (cgroup_unseen_mb, over the pytest
        # process's exact rise and the sampled tree's): page cache of a
        # child /proc/self/io does not count (running at the end, double
        # forked), kernel memory, or a peak between two samples.
        measured_by = "cgroup"
        file = leaf.get("file_mb", 0.0)
        charged = leaf["peak_mb"] - file
        growth = max(own_growth, charged)
        retained = max(own_retained or 0.0, leaf["current_mb"] - file)
        unseen = max(charged - max(own_growth, tree_growth), 0.0)
        file_io = leaf.get("file_io_mb")
        exact = (exact and file < 1.0 and (file_io is None or file_io < 1.0)
                 and unseen <= _UNSEEN_MB + charged * _UNSEEN_SHARE)
    else:
        # The process tree sampled every interval (PSS where it can be read,
        # else RSS, which counts a forked child's inherited pages again); a
        # process that left the tree (double fork) is not seen.
        measured_by = "sampled-tree"
        several = summary.peak_nprocs is not None and summary.peak_nprocs > 1
        growth = max(own_growth, tree_growth if several else 0.0)
        retained = own_retained
    start = rss_start if rss_start is not None else tree_first
    record: dict[str, Any] = {
        "rss_growth_mb": growth,
        "peak_rss_mb": start + growth,
        "rss_start_mb": start,
        "retained_mb": min(retained, growth) if retained is not None else None,
        "measured_by": measured_by,
        "exact": exact and (leaf is not None or not (summary.peak_nprocs or 1) > 1),
        "peak_rss_exact": hwm is not None and rss_start is not None,
        "tree_peak_rss_mb": summary.peak_rss_mb,
        "cpu_sec": cpu,
        "wall_sec": wall,
    }
    if leaf is not None:
        record["cgroup_peak_mb"] = leaf["peak_mb"]
        record["cgroup_file_mb"] = leaf.get("file_mb", 0.0)
        record["cgroup_unseen_mb"] = unseen
        if file_io is not None:
            record["file_io_mb"] = file_io
        if leaf.get("oom_kills"):
            record["oom_kills"] = leaf["oom_kills"]
    if summary.peak_gpu_mem_mb is not None:
        record["peak_gpu_mem_mb"] = summary.peak_gpu_mem_mb
    if summary.gpu_energy_j is not None:
        record["gpu_energy_j"] = summary.gpu_energy_j
    return record


# How far a leaf's peak (less the file pages still cached) may exceed what
# any RSS was seen to hold and still be exact: the kernel's own pages (page
# tables, a few MiB of a test's dentries and inodes) and the sampled tree's
# lag behind a fast allocation (up to 3 MiB of 100 seen).
_UNSEEN_MB = 4.0
_UNSEEN_SHARE = 1 / 16
# The page faults of the pytest process and its reaped children that the
# leaf may not count before the test's processes are taken to have faulted
# outside it: 1 MiB of 4 KiB pages, or more where the kernel's per-CPU
# batches of memcg events (64 a CPU before a flush, at most twice that
# unflushed) could hold more back (review 67 R3: up to 31 seen on 2 CPUs).
_ESCAPED_FAULTS = max(256, 128 * (os.cpu_count() or 1))


def _file_io_mb() -> float | None:
    """The file pages this process and its reaped children read from
    storage or dirtied so far (read_bytes + write_bytes of /proc/self/io,
    in MiB); None where the kernel does not count them."""
    try:
        with open("/proc/self/io", "rb") as f:
            fields = dict(line.split(b":", 1) for line in f if b":" in line)
        return (int(fields[b"read_bytes"]) + int(fields[b"write_bytes"])) / (1 << 20)
    except (OSError, ValueError, KeyError):
        return None


_LEAF_FILES = {1: ("memory.max_usage_in_bytes", "memory.usage_in_bytes"), 2: ("memory.peak", "memory.current")}
# memory.stat's page cache (tmpfs and shared memory in it) and its shared memory.
_LEAF_CACHE_KEYS = {1: (b"cache", b"shmem"), 2: (b"file", b"shmem")}


def _leaf_figures(leaf: Any) -> dict[str, Any]:
    """The leaf's peak and current charge (MiB) and the pids in it."""
    _, path, version = leaf
    peak_file, current_file = _LEAF_FILES[version]
    try:
        figures: dict[str, Any] = {}
        for key, name in (("peak_mb", peak_file), ("current_mb", current_file)):
            with open(os.path.join(path, name)) as f:
                figures[key] = int(f.read().split()[0]) / (1 << 20)
        stat = {}
        with open(os.path.join(path, "memory.stat"), "rb") as f:
            for line in f:
                key, _, value = line.partition(b" ")
                stat[key] = int(value)
        cache, shmem = _LEAF_CACHE_KEYS[version]
        # Every page fault taken in it (v1's total_ with those below it; v2's is so)
        figures["faults"] = stat.get(b"total_pgfault" if version == 1 else b"pgfault")
        figures["file_mb"] = max(stat.get(cache, 0) - stat.get(shmem, 0), 0) / (1 << 20)
        with open(os.path.join(path, "cgroup.procs")) as f:
            figures["pids"] = [int(line) for line in f if line.strip()]
        # and those in cgroups the test made below it (a job's): left
        # running all the same (attack 58: its sleep was named by the next
        # test as running when it began, by no test as left)
        below = [where for where, _, _ in os.walk(path)][1:]
        for where in below:
            with contextlib.suppress(OSError, ValueError), open(os.path.join(where, "cgroup.procs")) as f:
                figures["pids"] += [int(line) for line in f if line.strip()]
        figures["oom_kills"] = _leaf_oom_kills(path, version, below)
        return figures
    except (OSError, ValueError, IndexError):  # the leaf was removed under us: measured as without one
        return None


def _leaf_oom_kills(path: str, version: int, below: list[str]) -> int:
    """The OOM killer's kills in the leaf (v1 memory.oom_control, v2
    memory.events: "oom_kill N"), 0 where the kernel does not count them.
    Read before the leaf is removed: on v1 the count is the victim's cgroup
    alone, so an outer resmon's end read no longer finds it (attack 58:
    `resmon --memory-limit -- pytest --resmon` said no kill, where the same
    run unmeasured said "descendant").  v2's count holds the cgroups below;
    v1's is summed over them (below: a test's job cgroups)."""
    kills = 0
    for where in [path] + (below if version == 1 else []):
        try:
            with open(os.path.join(where, "memory.oom_control" if version == 1 else "memory.events"), "rb") as f:
                for line in f:
                    key, _, value = line.partition(b" ")
                    if key == b"oom_kill":
                        kills += int(value)
        except (OSError, ValueError):
            pass
    return kills


def _leaf_cpu_sec(leaf: Any) -> float | None:
    """The CPU seconds of everything that ran in the leaf while it was there
    (its grandchildren too, which no getrusage of this process counts):
    v2's cpu.stat usage_usec, v1's cpuacct.usage of the cpuacct leaf of the
    same name this process joined with it.  None where it cannot be read.
    Read while this process is still in the leaf."""
    _, path, version = leaf
    try:
        if version == 2:
            with open(os.path.join(path, "cpu.stat"), "rb") as f:
                for line in f:
                    key, _, value = line.partition(b" ")
                    if key == b"usage_usec":
                        return int(value) / 1e6
            return None
        with open("/proc/self/cgroup") as f:
            places = [line.rstrip("\n").split(":", 2) for line in f]
        where = next((p[2] for p in places if len(p) == 3 and "cpuacct" in p[1].split(",")), None)
        if where is None or os.path.basename(where) != os.path.basename(path):
            return None  # not in a cpuacct leaf of the leaf's name
        with open("/proc/self/mountinfo") as f:
            for line in f:
                fields = line.split()
                dash = fields.index("-") if "-" in fields else -1
                if dash < 0 or fields[dash + 1] != "cgroup" or "cpuacct" not in fields[dash + 3].split(","):
                    continue
                root, mountpoint = fields[3], fields[4]
                inside = where if root == "/" else where[len(root):] if where.startswith(root + "/") else None
                if inside is None:
                    continue
                with open(mountpoint.rstrip("/") + inside + "/cpuacct.usage") as usage:
                    return int(usage.read()) / 1e9
    except (OSError, ValueError, IndexError):
        pass
    return None


def _remove_leaf(item: pytest.Item, leaf: Any) -> None:
    """Removes the test's leaf; one that stays is said as the test's
    warning (written to stderr in the call, pytest's capture kept it unseen:
    attack 74)."""
    from . import _resmon
    try:
        _resmon.cgroup_remove(leaf[0])
    except OSError as error:  # left for a later create's sweep
        if error.errno == errno.EBUSY:  # kept on purpose too: a limit the test set there binds what it left
            said = (f"resmon: the cgroup {leaf[1]} still holds processes the test left running, kept there (under "
                    "any limit it set) until they end (a later session removes it once empty)")
        elif error.errno == errno.ELOOP:  # nested past what is followed (cgroup_nesting.h): nothing runs within reach
            said = (f"resmon: the cgroup {leaf[1]} is left: the cgroups the test made in it nest more than 64 "
                    "levels deep, past what resmon follows; what runs there is not seen, and any limit still binds "
                    "it (remove them, deepest first, with rmdir, once nothing runs there)")
        else:
            said = f"resmon: cannot remove the cgroup {leaf[1]}: {error.strerror or error}"
        item.warn(pytest.PytestWarning(said))


# The CPU of threads running beside a test that is said in its record
# (taken out of cpu_sec whatever it is); the CPU above which such a thread
# ran in the call, and the page faults above which it touched memory (1
# MiB): then it is named and the figures it enters judge no limit.
# xdist's channel thread stays under both (under 1 ms a call here).
_BESIDE_THREAD_NS = 1_000_000
_BESIDE_THREAD_RAN_NS = 10_000_000
_BESIDE_THREAD_FAULTS = 256


def _process_cpu_ns(pid: int) -> int | None:
    """A process's CPU time in nanoseconds: its CPU clock, the kernel's sum
    over all its threads, those that ended included (clock_getcpuclockid's
    clock, CPUCLOCK_SCHED of the process: a sum over the live threads'
    schedstat lost a threading server's request threads, and its work
    passed as none, review 65); utime + stime in clock ticks where the clock
    is refused; None when it is gone."""
    try:
        return time.clock_gettime_ns(((~pid) << 3) | 2)
    except OSError:
        pass
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rpartition(b")")[2].split()
        return (int(fields[11]) + int(fields[12])) * 1_000_000_000 // _CLOCK_TICKS
    except (OSError, ValueError, IndexError):
        return None


def _thread_usage(tid: int) -> tuple[int, int] | None:
    """A thread of this process's CPU time in nanoseconds (schedstat's run
    time: the clock getrusage sums; utime + stime in clock ticks where the
    kernel has no schedstat) and its page faults (minor and major), from
    /proc/self/task/TID, or None when it is gone."""
    try:
        with open(f"/proc/self/task/{tid}/stat", "rb") as f:
            fields = f.read().rpartition(b")")[2].split()
        faults = int(fields[7]) + int(fields[9])  # minflt and majflt (stat fields 10 and 12)
        try:
            with open(f"/proc/self/task/{tid}/schedstat", "rb") as f:
                return int(f.read().split()[0]), faults
        except (OSError, ValueError, IndexError):  # no schedstat (gVisor, a kernel without it): the ticks
            return (int(fields[11]) + int(fields[12])) * 1_000_000_000 // _CLOCK_TICKS, faults
    except (OSError, ValueError, IndexError):
        return None


def _threads(own: "set[Any] | frozenset[Any]" = frozenset()) -> dict[Any, str]:
    """This process's threads but the main one, the one asking (the test's:
    pytest.main may run on another) and those of own (the plugin's
    monitor's): key -> name."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    found = {}
    try:
        tids = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        return found
    for tid in tids:
        comm = _comm(tid)
        start = _start_time(tid)
        if tid in (os.getpid(), threading.get_native_id()) or start is None or ("thread", tid, start) in own:
            continue
        found[("thread", tid, start)] = f"thread {names.get(tid, comm)!r}"
    return found


def _spawned_beside(processes: Any, beside: set[int]) -> bool:
    """Whether a process the monitor saw start during the window descends
    from one of beside (processes running outside the leaf when the call
    began), by the kept records' parents."""
    if not beside:
        return False
    parents = {p.pid: p.ppid for p in processes}
    for p in processes:
        if not p.start_sec >= 0:  # NaN: its start unknown, not "during the call" (review 58)
            continue
        at, hops = p.ppid, 0
        while at and hops < 64:
            if at in beside:
                return True
            at, hops = parents.get(at), hops + 1
    return False


def _descendants(roots: "set[int] | None" = None) -> dict[Any, str]:
    """Every descendant process of this one (or of roots): key -> name."""
    found, queue = {}, list(roots) if roots is not None else [os.getpid()]
    while queue:
        pid = queue.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    children = [int(c) for c in f.read().split()]
            except OSError:
                continue
            for child in children:
                start = _start_time(child)
                if start is None:  # a zombie is done (and has no children): not running, whoever's it was
                    continue
                found[("process", child, start)] = f"process {child} ({_comm(child)})"
                queue.append(child)
    return found


def _zombie_children() -> dict[tuple[int, int], float]:
    """This process's children that ended and are not yet reaped
    (zombies): (pid, start time) -> the CPU seconds the kernel adds to
    RUSAGE_CHILDREN when one is reaped (its user + system time and its own
    reaped children's: utime + stime + cutime + cstime of /proc/PID/stat,
    in clock ticks)."""
    me = os.getpid()
    children: set[int] = set()
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        tids = []
    listed = False
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/children") as f:
                children.update(int(c) for c in f.read().split())
            listed = True
        except (OSError, ValueError):
            continue
    if not listed:  # a kernel without CONFIG_PROC_CHILDREN: every process's parent
        try:
            children = {int(name) for name in os.listdir("/proc") if name.isdigit()}
        except OSError:
            children = set()
    found = {}
    for pid in children:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
            fields = stat[stat.rindex(b")") + 2:].split()
            if fields[0] != b"Z" or int(fields[1]) != me:  # running, or the id of another process now
                continue
            found[(pid, int(fields[19]))] = sum(int(t) for t in fields[11:15]) / _CLOCK_TICKS
        except (OSError, ValueError, IndexError):  # reaped meanwhile
            continue
    return found


def _comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


def _start_time(pid: int) -> int | None:
    """The process's (or this process's thread's) start time, which tells a reused id apart."""
    try:
        with open(f"/proc/self/task/{pid}/stat" if os.path.exists(f"/proc/self/task/{pid}") else f"/proc/{pid}/stat",
                  "rb") as f:
            stat = f.read()
        state = stat[stat.rindex(b")") + 2:].split()
        return None if state[0] == b"Z" else int(state[19])
    except (OSError, ValueError, IndexError):
        return None


def _still_running(key: Any) -> bool:
    kind, pid, start = key
    return start is not None and _start_time(pid) == start


def _over_limits(record: dict[str, Any], limits: dict[str, float],
                 slack: dict[str, float] | None = None) -> tuple[str, str] | None:
    """The failure's lines and its short-summary line, or None within limits.
    slack: how far a figure may be above the truth (cpu_sec_error_sec); a
    limit fails only what is over it even so."""
    lines, short = [], []
    for key, limit in limits.items():
        value = record.get(key)
        if value is None:
            lines.append(f"resmon_limit: {key} was not measured (limit {limit:g})")
            short.append(f"{key} not measured")
        elif value - (slack or {}).get(key, 0.0) > limit:
            lines.append(f"resmon_limit: {key} = {value:.4g} exceeds the limit of {limit:g}")
            short.append(f"{key} {value:.4g} > {limit:g}")
    return ("\n".join(lines), "resmon_limit: " + "; ".join(short)) if lines else None


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
