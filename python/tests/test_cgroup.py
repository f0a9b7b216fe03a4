"""ResourceMonitor(cgroup_path=..., cgroup_members=...) and the summary's
cgroup figures, on a real cgroup this test makes (root with cgroup v1's
memory hierarchy, or cgroup v2 with the memory controller); elsewhere the
tests that need one are skipped, saying why.  The workload is synchronised
through its pipes, never by sleeping."""

import errno
import json
import os
import subprocess
import sys
import uuid

import pytest

from helpers import SAFETY_SEC

from resmon import ResourceMonitor, ResourceSummary, _resmon
from resmon._records import CGROUP_KEYS

MIB = 1 << 20

# Touches 64 MiB, says "ready", holds it until stdin closes.
HOLDER = """
import sys
block = bytearray(64 << 20)
block[::4096] = b"x" * len(range(0, len(block), 4096))
print("ready", flush=True)
sys.stdin.read()
"""


def memory_cgroup_parent():
    """(this process's memory cgroup directory, version), or (None, why not)."""
    if os.geteuid() != 0:
        return None, "making a cgroup needs root"
    with open("/proc/self/cgroup") as f:
        lines = [line.rstrip("\n").split(":", 2) for line in f]
    with open("/proc/self/mountinfo") as f:
        mounts = [line.split() for line in f]
    v1 = [path for _, controllers, path in lines if "memory" in controllers.split(",")]
    v2 = [path for hierarchy, controllers, path in lines if hierarchy == "0" and controllers == ""]
    for m in mounts:
        kind, options = m[m.index("-") + 1], m[m.index("-") + 3].split(",")
        if v1 and kind == "cgroup" and "memory" in options:
            return os.path.join(m[4], os.path.relpath(v1[0], m[3])), 1
    for m in mounts:
        if v2 and m[m.index("-") + 1] == "cgroup2":
            parent = os.path.join(m[4], os.path.relpath(v2[0], m[3]))
            try:
                with open(os.path.join(parent, "cgroup.subtree_control")) as f:
                    if "memory" in f.read().split():
                        return parent, 2
            except OSError:
                pass
            return None, f"cgroup v2 at {parent} without the memory controller for its children"
    return None, "no cgroup v1 memory hierarchy nor cgroup v2 mounted"


PARENT, VERSION = memory_cgroup_parent()
needs_cgroup = pytest.mark.skipif(PARENT is None, reason=f"no cgroup to make: {VERSION}")


@pytest.fixture
def cgroup():
    """A new, empty cgroup (removed afterwards) and its version."""
    path = os.path.join(PARENT, f"resmon-pytest-{uuid.uuid4().hex[:12]}")
    try:
        os.mkdir(path)
    except OSError as error:
        pytest.skip(f"cannot make a cgroup in {PARENT}: {error}")
    yield path
    os.rmdir(path)


