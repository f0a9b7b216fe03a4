#!/usr/bin/env python3
"""Tests of `resmon --repeat N [--warmup K]`, run on the real binary.

The command is a small shell script that counts its runs in a file and then
runs WORKLOAD (tests/cli/workload.c) as the run's number says, so a test
knows which run did what: how many ran, which one failed, was slow or held
more memory, and where a signal lands.
Environment: RESMON (the command), WORKLOAD.
"""
import json
import os
import select
import shutil
import signal
import statistics
import subprocess
import tempfile
import time
import unittest

# tests/cli/helpers.py: the signal dispositions, the environment and resmon().
from helpers import RESMON, SAFETY_NET_SEC, SANITIZED, WORKLOAD, Ready, require_strace, resmon

# The workload never frees what it holds: LeakSanitizer (in the ASan suite)
# would call that a leak and fail the run.
ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")

# $1: the counter file; then one "N:ARGS" per run that differs (WORKLOAD's
# arguments for run N, counted from 1 with the warm-up runs); the last
# argument: WORKLOAD's arguments for every other run.
COUNTING_SCRIPT = """\
counter=$1; shift
n=$(( $(cat "$counter" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$counter"
while [ $# -gt 1 ]; do
    case $1 in "$n":*) set -- "${1#*:}"; break ;; esac
    shift
done
exec "$WORKLOAD" $1
"""


def kill_listed(pids):
    """SIGKILL to each pid listed in the file pids, one a line (a test's
    leftovers, whatever the test asserted)."""
    if os.path.exists(pids):
        with open(pids) as f:
            for line in f:
                try:
                    os.kill(int(line), signal.SIGKILL)
                except ProcessLookupError:
                    pass


