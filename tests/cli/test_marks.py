#!/usr/bin/env python3
"""Phases marked by the monitored program (`resmon mark`, RESMON_MARK_SOCKET),
end to end on the real binary: the summary's phases, the samples' phase
column, the table's phase lines, the chart's bands, Prometheus's phase and
the count of dropped marks.

Environment: RESMON (the command), WORKLOAD (tests/cli/workload.c).
"""
import csv
import json
import os
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET

# tests/cli/helpers.py: the signal dispositions and the environment.
from helpers import RESMON, WORKLOAD
SVG = "{http://www.w3.org/2000/svg}"


class Marks(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="resmon-marks-test-")
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
        return subprocess.run([RESMON, *args], capture_output=True, text=True, timeout=120, env=self.env,
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
                           capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        socket = r.stdout.strip()
        self.assertRegex(socket, r"^/dev/shm/resmon-marks-[^/]+/socket$")
        self.assertFalse(os.path.exists(os.path.dirname(socket)))

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
                           text=True, timeout=120)
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
        r = self.run_resmon("-q", "--", "sh", "-c", 'test -S "$RESMON_MARK_SOCKET" && '
                            'stat -c %a "$(dirname "$RESMON_MARK_SOCKET")"')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "700")

    def test_mark_outside_resmon_and_bad_usage(self):
        r = self.run_resmon("mark", "load")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "", ""))
        self.env["RESMON_MARK_SOCKET"] = self.path("gone/socket")
        self.assertEqual(self.run_resmon("mark", "load").returncode, 0)  # resmon gone: dropped, not failed
        for bad in ([], ["a", "b"], [""], ["x" * 64], ["tab\there"], ["-x"]):
            r = self.run_resmon("mark", *bad)
            self.assertEqual(r.returncode, 125, bad)
            self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertEqual(self.run_resmon("mark", "--", "-dash").returncode, 0)
        r = self.run_resmon("mark", "--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("usage: resmon mark NAME", r.stdout)


if __name__ == "__main__":
    unittest.main()