@pytest.fixture
def holder_in(cgroup):
    """A process moved into the cgroup before it touches 64 MiB there;
    yields it once it holds them."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, preexec_fn=lambda: _join(cgroup, os.getpid()))
    try:
        assert proc.stdout.readline() == "ready\n"
        yield proc
    finally:
        proc.stdin.close()
        proc.wait(timeout=SAFETY_SEC)
        proc.stdout.close()


def _join(cgroup, pid):
    with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
        f.write(str(pid))


def kernel_peak_mb(cgroup):
    name = "memory.max_usage_in_bytes" if VERSION == 1 else "memory.peak"
    with open(os.path.join(cgroup, name)) as f:
        return int(f.read()) / MIB


@needs_cgroup
def test_cgroup_members_are_monitored_and_its_figures_are_the_kernels(cgroup, holder_in):
    with ResourceMonitor(0.01, cgroup_path=cgroup, cgroup_members=True) as mon:
        pass
    summary, samples = mon.summary, mon.samples
    assert summary.cgroup_version == VERSION
    assert summary.cgroup_error == 0
    # The members are the holder: its 64 MiB are the processes' RSS.
    assert summary.peak_rss_mb >= 64
    assert all(s.cgroup_mem_mb >= 64 for s in samples), [s.cgroup_mem_mb for s in samples]
    # The cgroup's peak is the kernel's, read after the window (the holder
    # still holds its memory: nothing was charged in between that fell).
    if VERSION == 2 and not os.path.exists(os.path.join(cgroup, "memory.peak")):
        assert summary.cgroup_peak_mb is None or summary.cgroup_peak_mb >= 64
    else:
        assert 64 <= summary.cgroup_peak_mb <= kernel_peak_mb(cgroup)
    assert summary.cgroup_peak_mb >= max(s.cgroup_mem_mb for s in samples)
    assert summary.cgroup_oom_kills in (None, 0)
    # to_dict is the C library's JSON, cgroup keys included, both ways.
    d = summary.to_dict()
    assert d["cgroup_version"] == VERSION
    assert [k for k in d if k.startswith("cgroup_")] == ["cgroup_version"] + [
        k for k in CGROUP_KEYS if getattr(summary, k) is not None]
    fields = {f: getattr(summary, f) for f in summary.__dataclass_fields__ if f != "phases"}
    assert json.dumps(d) == _resmon.summary_to_json(fields)
    assert ResourceSummary.from_dict(json.loads(json.dumps(d))).to_dict() == d


@needs_cgroup
def test_a_cgroup_beside_this_process_gives_its_figures_not_its_processes(cgroup, holder_in):
    with ResourceMonitor(0.01, cgroup_path=cgroup) as mon:
        pass
    summary = mon.summary
    assert summary.cgroup_version == VERSION
    assert summary.peak_rss_mb < 64 + summary.mean_rss_mb  # this process, not the holder
    assert min(s.cgroup_mem_mb for s in mon.samples) >= 64  # the holder's cgroup


def test_a_missing_cgroup_opens_the_window_with_its_errno_and_no_figures(tmp_path):
    with ResourceMonitor(0.01, cgroup_path=tmp_path / "no-such-cgroup") as mon:
        pass
    summary = mon.summary
    assert summary.num_samples >= 2
    assert summary.cgroup_error == -errno.ENOENT
    assert summary.cgroup_version is None
    assert all(getattr(summary, key) is None for key in CGROUP_KEYS)
    assert all(s.cgroup_mem_mb is None for s in mon.samples)
    assert not any(k.startswith("cgroup_") for k in summary.to_dict())


def test_without_a_cgroup_every_cgroup_field_is_unknown():
    with ResourceMonitor(0.01) as mon:
        pass
    summary = mon.summary
    assert (summary.cgroup_version, summary.cgroup_error) == (None, 0)
    assert all(getattr(summary, key) is None for key in CGROUP_KEYS)
    assert mon.samples[0].cgroup_mem_mb is None
    assert CGROUP_KEYS == ("cgroup_peak_mb", "cgroup_oom_kills", "cgroup_throttled_sec", "cgroup_nr_throttled",
                           "cgroup_io_read_bytes", "cgroup_io_write_bytes", "walk_interval_sec")


def test_cgroup_members_needs_a_cgroup_and_no_pid(tmp_path):
    with pytest.raises(ValueError, match="cgroup_members needs cgroup_path"):
        ResourceMonitor(0.01, cgroup_members=True)
    with pytest.raises(ValueError, match="cgroup_members needs cgroup_path"):
        ResourceMonitor(0.01, cgroup_path=tmp_path, cgroup_members=True, pid=os.getpid())
    mon = ResourceMonitor(0.01, cgroup_path=tmp_path / "no-such-cgroup", cgroup_members=True)
    with pytest.raises(OSError) as raised:
        mon.__enter__()
    assert raised.value.errno == errno.ENOENT
    assert not mon.running


def test_from_dict_reads_cgroup_keys_and_checks_them():
    seed = {"peak_rss_mb": 1.0, "mean_rss_mb": 1.0, "peak_gpu_mem_mb": None, "mean_gpu_util": None,
            "memory_growth_mb": 0.0, "num_samples": 2, "duration_sec": 0.1}
    d = {**seed, "cgroup_version": 2, "cgroup_peak_mb": 12.5, "cgroup_io_write_bytes": 4096.0}
    summary = ResourceSummary.from_dict(d)
    assert (summary.cgroup_version, summary.cgroup_peak_mb, summary.cgroup_io_write_bytes) == (2, 12.5, 4096.0)
    assert summary.to_dict() == d
    assert json.dumps(summary.to_dict()) == _resmon.summary_to_json(d)
    for bad in ({"cgroup_version": 3}, {"cgroup_version": True}, {"cgroup_peak_mb": "12"}, {"cgroup_error": 5}):
        with pytest.raises(ValueError):
            ResourceSummary.from_dict({**seed, **bad})


LEAF_CHILD = """
import os, sys
from resmon import _resmon
try:
    leaf, path, version = _resmon.cgroup_create(0)
except OSError as error:
    print("skip", error)
    sys.exit(0)
path = os.fsdecode(path)
_resmon.cgroup_join(leaf, 0)
with open(os.path.join(path, "cgroup.procs")) as f:
    inside = [int(pid) for pid in f]
block = bytearray(32 << 20)
block[::4096] = b"x" * len(range(0, len(block), 4096))
peak = "memory.max_usage_in_bytes" if version == 1 else "memory.peak"
with open(os.path.join(path, peak)) as f:
    peak_mb = int(f.read()) / (1 << 20)
_resmon.cgroup_remove(leaf)
try:
    _resmon.cgroup_remove(leaf)
    twice = "removed twice"
except ValueError as error:
    twice = str(error)
print(inside == [os.getpid()], version in (1, 2), 32 <= peak_mb < 40, os.path.exists(path), twice)
"""


def test_the_binding_makes_joins_and_removes_a_leaf_cgroup():
    # In a child of its own, so that this process never changes cgroup.
    result = subprocess.run([sys.executable, "-c", LEAF_CHILD], capture_output=True, text=True, timeout=SAFETY_SEC)
    assert result.returncode == 0, result.stderr
    if result.stdout.startswith("skip"):
        pytest.skip(f"no leaf cgroup can be made here: {result.stdout.strip()}")
    assert result.stdout == "True True True False the cgroup was removed\n"
