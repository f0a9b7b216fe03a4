"""summary.processes: the per-process records of a monitored tree
(resmon_monitor_get_processes), on a real tree whose one child allocates
100 MiB while two stay idle."""

import os
import subprocess
import sys
import time

import pytest

from helpers import SAFETY_SEC

from resmon import ProcessRecord, ResourceMonitor

ALLOC_MB = 100

# The tree: the root forks an allocating child and two idle ones, prints
# their pids, then obeys lines on stdin: "alloc" (the first child allocates
# and says so), "exit" (it exits; the root reaps it and says so); at EOF all
# end.  Pipes synchronise every step.
TREE = r"""
import os, sys
ALLOC_MB = %d
pipes = [os.pipe() for _ in range(3)]
pids = []
for i in range(3):
    pid = os.fork()
    if pid == 0:
        go = os.fdopen(pipes[i][0])
        if i == 0:
            go.readline()
            block = b"\x01" * (ALLOC_MB << 20)
            print("allocated", flush=True)
        go.readline()
        os._exit(0)
    pids.append(pid)
print(*pids, flush=True)
for line in sys.stdin:
    if line.strip() == "alloc":
        os.write(pipes[0][1], b"alloc\n")
    elif line.strip() == "exit":
        os.write(pipes[0][1], b"exit\n")
        os.waitpid(pids[0], 0)
        print("reaped", flush=True)
for pid in pids[1:]:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
""" % ALLOC_MB


def vm_hwm_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmHWM for {pid}")


def wait_sample_after(mon: ResourceMonitor, moment: float) -> None:
    """Until a sample taken after moment (CLOCK_MONOTONIC) is kept: its
    reading began after it.  Waits on the sampler's event, not a time."""
    deadline = time.monotonic() + 30 * float(os.environ.get("RESMON_TEST_TIME_FACTOR", "1"))
    while not any(s.timestamp > moment for s in mon.samples[-3:]):
        assert time.monotonic() < deadline, "no sample after the moment"
        time.sleep(0.001)


@pytest.fixture
def tree():
    proc = subprocess.Popen([sys.executable, "-c", TREE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        children = [int(p) for p in proc.stdout.readline().split()]
        yield proc, children
    finally:
        proc.stdin.close()
        proc.wait(timeout=SAFETY_SEC)
        proc.stdout.close()


def say(proc: subprocess.Popen, line: str) -> None:
    proc.stdin.write(line + "\n")
    proc.stdin.flush()


def test_the_allocating_child_is_the_top_record(tree) -> None:
    proc, children = tree
    with open(f"/proc/{proc.pid}/comm") as f:
        comm = f.read().strip()
    with ResourceMonitor(sample_interval_sec=0.01, pid=proc.pid, include_children=True) as mon:
        running = mon.summary
        assert running.processes == () and running.processes_seen is None  # written until the window closes
        say(proc, "alloc")
        assert proc.stdout.readline().strip() == "allocated"
        wait_sample_after(mon, time.monotonic())  # a reading saw it holding the memory
        own_hwm = vm_hwm_mb(children[0])
        say(proc, "exit")
        assert proc.stdout.readline().strip() == "reaped"
        wait_sample_after(mon, time.monotonic())  # a walk found it gone: it ended mid-window
        wait_sample_after(mon, time.monotonic())
    s = mon.summary
    assert s.processes_seen == 4
    assert len(s.processes) == 4
    assert all(isinstance(p, ProcessRecord) for p in s.processes)
    top = s.processes[0]
    assert top.pid == children[0]
    assert ALLOC_MB <= top.peak_rss_mb <= own_hwm
    assert top.end == "exited"
    assert top.cpu_sec > 0
    by_pid = {p.pid: p for p in s.processes}
    assert set(by_pid) == {proc.pid, *children}
    assert by_pid[proc.pid].ppid == os.getpid()
    assert all(by_pid[c].ppid == proc.pid for c in children)
    assert [by_pid[c].end for c in children] == ["exited", "running", "running"]
    assert by_pid[proc.pid].end == "running"
    for p in s.processes:
        assert p.comm == comm and p.source == "sampled"
        assert p.start_sec <= 0.011  # started before the window (a clock tick's rounding)
        if p.pid != children[0]:
            assert p.peak_rss_mb < ALLOC_MB
    assert top.end_sec < by_pid[proc.pid].end_sec <= s.duration_sec + 0.05
    assert top.to_dict()["pid"] == top.pid
    assert "processes" not in s.to_dict()  # the library's JSON has none


def test_one_process_has_no_records() -> None:
    with ResourceMonitor(sample_interval_sec=0.01) as mon:
        pass
    assert mon.summary.processes == () and mon.summary.processes_seen is None