class Repeat(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.counter = self.path("count")
        self.output = self.path("runs.json")

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def command(self, *per_run, default="exit 0"):
        """The counting command: per_run ("2:exit 3", ...), else default."""
        return ["sh", "-c", COUNTING_SCRIPT, "sh", self.counter, *per_run, default]

    def runs_started(self):
        with open(self.counter) as f:
            return int(f.read())

    def repeat(self, *args, command=None, **kw):
        return resmon(*args, "--", *(command or self.command()), env=dict(ENV, WORKLOAD=WORKLOAD), **kw)

    def load(self):
        with open(self.output) as f:
            return json.load(f)  # the multi-run JSON is plain JSON: Python reads it as it is

    def assert_one_line(self, r, code, *words):
        self.assertEqual(r.returncode, code, r.stderr)
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        for word in words:
            self.assertIn(word, lines[0])


class Format(Repeat):
    def test_runs_are_full_runs_and_stats_cover_every_numeric_key_of_every_run(self):
        r = self.repeat("-q", "-i", "0.01", "--repeat", "3", "--warmup", "1", "-o", self.output,
                        command=self.command(default="mem 8 0.05"))
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = self.load()
        self.assertEqual(doc["resmon_repeat"], 1)
        self.assertEqual(doc["command"], self.command(default="mem 8 0.05"))
        self.assertEqual((doc["repeat"], doc["warmup"], doc["completed"]), (3, 1, 3))
        self.assertEqual(len(doc["runs"]), 3)
        self.assertEqual(self.runs_started(), 4)
        # Each run is what `resmon -o` writes for one run: the same keys.
        single = self.path("single.json")
        self.assertEqual(self.repeat("-q", "-i", "0.01", "-o", single, command=self.command(default="mem 8 0.05"))
                         .returncode, 0)
        with open(single) as f:
            single_keys = set(json.load(f))
        for run in doc["runs"]:
            self.assertEqual(set(run), single_keys)
            self.assertEqual(run["exit_status"], 0)
            self.assertGreaterEqual(run["exact_peak_rss_mb"], 8)  # its own exact figures
        numeric = [k for k, v in doc["runs"][0].items()
                   if all(isinstance(run.get(k), (int, float)) and not isinstance(run.get(k), bool)
                          for run in doc["runs"])]
        self.assertEqual(list(doc["stats"]), numeric)
        for key in ("wall_sec", "cpu_sec", "exact_peak_rss_mb", "exit_status"):
            values = [run[key] for run in doc["runs"]]
            s = doc["stats"][key]
            self.assertEqual(s["n"], 3)
            self.assertAlmostEqual(s["median"], statistics.median(values))
            self.assertAlmostEqual(s["mean"], statistics.mean(values))
            self.assertAlmostEqual(s["stddev"], statistics.stdev(values))
            self.assertEqual((s["min"], s["max"]), (min(values), max(values)))

    def test_stdout_output_is_one_line_on_a_line_of_its_own(self):
        # stdout a regular file, as a job's log: resmon can see the command's
        # output did not end its line (on a pipe it cannot: as without --repeat).
        with open(self.path("stdout"), "w+") as out:
            r = subprocess.run([RESMON, "-q", "--repeat", "2", "-o", "-", "--", "sh", "-c", "printf 'no newline'"],
                               stdout=out, stderr=subprocess.PIPE, text=True, timeout=SAFETY_NET_SEC)
            out.seek(0)
            lines = out.read().splitlines()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(lines), 2, lines)
        self.assertEqual(lines[0], "no newlineno newline")
        self.assertEqual(json.loads(lines[1])["completed"], 2)

    def test_marks_work_in_each_run(self):
        mark = f"'{RESMON}' mark"
        r = self.repeat("-q", "--repeat", "2", "-o", self.output,
                        command=["sh", "-c", f"{mark} load && {mark} work"])
        self.assertEqual(r.returncode, 0, r.stderr)
        for run in self.load()["runs"]:
            self.assertEqual([p["name"] for p in run["phases"] if p["name"]], ["load", "work"])
            self.assertEqual(run["marks_dropped"], 0)

    def test_table_shows_median_spread_and_range(self):
        r = self.repeat("--repeat", "3", command=self.command(default="mem 4 0.01"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("3 runs measured: all exited with status 0", r.stderr)
        self.assertIn("median \u00b1 stddev", r.stderr)
        rows = [line for line in r.stderr.splitlines() if line.strip().startswith(("wall time", "CPU time"))]
        self.assertEqual(len(rows), 2, r.stderr)
        for row in rows:
            self.assertRegex(row, r"[0-9.]+ \u00b1 [0-9.]+ s +[0-9.]+ \u2026 [0-9.]+ s$")
        self.assertEqual(len([l for l in r.stderr.splitlines() if l.startswith("resmon: run ")]), 3)
        quiet = self.repeat("-q", "--repeat", "2")
        self.assertEqual((quiet.returncode, quiet.stderr), (0, ""))


class Failures(Repeat):
    def test_a_failed_run_stops_the_repeat_with_its_status_and_the_runs_so_far_are_written(self):
        r = self.repeat("-q", "--repeat", "5", "-o", self.output, command=self.command("2:exit 3"))
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertEqual(self.runs_started(), 2)
        doc = self.load()
        self.assertEqual((doc["repeat"], doc["completed"], doc["failed"]), (5, 2, 1))
        self.assertEqual([run["exit_status"] for run in doc["runs"]], [0, 3])
        self.assertIn("--ignore-failure", r.stderr)

    def test_what_a_run_leaves_running_is_never_counted_in_the_next(self):
        # review of issue 30: resmon, a subreaper, kept each run's orphan as
        # its child; the next run counted it (orphans_left 1, 2, 3; the
        # sampled tree and peak_nprocs grew run by run). Now the repeat waits
        # for them, unmeasured, between two runs (for up to a second: below).
        r = self.repeat("-q", "--repeat", "3", "-o", self.output, command=["sh", "-c", "sleep 0.3 & exit 0"])
        self.assertEqual(r.returncode, 0, r.stderr)
        left = [run["orphans_left"] for run in self.load()["runs"]]
        self.assertTrue(all(n <= 1 for n in left), left)  # 0 only where a run outlasted its orphan (a busy machine)
        for i, n in enumerate(left[:-1]):
            self.assertEqual(f"resmon: run {i + 1} left 1 process running: waited for it before the next run" in
                             r.stderr, n == 1, r.stderr)

    def test_a_daemon_a_run_leaves_running_is_ended_before_the_next_run(self):
        # Review of issue 30: the wait between runs had no end, so a command
        # that starts a daemon hung the repeat before its second run.  What
        # still runs a second after its run is ended as the run's leftover.
        pids = self.path("pids")
        daemon = f"sleep 1000 >/dev/null 2>&1 & echo $! >> {pids}; exit 0"
        try:
            r = self.repeat("-q", "--repeat", "3", "-o", self.output, command=["sh", "-c", daemon])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(self.load()["completed"], 3)
            for i in (1, 2):
                self.assertIn(f"resmon: run {i} left 1 process running for over 1 s (a daemon?): ended it (SIGTERM) "
                              "before the next run", r.stderr)
            self.assertNotIn("run 3 left", r.stderr)  # the last run's is said as one run's: still running
            with open(pids) as f:
                started = [int(line) for line in f]
            self.assertEqual(len(started), 3)
            for pid in started[:2]:  # ended and reaped: no such process
                with self.assertRaises(ProcessLookupError):
                    os.kill(pid, 0)
        finally:
            kill_listed(pids)

    def test_a_leftover_and_what_it_started_are_said_in_one_line_with_the_count_ended(self):
        # Review: each run before the last said its leftover twice (the
        # run's "1 process started by the command still run", then the
        # repeat's line), and "ended it" though the leftover's own children,
        # resmon's once it ended, were ended too: 3 processes, said as 1.
        pids, ready = self.path("pids"), self.path("ready")
        os.mkfifo(ready)
        daemon = (f"sleep 1000 </dev/null >/dev/null 2>&1 & echo $! >> {pids}; "
                  f"sleep 1000 </dev/null >/dev/null 2>&1 & echo $! >> {pids}; echo $$ >> {pids}; "
                  f"echo go > {ready}; wait")
        command = ["sh", "-c", f"sh -c '{daemon}' </dev/null >/dev/null 2>&1 & read x < {ready}; exit 0"]
        try:
            r = self.repeat("-q", "--repeat", "3", "-o", self.output, command=command)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(self.load()["completed"], 3)
            for i in (1, 2):
                self.assertIn(f"resmon: run {i} left 1 process running for over 1 s (a daemon?): ended it and what it "
                              "started, 3 processes (SIGTERM) before the next run", r.stderr)
            # One line a run before the last; the last run's leftover is said as one run's.
            self.assertEqual(r.stderr.count("started by the command still run"), 1, r.stderr)
            self.assertEqual(len(r.stderr.splitlines()), 3, r.stderr)
            self.assertIn("resmon: 1 process started by the command still runs;", r.stderr)
            with open(pids) as f:
                started = [int(line) for line in f]
            self.assertEqual(len(started), 9)
            for pid in started[:6]:  # ended and reaped: no such process
                with self.assertRaises(ProcessLookupError):
                    os.kill(pid, 0)
        finally:
            kill_listed(pids)

    def test_a_leftover_that_refuses_every_signal_costs_one_try_not_eleven_seconds(self):
        # Review of issue 28: a leftover resmon may not signal (kill fails
        # with EPERM: it became another user, and resmon has no CAP_KILL)
        # was tried 10 times with SIGTERM and 100 with SIGKILL, 0.1 s
        # apart: 11 s before every next run, for nothing.  A try that
        # reaches none ends the tries.  The tries are counted (strace: each
        # kill(2) refused), not timed: load arriving mid-run took the new
        # way's 1.2 s past the 10 s bound it was held to.
        if os.geteuid() != 0 or not shutil.which("setpriv"):
            self.skipTest("needs root and setpriv, to make a leftover of another user that resmon cannot signal")
        require_strace(self)
        pids, kills = self.path("pids"), self.path("kills")
        as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups sleep 1000"
        command = ["sh", "-c", f"{as_nobody} </dev/null >/dev/null 2>&1 & echo $! >> {pids}; exit 0"]
        no_cap_kill = ["setpriv", "--inh-caps=-kill", "--bounding-set=-kill", RESMON]
        # Without -f: resmon's main thread, which ends the leftovers, and not
        # the commands it starts.
        strace = ["strace", "-qq", "-o", kills, "-e", "trace=kill"]
        try:
            r = subprocess.run([*strace, *no_cap_kill, "-q", "--repeat", "2", "-o", self.output, "--", *command],
                               capture_output=True, text=True, timeout=SAFETY_NET_SEC, env=ENV)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("resmon: run 1 left 1 process running: some could not be ended (SIGKILL refused): "
                          "the next runs may count them", r.stderr)
            self.assertEqual(self.load()["completed"], 2)
            with open(pids) as f:
                leftover = f.readline().strip()
            with open(kills) as f:
                refused = [line for line in f if line.startswith(f"kill({leftover}, ") and "EPERM" in line]
            # One SIGTERM and one SIGKILL, each refused: the old way's 110 tries.
            self.assertEqual([line.split(",")[1].split(")")[0].strip() for line in refused], ["SIGTERM", "SIGKILL"],
                             refused)
        finally:
            kill_listed(pids)

    def test_a_leftover_that_sigkill_does_not_end_is_said_so_not_called_refused(self):
        # Review of issue 28: a leftover in a frozen cgroup (or uninterruptible
        # sleep) takes SIGKILL and does not end until it wakes; the repeat
        # said "SIGKILL refused", which sends a user after permissions.  A v1
        # freezer holds one frozen for the test; the command freezes its own
        # daemon, in run 1 only.
        freezer_root = "/sys/fs/cgroup/freezer"
        if os.geteuid() != 0 or not os.path.isdir(freezer_root) or not os.access(freezer_root, os.W_OK):
            self.skipTest("needs root and the cgroup v1 freezer, to hold a leftover that SIGKILL cannot end at once")
        freezer = os.path.join(freezer_root, f"resmon-test-{os.getpid()}")
        os.mkdir(freezer)
        pids = self.path("pids")
        # The shell lets go of resmon's stdout and stderr first: the forked
        # daemon may be frozen before its own redirections, and a frozen
        # holder of the test's pipes would hold the test to its safety net.
        daemon = (f"exec </dev/null >/dev/null 2>&1; if [ ! -s {pids} ]; then sleep 1000 & echo $! >> {pids}; "
                  f"echo $! > {freezer}/cgroup.procs; echo FROZEN > {freezer}/freezer.state; fi; exit 0")
        try:
            r = self.repeat("-q", "--repeat", "2", "-o", self.output, command=["sh", "-c", daemon])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("resmon: run 1 left 1 process running: 1 did not end within 10 s of SIGKILL "
                          "(uninterruptible, or frozen?): the next runs may count them", r.stderr)
            self.assertNotIn("refused", r.stderr)
            self.assertEqual(self.load()["completed"], 2)
        finally:
            with open(os.path.join(freezer, "freezer.state"), "w") as f:
                f.write("THAWED")
            kill_listed(pids)
            deadline = time.monotonic() + SAFETY_NET_SEC
            while time.monotonic() < deadline:  # the thawed leftover ends; then its cgroup can go
                try:
                    os.rmdir(freezer)
                    break
                except OSError:
                    time.sleep(0.05)

    def test_a_leftover_held_as_a_zombie_by_its_tracer_is_said_to_have_ended(self):
        # Review: a leftover traced by another process ends at SIGKILL but
        # stays a zombie until its tracer waits for it; resmon, its parent,
        # cannot reap it, and said it "did not end within 10 s of SIGKILL".
        # The test is the tracer (PTRACE_SEIZE), and waits for it at the end.
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        pids, go = self.path("pids"), self.path("go")
        os.mkfifo(go)
        daemon = (f"exec </dev/null >/dev/null 2>&1; [ -s {pids} ] && exit 0; "  # run 1 only
                  f"sleep 1000 & echo $! > {pids}; read x < {go}; exit 0")
        p = subprocess.Popen([RESMON, "-q", "--repeat", "2", "-o", self.output, "--", "sh", "-c", daemon],
                             stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV)
        traced = None
        try:
            deadline = time.monotonic() + SAFETY_NET_SEC
            while not (os.path.exists(pids) and os.path.getsize(pids) > 0) and time.monotonic() < deadline:
                time.sleep(0.01)
            with open(pids) as f:
                pid = int(f.read())
            if libc.ptrace(0x4206, pid, None, None) != 0:  # PTRACE_SEIZE
                err = ctypes.get_errno()
                with open(go, "w") as f:
                    f.write("go\n")
                self.skipTest(f"cannot trace the leftover: {os.strerror(err)}")
            traced = pid
            with open(go, "w") as f:
                f.write("go\n")
            # run 1's leftover line comes once the tries end (~12 s)
            ready, _, _ = select.select([p.stderr], [], [], SAFETY_NET_SEC)
            line = p.stderr.readline() if ready else "(nothing within the safety net)"
            self.assertEqual(line, "resmon: run 1 left 1 process running: 1 ended but is held by a tracer (a zombie "
                                   "only it can release): the next runs may count them\n")
            with open(f"/proc/{pid}/stat") as f:
                self.assertEqual(f.read().rsplit(")", 1)[1].split()[0], "Z")
            os.waitpid(pid, 0x40000000)  # __WALL: the tracer's wait hands the zombie back to its parent
            traced = None
            err = p.stderr.read()
            self.assertEqual(p.wait(timeout=SAFETY_NET_SEC), 0, err)
            self.assertEqual(self.load()["completed"], 2)
        finally:
            if traced is not None:
                try:
                    os.kill(traced, signal.SIGKILL)
                    os.waitpid(traced, 0x40000000)
                except OSError:
                    pass
            if p.poll() is None:
                p.kill()
            p.wait()
            p.stderr.close()
            kill_listed(pids)

    def test_a_signal_in_the_wait_for_a_leftover_ends_it_as_the_repeat_stops(self):
        # Review: SIGTERM while the repeat gave a run's leftover its grace
        # said only "the wait for it was cut short by a signal", and the
        # daemon, which the repeat ends between two runs, ran on past
        # resmon's exit.  Now the signal cuts the grace, not the ending.
        # The progress line of run 1 comes just before the grace: the signal
        # sent on it lands in its second, or (a machine stalled for that
        # second) after it, when the daemon was ended the normal way and run
        # 2 started: that try is made again.
        pids = self.path("pids")
        daemon = f"sleep 1000 >/dev/null 2>&1 & echo $! >> {pids}; exit 0"
        try:
            for attempt in range(5):
                if os.path.exists(pids):
                    os.unlink(pids)
                p = subprocess.Popen([RESMON, "--repeat", "3", "-o", self.output, "--", "sh", "-c", daemon],
                                     stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV)
                try:
                    line = p.stderr.readline()
                    self.assertTrue(line.startswith("resmon: run 1/3: status 0"), line)
                    p.send_signal(signal.SIGTERM)
                    code = p.wait(timeout=SAFETY_NET_SEC)
                    err = p.stderr.read()
                finally:
                    p.kill()
                    p.wait()
                    p.stderr.close()
                if "run 1 left 1 process running for over 1 s" not in err:
                    break  # the signal came within the grace
            else:
                self.skipTest("the signal never came within the leftover's 1 s grace (a stalled machine)")
            self.assertEqual(code, 128 + signal.SIGTERM, err)
            lines = err.splitlines()
            self.assertEqual(lines[:2], ["resmon: run 1 left 1 process running: a signal cut the wait for it short: "
                                         "ended it (SIGTERM) as the repeat stops",
                                         f"resmon: signal {int(signal.SIGTERM)} (Terminated) stops the repeat; "
                                         "1 measured run kept"], err)
            with open(pids) as f:
                started = [int(line) for line in f]
            self.assertEqual(len(started), 1)
            with self.assertRaises(ProcessLookupError):  # ended and reaped, not left running
                os.kill(started[0], 0)
            self.assertEqual((self.load()["completed"], self.load()["interrupted"]), (1, True))
        finally:
            kill_listed(pids)

    def test_a_run_that_stops_the_repeat_still_says_what_it_left_running(self):
        # The repeat's own line about a leftover comes only when the next run
        # follows; a failed run that stops the repeat says it as one run does.
        pids = self.path("pids")
        try:
            r = self.repeat("-q", "--repeat", "3", "-o", self.output,
                            command=["sh", "-c", f"sleep 1000 >/dev/null 2>&1 & echo $! >> {pids}; exit 3"])
            self.assertEqual(r.returncode, 3, r.stderr)
            self.assertIn("resmon: 1 process started by the command still runs; not measured further", r.stderr)
            self.assertIn("the repeat stops at a failed run (status 3)", r.stderr)
            self.assertNotIn("left 1 process", r.stderr)
        finally:
            kill_listed(pids)

    @unittest.skipUnless(os.environ.get("FAIL_MEMSTREAM_LIB"),
                         "FAIL_MEMSTREAM_LIB (tests/cli/fail_memstream.c, built as libcli_fail_memstream.so) not set")
    def test_a_run_whose_summary_finds_no_memory_still_says_what_it_left_running(self):
        # Review: after a run, its summary failing for want of memory stopped
        # the repeat (125) without a word of the process the run left
        # running, which the repeat was to say.  open_memstream() fails here
        # (tests/cli/fail_memstream.c, preloaded into resmon only).
        pids = self.path("pids")
        try:
            r = resmon("-q", "--repeat", "3", "-o", self.output, "--", "sh", "-c",
                       f"sleep 1000 >/dev/null 2>&1 & echo $! >> {pids}",
                       env=dict(ENV, LD_PRELOAD=os.environ["FAIL_MEMSTREAM_LIB"]))
            self.assertEqual(r.returncode, 125, r.stderr)
            self.assertEqual(r.stderr, "resmon: out of memory\nresmon: 1 process started by the command still runs; "
                                       "not measured further (--wait-orphans waits for them)\n")
            self.assertFalse(os.path.exists(self.output))
        finally:
            kill_listed(pids)

    def test_a_failed_warmup_run_stops_it_too_and_writes_nothing(self):
        with open(self.output, "w") as f:
            f.write("before")
        r = self.repeat("-q", "--repeat", "3", "--warmup", "2", "-o", self.output, command=self.command("1:exit 4"))
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertEqual(self.runs_started(), 1)
        with open(self.output) as f:
            self.assertEqual(f.read(), "before")  # nothing measured: the path is as it was

    def test_ignore_failure_runs_them_all(self):
        r = self.repeat("-q", "--repeat", "4", "--ignore-failure", "-o", self.output,
                        command=self.command("2:exit 3", "3:exit 5"))
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = self.load()
        self.assertEqual((doc["completed"], doc["failed"]), (4, 2))
        self.assertEqual([run["exit_status"] for run in doc["runs"]], [0, 3, 5, 0])

    def test_ignore_failure_never_passes_a_command_that_always_failed(self):
        # review 4 of issue 30, finding 8: every run exited 3, and the repeat
        # exited 0 -- a CI step green on a command that never succeeded.
        r = self.repeat("-q", "--repeat", "3", "--ignore-failure", "-o", self.output, command=["sh", "-c", "exit 3"])
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("resmon: every measured run failed (the last with status 3): the repeat exits with it", r.stderr)
        doc = self.load()
        self.assertEqual((doc["completed"], doc["failed"]), (3, 3))

    def test_a_command_that_cannot_run_writes_nothing(self):
        r = self.repeat("-q", "--repeat", "3", "-o", self.output, command=[self.path("missing")])
        self.assertEqual(r.returncode, 127, r.stderr)
        self.assertFalse(os.path.exists(self.output))

    def test_an_unwritable_output_fails_before_any_run(self):
        r = self.repeat("-q", "--repeat", "3", "-o", self.path("no/such/dir.json"))
        self.assertEqual(r.returncode, 125, r.stderr)
        self.assertFalse(os.path.exists(self.counter))

    def test_sigterm_stops_the_repeat_and_the_finished_runs_are_written(self):
        ready = Ready()
        args = ready.popen_args()
        args["env"].update(ENV, WORKLOAD=WORKLOAD)
        p = subprocess.Popen([RESMON, "-q", "--repeat", "5", "-o", self.output, "--",
                              *self.command("2:sleep 60")], stderr=subprocess.PIPE, text=True, **args)
        try:
            ready.wait()  # run 2 sleeps
            p.send_signal(signal.SIGTERM)
            self.assertEqual(p.wait(timeout=SAFETY_NET_SEC), 128 + signal.SIGTERM)
            self.assertEqual(p.stderr.read(), f"resmon: signal {int(signal.SIGTERM)} (Terminated) stops the repeat "
                                              "(that run is not measured); 1 measured run kept\n")
        finally:
            p.kill()
            p.wait()
            p.stderr.close()
        self.assertEqual(self.runs_started(), 2)
        doc = self.load()
        # The run cut short is not measured: runs holds the one that finished.
        self.assertEqual((doc["completed"], doc["interrupted"]), (1, True))
        self.assertEqual(doc["runs"][0]["exit_status"], 0)

    def test_a_run_ended_by_ctrl_c_stops_the_repeat_even_with_ignore_failure(self):
        # Ctrl-C on a terminal goes to the command's process group, not to
        # resmon: the command dies of SIGINT and resmon sees only that.
        script = ('n=$(( $(cat "$1" 2>/dev/null || echo 0) + 1 )); echo "$n" > "$1"; '
                  'if [ "$n" = 2 ]; then kill -INT $$; fi')
        r = self.repeat("-q", "--repeat", "5", "--ignore-failure", "-o", self.output,
                        command=["sh", "-c", script, "sh", self.counter])
        self.assertEqual(r.returncode, 128 + signal.SIGINT, r.stderr)
        self.assertIn(f"resmon: a run ended by signal {int(signal.SIGINT)} (Interrupt) stops the repeat", r.stderr)
        self.assertEqual(self.runs_started(), 2)
        doc = self.load()
        self.assertEqual((doc["completed"], doc["interrupted"], doc["failed"]), (1, True, 0))



class Warnings(Repeat):
    def test_a_run_far_from_the_others_is_an_outlier(self):
        r = self.repeat("-i", "0.01", "--repeat", "6", "-o", self.output,
                        command=self.command("4:mem 120 0.01", default="mem 8 0.01"))
        self.assertEqual(r.returncode, 0, r.stderr)
        warnings = self.load()["warnings"]
        # Under a sanitizer the workload's own peak varies by megabytes
        # (its allocator's quarantine and shadow pages): a fresh clone's
        # ASan stage, under load, saw run 5 at 17.8 MiB against a median
        # of 13.5 called an outlier too -- rightly, it was one.  Run 4 must
        # be named either way; that it is the only one, where none runs.
        count = "1 of 6" if not SANITIZED else ""
        self.assertTrue(any(w.startswith(f"exact peak RSS: {count}") and "runs are outliers" in w and "run 4 (" in w
                            for w in warnings), warnings)
        self.assertIn(f"warning: exact peak RSS: {count}", r.stderr)

    def test_a_slow_first_run_looks_cold(self):
        # "Far above" is measured against the quick runs' own spread (ten
        # robust deviations): load arriving meanwhile (a sanitizer's CI stage
        # beside other work: quick runs varying by tenths of a second) widens that spread
        # past a 1.5 s cold run, and then the run is rightly not called cold.
        # So the cold run grows (1.5, 5, 15 s) until it is far above whatever
        # the spread was; a first run 15 s above quick ones must be called cold.
        for cold_sec in (1.5, 5, 15):
            if os.path.exists(self.counter):
                os.unlink(self.counter)
            r = self.repeat("--repeat", "6", "-o", self.output, command=self.command(f"1:sleep {cold_sec}"))
            self.assertEqual(r.returncode, 0, r.stderr)
            report = self.load()
            warnings = report["warnings"]
            if any(w.startswith("the first run took") and "--warmup 1" in w for w in warnings):
                break
            walls = [run["wall_sec"] for run in report["runs"]]
        else:
            self.fail(f"no cold-run warning even with a {cold_sec} s first run: {walls}")
        self.assertIn("warning: the first run took", r.stderr)

    def test_equal_runs_give_no_warning(self):
        # 40 MiB: a peak that differs by a few pages between runs is well
        # inside 1 % of it.  Not under a sanitizer: there one run of equal
        # ones was seen 4 MiB above the others (see the test above).
        if SANITIZED:
            self.skipTest("a sanitizer's runtime makes equal runs' peaks differ by megabytes")
        r = self.repeat("-q", "--repeat", "5", "-o", self.output, command=self.command(default="mem 40 0.01"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse([w for w in self.load()["warnings"] if "exact peak RSS" in w])


class Usage(Repeat):
    def test_bad_counts_get_one_line_and_125_and_nothing_runs(self):
        for args, words in ((["--repeat", "0"], ["'0'", "1 to 100000"]),
                            (["--repeat", "-1"], ["'-1'"]),
                            (["--repeat", "100001"], ["'100001'"]),
                            (["--repeat", "99999999999999999999999"], ["'99999999999999999999999'"]),
                            (["--repeat", "ten"], ["'ten'"]),
                            (["--repeat", " 3"], ["' 3'"]),
                            (["--repeat", "3", "--warmup", "-1"], ["--warmup '-1'"]),
                            (["--repeat", "3", "--warmup", "x"], ["--warmup 'x'"]),
                            (["--warmup", "2"], ["--warmup works with --repeat only"]),
                            (["--ignore-failure"], ["--ignore-failure works with --repeat only"])):
            with self.subTest(args=args):
                self.assert_one_line(self.repeat(*args), 125, *words)
                self.assertFalse(os.path.exists(self.counter))

    def test_outputs_of_one_run_are_refused(self):
        for args, option in ((["-s", self.path("s.csv")], "-s"), (["--plot", self.path("p.svg")], "--plot"),
                             (["--serve", "127.0.0.1:9"], "--serve"), (["--push", "http://127.0.0.1:9"], "--push"),
                             (["--textfile", self.path("t.prom")], "--textfile")):
            with self.subTest(option=option):
                self.assert_one_line(self.repeat("--repeat", "2", *args), 125, f"{option} is of one run")
                self.assertFalse(os.path.exists(self.counter))

    def test_repeat_needs_a_command(self):
        self.assert_one_line(resmon("--repeat", "2", "--pid", str(os.getpid())), 125, "--repeat runs a COMMAND")
        self.assert_one_line(resmon("--repeat", "2", "--cgroup", "/"), 125, "--repeat runs a COMMAND")

    def test_help_names_the_options(self):
        out = resmon("--help").stdout
        for option in ("--repeat N", "--warmup K", "--ignore-failure"):
            self.assertIn(option, out)


if __name__ == "__main__":
    unittest.main()
