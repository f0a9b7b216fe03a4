#!/usr/bin/env python3
"""Phases marked by the monitored program (`resmon mark`, RESMON_MARK_SOCKET),
end to end on the real binary: the summary's phases, the samples' phase
column, the table's phase lines, the chart's bands, Prometheus's phase and
the count of dropped marks.

Environment: RESMON (the command), WORKLOAD (tests/cli/workload.c).
"""
import array
import csv
import fcntl
import json
import os
import subprocess
import sys
import termios
import time
import unittest
import xml.etree.ElementTree as ET

# tests/cli/helpers.py: the signal dispositions and the environment.
from helpers import NOBODY, RESMON, SAFETY_NET_SEC, TIME_FACTOR, WORKLOAD, reachable_dir
SVG = "{http://www.w3.org/2000/svg}"



def full_pipe():
    """A pipe whose buffer is full (nobody reads it): (read end, write end)."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    for chunk in (b"x" * 4096, b"x"):
        try:
            while True:
                os.write(write_end, chunk)
        except BlockingIOError:
            pass
    os.set_blocking(write_end, True)
    return read_end, write_end


def drain(fd):
    """What a non-blocking fd holds now."""
    got = b""
    try:
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                return got
            got += chunk
    except BlockingIOError:
        return got

class Marks(unittest.TestCase):
    def setUp(self):
        # A TMPDIR for the channel must be reachable by every user: not under
        # a private TMPDIR of the test run's (reachable_dir goes elsewhere).
        self.dir = reachable_dir(self, NOBODY, 0o755, "resmon-marks-test-")
        self.env = dict(os.environ, TMPDIR=self.dir.name, ASAN_OPTIONS="detect_leaks=0")
        self.env.pop("RESMON_MARK_SOCKET", None)

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def script(self, text):
        with open(self.path("w.sh"), "w") as f:
            f.write(text)
        return self.path("w.sh")

    def run_resmon(self, *args, pass_fds=()):
        return subprocess.run([RESMON, *args], capture_output=True, text=True, timeout=SAFETY_NET_SEC, env=self.env,
                              pass_fds=pass_fds)

    def channel_dirs(self):
        return [n for n in os.listdir(self.dir.name) if n.startswith("resmon-marks-")]

    def test_without_tmpdir_the_channel_is_in_dev_shm_and_goes(self):
        # No TMPDIR: the channel's directory is made in memory (/dev/shm)
        # where it can be, not on /tmp's disk, and removed at the end.
        if not os.path.isdir("/dev/shm") or not os.access("/dev/shm", os.W_OK):
            self.skipTest("no writable /dev/shm here")
        env = dict(self.env)
        env.pop("TMPDIR")
        r = subprocess.run([RESMON, "-q", "--", "sh", "-c", 'echo "$RESMON_MARK_SOCKET"; "$0" mark step', RESMON],
                           capture_output=True, text=True, timeout=SAFETY_NET_SEC, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        socket = r.stdout.strip()
        self.assertRegex(socket, r"^/dev/shm/resmon-marks-[^/]+/socket$")
        self.assertFalse(os.path.exists(os.path.dirname(socket)))

    def test_a_stale_tmpdir_gives_way_to_the_default_and_no_mark_is_lost(self):
        # Eighth review of issue 28: a TMPDIR that is gone, a file, or not
        # usable disabled the channel ("no marks from the command") and
        # both marks vanished uncounted; the default takes the channel.
        afile = self.path("file")
        open(afile, "w").close()
        for tmp in (self.path("gone"), afile, "/proc"):
            with self.subTest(tmpdir=tmp):
                env = dict(self.env, TMPDIR=tmp)
                out = self.path("s.json")
                r = subprocess.run([RESMON, "-q", "-o", out, "--", "sh", "-c", '"$0" mark a; "$0" mark b', RESMON],
                                   capture_output=True, text=True, timeout=SAFETY_NET_SEC, env=env)
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(out) as f:
                    s = json.load(f)
                self.assertEqual([p["name"] for p in s.get("phases", [])], ["", "a", "b"], r.stderr)
                self.assertEqual(s["marks_dropped"], 0)

    def test_a_script_marks_load_then_compute(self):
        # The script's steps run one after the other: the load phase holds
        # 64 MiB, compute burns 0.3 CPU seconds; the workload tells the test
        # through a pipe when the memory is resident.
        ready_read, ready_write = os.pipe()
        script = self.script(
            f'set -e\n"{RESMON}" mark load\n'
            f'WORKLOAD_READY_FD={ready_write} "{WORKLOAD}" mem 64 0.3\n'
            f'"{RESMON}" mark compute\n"{WORKLOAD}" spin 0.3\n')
        for samples in ("s.csv", "s.jsonl"):
            with self.subTest(samples=samples):
                r = self.run_resmon("-i", "0.02", "-o", self.path("s.json"), "-s", self.path(samples),
                                    "--plot", self.path("p.svg"), "--textfile", self.path("t.prom"),
                                    "--", "sh", script, pass_fds=(ready_write,))
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(os.read(ready_read, 1), b"r")
                with open(self.path("s.json")) as f:
                    s = json.load(f)
                names = [p["name"] for p in s["phases"]]
                self.assertEqual(names, ["", "load", "compute"])
                self.assertEqual(s["marks_dropped"], 0)
                load, compute = s["phases"][1], s["phases"][2]
                for p in s["phases"]:  # every summary key of the phase, from the library's writer
                    self.assertTrue({"start_sec", "duration_sec", "peak_rss_mb", "cpu_time_sec", "num_samples",
                                     "peak_pss_mb", "io_rchar"} <= set(p), p)
                self.assertAlmostEqual(sum(p["duration_sec"] for p in s["phases"]), s["duration_sec"], places=9)
                self.assertAlmostEqual(sum(p["cpu_time_sec"] for p in s["phases"]), s["cpu_time_sec"], places=9)
                self.assertAlmostEqual(compute["start_sec"], load["start_sec"] + load["duration_sec"], places=9)
                self.assertGreaterEqual(load["peak_rss_mb"], 64)
                self.assertLess(compute["peak_rss_mb"], 64)
                # spin burns 0.3 s by its own CPU clock, all of it after the
                # mark: compute holds it (less a clock tick of /proc's
                # accounting).  How much CPU load's page faults cost is the
                # machine's business (0.4 s seen under load), not the phases'.
                self.assertGreaterEqual(compute["cpu_time_sec"], 0.28)
                # The samples: a phase column, last; "" before the first mark.
                with open(self.path(samples)) as f:
                    if samples.endswith(".csv"):
                        rows = list(csv.DictReader(f))
                    else:
                        rows = [json.loads(line) for line in f]
                self.assertEqual(list(rows[0])[-1], "phase")
                seen = [row["phase"] for row in rows]
                self.assertEqual(seen[0], "")
                self.assertEqual([n for i, n in enumerate(seen) if i == 0 or n != seen[i - 1]], ["", "load", "compute"])
                self.assertGreaterEqual(max(float(row["rss_mb"]) for row in rows if row["phase"] == "load"), 64)
                # The table: a line per phase.
                lines = [line for line in r.stderr.splitlines() if line.startswith("  phase ")]
                self.assertEqual(len(lines), 3, r.stderr)
                self.assertIn("(before marks)", lines[0])
                self.assertTrue(lines[1].startswith("  phase load ") and "peak RSS" in lines[1], lines[1])
                self.assertTrue(lines[2].startswith("  phase compute "), lines[2])
                # The chart: labelled bands where the phases are.
                root = ET.parse(self.path("p.svg")).getroot()
                bands = [g for g in root.iter(SVG + "g") if g.get("class") == "phase"]
                labels = ["".join(t.itertext()) for g in bands for t in g.iter(SVG + "title")]
                self.assertEqual(labels, ["load", "compute"], labels)
                starts = [float(rect.get("data-start")) for g in bands for rect in g.iter(SVG + "rect")]
                self.assertAlmostEqual(starts[1], compute["start_sec"], places=3)
                # Prometheus: the phase the run ended in.
                with open(self.path("t.prom")) as f:
                    self.assertIn('resmon_phase_info{command="sh",phase="compute"} 1', f.read())
                # The channel's directory is gone.
                self.assertEqual(self.channel_dirs(), [])
        os.close(ready_read)
        os.close(ready_write)

    def test_a_formula_like_name_is_text_in_the_csv_and_comes_back_whole(self):
        # A spreadsheet runs a field that starts with = + - @ as a formula
        # (OWASP "CSV Injection"): such a name is written after a single
        # quote (so is a name that starts with one), and resmon plot drops it.
        names = ['=HYPERLINK("http://example.invalid/?x","click")', "+1", "-2", "@SUM(A1)", "'quoted", "plain"]
        marks = "".join(f'"{RESMON}" mark -- "$(cat {self.path(f"n{i}")})"\n"{WORKLOAD}" sleep 0.05\n'
                        for i in range(len(names)))
        for i, name in enumerate(names):
            with open(self.path(f"n{i}"), "w") as f:
                f.write(name)
        r = self.run_resmon("-q", "-i", "0.01", "-s", self.path("s.csv"), "--", "sh", self.script(marks))
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.path("s.csv"), newline="") as f:
            seen = [row["phase"] for row in csv.DictReader(f)]
        fields = [n for i, n in enumerate(seen) if n and n != seen[i - 1]]
        self.assertEqual(fields, ["'" + n for n in names[:5]] + ["plain"])
        for field in seen:
            self.assertNotIn(field[:1], ("=", "+", "-", "@"))
        r = subprocess.run([RESMON, "plot", self.path("s.csv"), "-o", self.path("p.svg")], capture_output=True,
                           text=True, timeout=SAFETY_NET_SEC)
        self.assertEqual(r.returncode, 0, r.stderr)
        root = ET.parse(self.path("p.svg")).getroot()
        labels = ["".join(t.itertext()) for g in root.iter(SVG + "g") if g.get("class") == "phase"
                  for t in g.iter(SVG + "title")]
        self.assertEqual(labels, names)

    def test_phases_carry_the_gpu_figures(self):
        # The fake NVML (tests/fake_nvml.c): 42 % util, 1000 MiB, an energy counter.
        sysfs = self.path("sysfs")
        os.makedirs(sysfs)
        self.env.update(RESMON_NVML_LIBRARY=os.environ["FAKE_NVML_LIB"], FAKE_NVML="devices=1",
                        RESMON_SYSFS_ROOT=sysfs)
        script = self.script(f'"{RESMON}" mark a\n"{WORKLOAD}" sleep 0.2\n"{RESMON}" mark b\n"{WORKLOAD}" sleep 0.2\n')
        r = self.run_resmon("-i", "0.02", "--gpu", "nvml:0", "-o", self.path("s.json"), "--", "sh", script)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.path("s.json")) as f:
            s = json.load(f)
        a, b = s["phases"][1], s["phases"][2]
        for p in (a, b):
            self.assertEqual((p["mean_gpu_util"], p["peak_gpu_mem_mb"]), (42.0, 1000.0))
            self.assertGreater(p["gpu_energy_j"], 0)
        self.assertAlmostEqual(sum(p.get("gpu_energy_j", 0) for p in s["phases"]), s["gpu_energy_j"], places=6)
        lines = [line for line in r.stderr.splitlines() if line.startswith("  phase a ")]
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("GPU 1000.0 MiB 42 %", lines[0])

    def test_phases_energy_adds_up_when_the_marks_sample_has_no_reading(self):
        # CI6's busy stage: the phases summed to 300 J of the window's 320.
        # A mark whose sample has no energy reading (the GPU thread late, or
        # a failed read) opened its phase at the next reading, and the energy
        # between was nobody's.  Here energy reads fail while a file exists,
        # and the mark comes in that gap.
        sysfs = self.path("sysfs")
        os.makedirs(sysfs)
        gap = self.path("no-energy")
        self.env.update(RESMON_NVML_LIBRARY=os.environ["FAKE_NVML_LIB"], RESMON_SYSFS_ROOT=sysfs,
                        FAKE_NVML=f"devices=1;energy_fail_file={gap}")
        t = 0.1 * TIME_FACTOR
        script = self.script(f'"{RESMON}" mark a\n"{WORKLOAD}" sleep {2 * t}\ntouch "{gap}"\n'
                             f'"{WORKLOAD}" sleep {t}\n"{RESMON}" mark b\n"{WORKLOAD}" sleep {t}\n'
                             f'rm "{gap}"\n"{WORKLOAD}" sleep {2 * t}\n')
        r = self.run_resmon("-i", "0.02", "--gpu", "nvml:0", "-o", self.path("s.json"), "--", "sh", script)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.path("s.json")) as f:
            s = json.load(f)
        self.assertEqual([p["name"] for p in s["phases"]], ["", "a", "b"])
        self.assertGreater(s["phases"][2]["gpu_energy_j"], 0)
        self.assertAlmostEqual(sum(p.get("gpu_energy_j") or 0 for p in s["phases"]), s["gpu_energy_j"], places=6)

    def test_every_mark_is_taken_or_counted_dropped(self):
        # 300 marks: the window holds 256 phases, the rest are refused or
        # dropped by a full channel -- each counted, none lost, none blocking.
        script = self.script(f'i=0\nwhile [ $i -lt 300 ]; do "{RESMON}" mark "m$i"; i=$((i+1)); done\n')
        r = self.run_resmon("-q", "-i", "0.05", "-o", self.path("s.json"), "--", "sh", script)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.path("s.json")) as f:
            s = json.load(f)
        self.assertLessEqual(len(s["phases"]), 256)
        self.assertEqual(len(s["phases"]) - 1 + s["marks_dropped"], 300)
        self.assertEqual([p["name"] for p in s["phases"][1:4]], ["m0", "m1", "m2"])

    def test_a_run_without_marks_writes_no_phases(self):
        r = self.run_resmon("-i", "0.02", "-o", self.path("s.json"), "--", WORKLOAD, "sleep", "0.05")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.path("s.json")) as f:
            s = json.load(f)
        self.assertNotIn("phases", s)
        self.assertNotIn("marks_dropped", s)
        self.assertNotIn("  phase ", r.stderr)

    def test_the_command_sees_the_channel(self):
        # Only this user may send (the socket is 0600); every user may reach
        # the drop counter (0622) through the unlistable directory (0711).
        # the drop counter (0622, RESMON_MARK_DROPPED) through the unlistable
        # directory (0711), beside the socket under a secret name.
        r = self.run_resmon("-q", "--", "sh", "-c", 'test -S "$RESMON_MARK_SOCKET" && '
                            'stat -c %a "$(dirname "$RESMON_MARK_SOCKET")" "$RESMON_MARK_SOCKET" '
                            '"$RESMON_MARK_DROPPED"; echo "$RESMON_MARK_DROPPED"')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split()[:3], ["711", "600", "622"])
        self.assertRegex(r.stdout.split()[3], r"/resmon-marks-[^/]+/dropped-[0-9a-f]{16}$")

    def test_another_user_who_knows_the_directory_cannot_forge_the_drop_count(self):
        # The channel's directory name is visible in TMPDIR; the counter's is
        # not (dropped-<secret>, the directory is 0711): nobody can neither
        # list it nor truncate or grow it by a guessed name.
        nobody, tmp = self.attacker()
        forge = ('d=$(dirname "$RESMON_MARK_SOCKET"); ls "$d" >/dev/null 2>&1 && echo listed; '
                 'for f in dropped "$(basename "$RESMON_MARK_SOCKET")"; do truncate -s 1000 "$d/$f" 2>/dev/null '
                 '&& echo forged; done; true')
        r = self.run_resmon("-q", "-o", self.path("s.json"), "--", "sh", "-c",
                            f'"{RESMON}" mark one; env -u RESMON_MARK_DROPPED {" ".join(nobody)} sh -c \'{forge}\'')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "")
        with open(self.path("s.json")) as f:
            s = json.load(f)
        self.assertEqual(s["marks_dropped"], 0)
        self.assertEqual([p["name"] for p in s["phases"]], ["", "one"])
        self.assertEqual(self.channel_dirs() + os.listdir(tmp), [])  # the counter went with the channel

    def test_mark_outside_resmon_and_bad_usage(self):
        r = self.run_resmon("mark", "load")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "", ""))
        self.env["RESMON_MARK_SOCKET"] = self.path("gone/socket")
        self.assertEqual(self.run_resmon("mark", "load").returncode, 0)  # resmon gone: dropped, not failed
        for bad in ([], ["a", "b"], ["-x", "y"]):  # not a mark at all: the script is wrong on every run
            r = self.run_resmon("mark", *bad)
            self.assertEqual(r.returncode, 125, bad)
            self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        for bad in ([""], ["x" * 64], ["tab\there"], ["--", ""]):  # a name resmon refuses: never a failure
            r = self.run_resmon("mark", *bad)
            self.assertEqual(r.returncode, 0, bad)
            self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
            self.assertIn("dropped", r.stderr)
        self.assertEqual(self.run_resmon("mark", "--", "-dash").returncode, 0)
        r = self.run_resmon("mark", "--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("usage: resmon mark NAME", r.stdout)

    def test_a_refused_name_never_blocks_on_a_full_stderr(self):
        # Attack 67 F7: the refusal's line was written to stderr blocking --
        # a pipe whose reader stalled (a logger, a full CI pipe) held the
        # workload for ever.  A mark never blocks: the line is lost instead.
        read_end, write_end = full_pipe()
        self.addCleanup(os.close, read_end)
        try:
            r = subprocess.run([RESMON, "mark", "bad\x01name"], stdout=subprocess.DEVNULL, stderr=write_end,
                               env=self.env, timeout=SAFETY_NET_SEC)
        except subprocess.TimeoutExpired:
            self.fail("resmon mark blocked on a full stderr")
        finally:
            os.close(write_end)
        self.assertEqual(r.returncode, 0)
        os.set_blocking(read_end, False)
        self.assertNotIn(b"resmon mark", drain(read_end))  # lost, not half-written

    def test_a_name_from_data_that_starts_with_a_dash_is_a_name(self):
        # resmon mark "$name" with a name such as "-O2 build": one argument is
        # the NAME whatever it starts with (only exactly -h/--help is help), so
        # a set -e script goes on and the phase is kept.
        names = ["-O2 build", "-x", "--", "--verbose", "-", "-help"]
        body = "".join(f'"{RESMON}" mark "{n}"\n' for n in names)
        r = self.run_resmon("-q", "-o", self.path("s.json"), "--", "sh", "-c",
                            f'set -e\n{body}"{RESMON}" mark -- -last\necho done')
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "done\n", ""))
        with open(self.path("s.json")) as f:
            s = json.load(f)
        self.assertEqual([p["name"] for p in s["phases"]], ["", *names, "-last"])
        self.assertEqual(s["marks_dropped"], 0)
        for helped in ("-h", "--help"):
            r = self.run_resmon("mark", helped)
            self.assertEqual(r.returncode, 0)
            self.assertIn("usage: resmon mark NAME", r.stdout)

    def test_a_refused_name_never_fails_the_script_and_is_counted(self):
        # set -e: every name resmon refuses is one line on stderr, exit 0,
        # and counted in marks_dropped; the good marks around them are kept.
        bad = [b"", b"x" * 64, b"tab\there", b"\xff\xfe", b"a\x7fb", "\u0085".encode(), "evil\u202eexe.txt".encode()]
        script = self.path("w.sh")
        with open(script, "wb") as f:  # the names' bytes as they are, not UTF-8 of latin-1
            f.write(f'set -e\n"{RESMON}" mark first\n'.encode())
            for b in bad:
                f.write(f'"{RESMON}" mark "'.encode() + b + b'"\n')
            f.write(f'"{RESMON}" mark last\necho done\n'.encode())
        r = subprocess.run([RESMON, "-q", "-o", self.path("s.json"), "--", "sh", script], capture_output=True,
                           timeout=SAFETY_NET_SEC, env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, b"done\n")
        self.assertEqual(len(r.stderr.splitlines()), len(bad), r.stderr)
        with open(self.path("s.json")) as f:
            s = json.load(f)
        self.assertEqual([p["name"] for p in s["phases"]], ["", "first", "last"])
        self.assertEqual(s["marks_dropped"], len(bad))

    def test_the_last_mark_before_the_command_exits_is_kept_or_counted(self):
        # The command's last act is a mark, at 5 kHz: resmon notices the end
        # at once.  A mark the library accepted is a phase (faults.md 34);
        # one refused because the window had closed is counted.  Never
        # neither.  (The race itself is pinned by test_phases, which can
        # make the mark at the window's close every time.)
        for _ in range(10):
            r = self.run_resmon("-q", "-i", "0.0002", "-o", self.path("s.json"), "--", "sh", "-c",
                                f'"{RESMON}" mark first; "{RESMON}" mark last')
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(self.path("s.json")) as f:
                s = json.load(f)
            names = [p["name"] for p in s["phases"]]
            self.assertEqual(names[:2], ["", "first"])
            self.assertEqual(len(names) - 1 + s["marks_dropped"], 2, s)

    def test_a_mark_sent_before_the_command_exits_is_a_phase(self):
        # The mark is the command's last act and it exits at once, at 5 kHz:
        # the sampler may notice the exit before resmon's receiver has read
        # the datagram.  Sent before the exit is not late: it is a phase,
        # never counted dropped (the window's last sample takes what the
        # socket holds).  Before the fix ~7 runs in 100 lost it.
        for _ in range(80):
            r = self.run_resmon("-q", "-i", "0.0002", "-o", self.path("s.json"), "--", RESMON, "mark", "last")
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(self.path("s.json")) as f:
                s = json.load(f)
            self.assertEqual([p["name"] for p in s.get("phases", [])], ["", "last"], s)
            self.assertEqual(s["marks_dropped"], 0, s)

    def test_a_mark_after_the_command_exits_is_counted(self):
        # An orphan marks once the command is reaped (--wait-orphans waits
        # for it): the window has ended, so the mark is counted dropped --
        # its datagram was neither left unread in the socket nor uncounted.
        orphan = f'{{ while kill -0 $$ 2>/dev/null; do sleep 0.01; done; "{RESMON}" mark late; }} &'
        r = self.run_resmon("-q", "--wait-orphans", "-o", self.path("s.json"), "--", "sh", "-c",
                            f'"{RESMON}" mark first; {orphan} exit 0')
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.path("s.json")) as f:
            s = json.load(f)
        self.assertEqual([p["name"] for p in s["phases"]], ["", "first"])
        self.assertEqual(s["marks_dropped"], 1)

    def test_a_mark_refused_while_the_files_are_written_is_counted(self):
        # Review of issue 28: the drop count was read before the outputs
        # were written, and writing them can take seconds (a reader that
        # reads slowly): an orphan's mark refused meanwhile (resmon mark
        # said so) was in neither the phases nor marks_dropped.  The chart
        # goes to a FIFO whose 4 KiB pipe the SVG overfills; the orphan marks
        # while resmon waits for that reader, which then reads it all.
        plot, go, done = self.path("p.svg"), self.path("go"), self.path("done")
        for fifo in (plot, go, done):
            os.mkfifo(fifo)
        reader = os.open(plot, os.O_RDONLY | os.O_NONBLOCK)
        fcntl.fcntl(reader, fcntl.F_SETPIPE_SZ, 4096)
        orphan = f'{{ read x < "{go}"; "{RESMON}" mark late; echo "$?" > "{done}"; }} &'
        p = subprocess.Popen([RESMON, "-q", "-o", self.path("s.json"), "--plot", plot, "--", "sh", "-c",
                              f'"{RESMON}" mark first; {orphan} exit 0'],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=self.env)
        try:
            deadline = time.monotonic() + SAFETY_NET_SEC
            pending = array.array("i", [0])
            while time.monotonic() < deadline:  # resmon is writing the chart: the run has ended
                fcntl.ioctl(reader, termios.FIONREAD, pending)
                if pending[0] > 0:
                    break
                time.sleep(0.005)
            self.assertGreater(pending[0], 0)
            with open(go, "w") as f:
                f.write("\n")
            with open(done) as f:
                self.assertEqual(f.read().strip(), "0")  # resmon mark never fails the script
            os.set_blocking(reader, True)
            while os.read(reader, 65536):
                pass
            err = p.stderr.read()
            p.wait(timeout=SAFETY_NET_SEC)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            p.stderr.close()
            os.close(reader)
        self.assertEqual(p.returncode, 0, err)
        with open(self.path("s.json")) as f:
            s = json.load(f)
        self.assertEqual([ph["name"] for ph in s["phases"]], ["", "first"])
        self.assertEqual(s["marks_dropped"], 1)

    def attacker(self):
        """setpriv arguments for nobody, and a TMPDIR nobody may write, as /tmp
        (root's, 01777: one others may write without the sticky bit, or one
        another user owns, is refused for the channel)."""
        if os.geteuid() != 0:
            self.skipTest("needs root, to act as a second user (nobody)")
        tmp = self.path("t")  # short: the socket path must fit sun_path
        os.mkdir(tmp)
        os.chmod(tmp, 0o1777)
        self.env["TMPDIR"] = tmp
        return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"], tmp

    def test_a_tmpdir_others_may_write_without_the_sticky_bit_is_not_used(self):
        # 0777 or 0770 without S_ISVTX: another user could rename the channel
        # away and bind their own socket; the channel goes to the default.
        tmp = self.path("t")
        os.mkdir(tmp)
        self.env["TMPDIR"] = tmp
        for mode, used in ((0o777, False), (0o770, False), (0o1777, True), (0o755, True), (0o700, False)):
            os.chmod(tmp, mode)
            r = self.run_resmon("-q", "--", "sh", "-c", 'echo "$RESMON_MARK_SOCKET"')
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.startswith(tmp + "/"), used, (oct(mode), r.stdout))
            self.assertEqual(os.listdir(tmp), [])
        # Review of issue 28: a TMPDIR another user owns, 0755 or sticky: its
        # owner may rename the channel away and bind a socket of their own.
        if os.geteuid() == 0:
            os.chown(tmp, 65534, 65534)
            for mode in (0o755, 0o1777, 0o700):
                os.chmod(tmp, mode)
                r = self.run_resmon("-q", "--", "sh", "-c", 'echo "$RESMON_MARK_SOCKET"')
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertFalse(r.stdout.startswith(tmp + "/"), (oct(mode), r.stdout))
                self.assertEqual(os.listdir(tmp), [])

    def test_a_tmpdir_inside_another_users_directory_is_not_used(self):
        # Stop 53's attack on issue 28: a TMPDIR of root's (01777) inside a
        # directory nobody owns passed every check of TMPDIR itself; nobody
        # renamed it away, made one of the same name and bound a socket
        # there, and the marks (sent by path) went to nobody, uncounted.
        # Every directory above TMPDIR must be root's or this user's, and
        # one that others may write sticky over an entry of root's or ours.
        if os.geteuid() != 0:
            self.skipTest("needs root, to give a directory to a second user (nobody)")
        os.chmod(self.dir.name, 0o755)
        outer = self.path("n")
        os.mkdir(outer)
        tmp = os.path.join(outer, "t")
        os.mkdir(tmp)
        os.chmod(tmp, 0o1777)
        self.env["TMPDIR"] = tmp
        for owner, mode, used in ((0, 0o755, True), (65534, 0o755, False), (0, 0o777, False), (0, 0o1777, True)):
            os.chown(outer, owner, owner)
            os.chmod(outer, mode)
            r = self.run_resmon("-q", "--", "sh", "-c", 'echo "$RESMON_MARK_SOCKET"')
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.startswith(tmp + "/"), used, (owner, oct(mode), r.stdout))
            self.assertEqual(os.listdir(tmp), [])
        # A sticky directory others may write holds an entry of nobody's: its
        # owner may rename it.
        os.chown(outer, 0, 0)
        os.chown(tmp, 65534, 65534)
        r = self.run_resmon("-q", "--", "sh", "-c", 'echo "$RESMON_MARK_SOCKET"')
        self.assertFalse(r.stdout.startswith(tmp + "/"), r.stdout)

    def test_a_tmpdir_that_is_another_users_link_is_not_followed(self):
        # TMPDIR names a symbolic link that nobody owns (planted in /tmp,
        # which fs.protected_symlinks=0 lets root follow; here in a private
        # directory, where the kernel always follows): the channel goes to
        # the default, nothing is made where the link points.  This user's
        # own link is followed.
        if os.geteuid() != 0:
            self.skipTest("needs root, to give the link to a second user (nobody)")
        target = self.path("target")
        os.mkdir(target)
        os.chown(target, 65534, 65534)
        link = self.path("l")
        os.symlink(target, link)
        os.lchown(link, 65534, 65534)
        self.env["TMPDIR"] = link
        r = self.run_resmon("-q", "--", "sh", "-c", 'echo "$RESMON_MARK_SOCKET"')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(r.stdout.startswith(link + "/"), r.stdout)
        self.assertEqual(os.listdir(target), [])
        os.lchown(link, 0, 0)  # root's own link to root's directory: followed, as any TMPDIR
        os.chown(target, 0, 0)
        r = self.run_resmon("-q", "--", "sh", "-c", 'echo "$RESMON_MARK_SOCKET"')
        self.assertTrue(r.stdout.startswith(link + "/"), r.stdout)

    def test_a_channel_directory_swapped_for_a_link_is_not_cleaned_through_it(self):
        # The channel's directory is renamed and a link to a victim directory
        # put in its place while resmon runs: resmon unlinks nothing there,
        # and its drop count is not the victim's "dropped" (faults.md 35).
        # Another user can no longer do it (a TMPDIR others may write must be
        # sticky, and one another user owns is not used: see the tests
        # above); the command itself does it here, as root, so that the
        # cleanup through the directory held open is still what is tested.
        nobody, tmp = self.attacker()
        victim = self.path("victim")
        os.mkdir(victim)
        for name, data in (("socket", "keep\n"), ("dropped", "xxxxx")):
            with open(os.path.join(victim, name), "w") as f:
                f.write(data)
        swap = f'd=$(dirname "$RESMON_MARK_SOCKET"); mv "$d" "$d.moved" && ln -s "{victim}" "$d"'
        r = self.run_resmon("-q", "-o", self.path("s.json"), "--", "sh", "-c",
                            f'"{RESMON}" mark one; sh -c \'{swap}\'')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(os.listdir(victim)), ["dropped", "socket"])
        with open(os.path.join(victim, "socket")) as f:
            self.assertEqual(f.read(), "keep\n")
        with open(self.path("s.json")) as f:
            s = json.load(f)
        self.assertEqual(s["marks_dropped"], 0)
        self.assertEqual([p["name"] for p in s["phases"]], ["", "one"])
        moved = [n for n in os.listdir(tmp) if n.endswith(".moved")]
        self.assertEqual(len(moved), 1)
        self.assertEqual(os.listdir(os.path.join(tmp, moved[0])), [])  # its own files went, through the fd

    def test_marks_of_a_command_that_dropped_privileges_are_counted(self):
        # setpriv to nobody: the socket (0600) refuses the mark; it is
        # counted through the drop file every user may append to.
        nobody, tmp = self.attacker()
        probe = subprocess.run([*nobody, RESMON, "mark", "--help"], capture_output=True, timeout=SAFETY_NET_SEC)
        if probe.returncode != 0:
            self.skipTest(f"nobody cannot run {RESMON} (a parent directory is not searchable): {probe.stderr!r}")
        r = self.run_resmon("-q", "-o", self.path("s.json"), "--", "sh", "-c",
                            f'"{RESMON}" mark mine; {" ".join(nobody)} "{RESMON}" mark theirs; '
                            f'{" ".join(nobody)} "{RESMON}" mark ""')
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.path("s.json")) as f:
            s = json.load(f)
        self.assertEqual([p["name"] for p in s["phases"]], ["", "mine"])
        self.assertEqual(s["marks_dropped"], 2)

    def test_a_private_tmpdir_gives_way_so_that_dropped_privileges_still_count(self):
        # Ninth review of issue 28: a TMPDIR others cannot reach (0700, or
        # under a 0700 directory) held the drop counter out of reach of a
        # command that dropped privileges: its marks were lost uncounted.
        # The channel goes to the default, where they are counted.
        nobody, tmp = self.attacker()
        probe = subprocess.run([*nobody, RESMON, "mark", "--help"], capture_output=True, timeout=SAFETY_NET_SEC)
        if probe.returncode != 0:
            self.skipTest(f"nobody cannot run {RESMON} (a parent directory is not searchable): {probe.stderr!r}")
        private = self.path("p")
        inner = os.path.join(private, "t")
        os.makedirs(inner)
        link = self.path("l")  # tenth review: a link into the private directory
        os.symlink(inner, link)
        for mode_private, mode_inner, tmpdir in ((0o700, 0o700, private), (0o700, 0o1777, inner),
                                                 (0o700, 0o1777, link), (0o700, 0o1777, link + "/")):
            with self.subTest(tmpdir=tmpdir, private=oct(mode_private)):
                os.chmod(private, mode_private)
                os.chmod(inner, mode_inner)
                self.env["TMPDIR"] = tmpdir
                r = self.run_resmon("-q", "-o", self.path("s.json"), "--", "sh", "-c",
                                    f'echo "$RESMON_MARK_SOCKET"; "{RESMON}" mark mine; '
                                    f'{" ".join(nobody)} "{RESMON}" mark theirs')
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertFalse(r.stdout.startswith((private + "/", link + "/")), r.stdout)
                with open(self.path("s.json")) as f:
                    s = json.load(f)
                self.assertEqual([p["name"] for p in s["phases"]], ["", "mine"])
                self.assertEqual(s["marks_dropped"], 1)

    def test_a_drop_counted_while_resmon_ends_is_in_the_summary(self):
        # Stop 56's attack: an orphan's marks dropped at the end were counted
        # in the counter after resmon's last read of it (16 counted, 1 in the
        # summary).  A sender holds the counter, shared-locked, from before it
        # sends until it has counted (resmon mark, resmon.mark); resmon removes
        # the socket and waits for the lock before its last read.  Here an
        # orphan holds it as such a sender between its failed send and its
        # count, and counts only once resmon has begun to seal.
        holder = self.path("holder.py")
        with open(holder, "w") as f:
            f.write("import fcntl, os, sys\n"
                    "ready, go = int(sys.argv[1]), int(sys.argv[2])\n"
                    "fd = os.open(os.environ['RESMON_MARK_DROPPED'], os.O_WRONLY | os.O_APPEND)\n"
                    "fcntl.flock(fd, fcntl.LOCK_SH)\n"
                    "if os.fork() == 0:\n"
                    "    os.write(ready, (os.environ['RESMON_MARK_SOCKET'] + '\\n').encode())\n"
                    "    os.write(ready, (os.environ['RESMON_MARK_DROPPED'] + '\\n').encode())\n"
                    "    os.read(go, 1)\n"
                    "    os.write(fd, b'x')\n"
                    "    os._exit(0)\n")
        ready_r, ready_w = os.pipe()
        go_r, go_w = os.pipe()
        out = self.path("s.json")
        p = subprocess.Popen([RESMON, "-q", "-o", out, "--", sys.executable, holder, str(ready_w), str(go_r)],
                             env=self.env, pass_fds=(ready_w, go_r), stderr=subprocess.PIPE, text=True)
        os.close(ready_w)
        os.close(go_r)
        try:
            with os.fdopen(ready_r) as f:
                socket = f.readline().strip()
                counter = f.readline().strip()
            self.assertTrue(socket.endswith("/socket"), socket)
            # The command has exited; resmon's seal removes the socket and the
            # counter's name first (no new sender can take the lock: 32
            # marking in loops kept resmon waiting), then waits for this
            # sender, before it writes the summary.
            deadline = time.monotonic() + SAFETY_NET_SEC
            while ((os.path.exists(socket) or os.path.exists(counter)) and time.monotonic() < deadline
                   and p.poll() is None):
                time.sleep(0.005)
            self.assertFalse(os.path.exists(counter))
            self.assertFalse(os.path.exists(out), "the summary was written before the count was final")
        finally:
            os.write(go_w, b"g")
            os.close(go_w)
        err = p.communicate(timeout=SAFETY_NET_SEC)[1]
        self.assertEqual(p.returncode, 0, err)
        with open(out) as f:
            summary = json.load(f)
        self.assertEqual(summary.get("marks_dropped"), 1, err)

    def test_a_mark_whose_socket_is_gone_after_it_locked_the_counter_is_counted(self):
        # Attack 57b: a sender that opened and locked the counter before
        # resmon's seal removed the socket, and sent after it, got ENOENT
        # and counted nothing -- resmon's last read waited for its lock and
        # read 0: the mark was in neither the phases nor marks_dropped (the
        # Python module's mark returned False).  The state that race leaves
        # -- the counter open and locked, no socket at the send -- made
        # certain: the socket's name points nowhere, the counter is the
        # run's.  (test_phases.py makes the race itself, between the open
        # and the send.)
        out = self.path("s.json")
        r = self.run_resmon("-q", "-o", out, "--", "sh", "-c",
                            f'RESMON_MARK_SOCKET="$TMPDIR/gone" "{RESMON}" mark late; "{RESMON}" mark kept')
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            summary = json.load(f)
        self.assertEqual([phase["name"] for phase in summary["phases"]], ["", "kept"])
        self.assertEqual(summary.get("marks_dropped"), 1, r.stderr)

    def test_a_lock_on_the_drop_counter_by_another_drops_no_mark(self):
        # Stop 56's last attack: whoever holds the counter's name could lock
        # it, and every sender took the lock for resmon's seal and dropped
        # its mark uncounted.  A lock another holds is not waited for: the
        # mark goes on.
        out = self.path("s.json")
        script = ("import fcntl, os, subprocess, sys\n"
                  "fd = os.open(os.environ['RESMON_MARK_DROPPED'], os.O_WRONLY | os.O_APPEND)\n"
                  "fcntl.flock(fd, fcntl.LOCK_EX)\n"
                  "subprocess.run([sys.argv[1], 'mark', 'locked'], check=True)\n")
        r = self.run_resmon("-q", "-o", out, "--", sys.executable, "-c", script, RESMON)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            summary = json.load(f)
        self.assertIn("locked", [phase["name"] for phase in summary.get("phases", [])], r.stderr)
        self.assertNotIn("marks_dropped", {k: v for k, v in summary.items() if v})

    def test_the_directory_of_a_killed_resmon_is_swept_by_the_next(self):
        # kill -9 leaves the channel's directory; the next resmon in the same
        # place removes it -- but never a live resmon's, nor another user's.
        def start():
            p = subprocess.Popen([RESMON, "-q", "--", "sh", "-c", 'echo "$RESMON_MARK_SOCKET"; exec sleep 60'],
                                 stdout=subprocess.PIPE, text=True, env=self.env, start_new_session=True)
            return p, os.path.dirname(p.stdout.readline().strip())
        live, live_dir = start()  # first: each start sweeps what was killed before it
        started = [start() for _ in range(3)]
        killed = []
        for p, d in started:
            os.killpg(p.pid, 9)  # resmon and its command, as kill -9 of the job
            p.wait()
            p.stdout.close()
            killed.append(d)
        try:
            self.assertTrue(all(os.path.isdir(d) for d in killed))
            foreign = None
            if os.geteuid() == 0:  # a dead creator's directory that is another user's: kept
                foreign = killed[0]
                os.chown(foreign, 65534, 65534)
            r = self.run_resmon("-q", "--", "true")
            self.assertEqual(r.returncode, 0, r.stderr)
            left = sorted(os.path.join(self.dir.name, n) for n in self.channel_dirs())
            self.assertEqual(left, sorted([live_dir] + ([foreign] if foreign else [])))
        finally:
            os.killpg(live.pid, 15)
            live.wait()
            live.stdout.close()
        if foreign:
            import shutil
            shutil.rmtree(foreign)


    def test_the_directories_of_a_killed_resmon_0_3_are_swept_too(self):
        # resmon 0.3 named its channel resmon-marks-XXXXXX (mkdtemp, no
        # creator in the name).  Dead (nothing receives on its socket):
        # removed by the next resmon.  Kept: a live one, one without a socket
        # (a 0.3 resmon between mkdtemp and bind), a symlink, another user's.
        import socket as socketlib
        def old(name, live=False, with_socket=True):
            d = self.path(name)
            os.mkdir(d, 0o700)
            with open(os.path.join(d, "dropped"), "w") as f:
                f.write("xx")
            s = None
            if with_socket:
                s = socketlib.socket(socketlib.AF_UNIX, socketlib.SOCK_DGRAM)
                s.bind(os.path.join(d, "socket"))
                if not live:
                    s.close()
                    s = None
            return d, s
        dead, _ = old("resmon-marks-Ab12Cd")
        live, receiver = old("resmon-marks-Li1VeX", live=True)
        self.addCleanup(receiver.close)
        unbound, _ = old("resmon-marks-NoSock", with_socket=False)
        victim, _ = old("victim-marks")
        os.symlink(victim, self.path("resmon-marks-Link00"))
        kept = [live, unbound, self.path("resmon-marks-Link00")]
        if os.geteuid() == 0:
            foreign, _ = old("resmon-marks-Other0")
            for name in ("", "dropped", "socket"):
                os.lchown(os.path.join(foreign, name), 65534, 65534)
            kept.append(foreign)
        r = self.run_resmon("-q", "--", "true")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(os.path.exists(dead), os.listdir(dead) if os.path.isdir(dead) else None)
        self.assertEqual(sorted(os.path.join(self.dir.name, n) for n in self.channel_dirs()), sorted(kept))
        self.assertEqual(sorted(os.listdir(live)), ["dropped", "socket"])
        self.assertEqual(sorted(os.listdir(victim)), ["dropped", "socket"])


if __name__ == "__main__":
    unittest.main()
