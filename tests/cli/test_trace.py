#!/usr/bin/env python3
"""resmon --trace FILE.json: the run as a Chrome trace-event timeline, end to
end on the real binary.  Every trace written here passes a strict check of
the format (the Trace Event Format document's fields per phase type, and
what a viewer needs to draw it: slices that nest on their track, time that
runs forward on each track); a killed resmon's trace is read the way the
viewers read one (Catapult's importer: a trace that starts with "[" gets
its missing "]"), and the file rules are the samples file's.

Environment: RESMON (the command), WORKLOAD (tests/cli/workload.c);
optionally RESMON_TRACE_MODEL (a node_modules directory holding
@tracerbench/trace-model) for an independent reader of the trace.
"""
import json
import math
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import time
import unittest

# tests/cli/helpers.py: the signal dispositions and the environment.
from helpers import NOBODY, RESMON, SAFETY_NET_SEC, SANITIZED, WORKLOAD, reachable_dir

# The fields the format defines for an event (Trace Event Format, "Event
# Descriptions"); anything else in an event is a writer's mistake.
EVENT_KEYS = {"name", "cat", "ph", "ts", "tts", "pid", "tid", "args", "dur", "tdur", "id", "s", "cname"}
METADATA_NAMES = {"process_name": "name", "thread_name": "name", "process_sort_index": "sort_index",
                  "thread_sort_index": "sort_index"}


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def read_trace(path, complete=True):
    """The events of the trace at path.  complete: the file must be a JSON
    array as written at a run's end; else it is read as Catapult's
    importer reads a trace from a crash (trailing newlines and a trailing
    comma dropped, "]" added when missing)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if not text.startswith("["):
        raise AssertionError(f"a trace in the JSON Array Format starts with '[': {text[:40]!r}")
    if complete:
        if not text.endswith("]\n"):
            raise AssertionError(f"a finished trace ends with ']': {text[-80:]!r}")
        return json.loads(text)
    text = text.rstrip("\r\n").rstrip()
    if text.endswith(","):
        text = text[:-1]
    if not text.endswith("]"):
        text += "]"
    return json.loads(text)


def check_trace(test, events, complete=True):
    """The strict check of the format.  Returns the slices per track:
    {(pid, tid): [(name, start, end, args)]}, and the counters:
    {(pid, name): [(ts, args)]}.  complete=False lets a phase slice stay
    open at the end (the run was killed)."""
    test.assertIsInstance(events, list)
    slices, counters, open_slices = {}, {}, {}
    named_processes, named_threads = set(), set()
    last_ts = {}
    for event in events:
        test.assertIsInstance(event, dict)
        test.assertLessEqual(set(event), EVENT_KEYS, event)
        for key in ("name", "cat", "ph", "pid", "tid", "ts"):
            test.assertIn(key, event, event)
        test.assertIsInstance(event["name"], str)
        test.assertTrue(event["name"], event)
        test.assertIsInstance(event["pid"], int)
        test.assertIsInstance(event["tid"], int)
        test.assertTrue(is_number(event["ts"]), event)
        test.assertGreaterEqual(event["ts"], 0, event)
        test.assertIsInstance(event["cat"], str)
        if "args" in event:
            test.assertIsInstance(event["args"], dict)
        ph, track = event["ph"], (event["pid"], event["tid"])
        if ph == "M":
            test.assertIn(event["name"], METADATA_NAMES, event)
            value = event["args"][METADATA_NAMES[event["name"]]]
            test.assertIsInstance(value, str if event["name"].endswith("_name") else int, event)
            (named_processes if event["name"].startswith("process") else named_threads).add(
                event["pid"] if event["name"].startswith("process") else track)
            continue
        if ph == "C":
            test.assertTrue(event.get("args"), event)
            for value in event["args"].values():
                test.assertTrue(is_number(value), event)
            key = (event["pid"], event["name"])
            test.assertGreaterEqual(event["ts"], last_ts.get(key, 0), f"counter {key} goes back in time")
            last_ts[key] = event["ts"]
            counters.setdefault(key, []).append((event["ts"], event["args"]))
            continue
        test.assertIn(ph, ("B", "E", "X"), event)
        test.assertIn(event["pid"], named_processes, f"a slice on an unnamed process: {event}")
        test.assertIn(track, named_threads, f"a slice on an unnamed track: {event}")
        if ph == "X":
            test.assertIn("dur", event, event)
            test.assertTrue(is_number(event["dur"]), event)
            test.assertGreaterEqual(event["dur"], 0, event)
            slices.setdefault(track, []).append((event["name"], event["ts"], event["ts"] + event["dur"],
                                                 event.get("args", {})))
            continue
        test.assertGreaterEqual(event["ts"], last_ts.get(track, 0), f"track {track} goes back in time")
        last_ts[track] = event["ts"]
        stack = open_slices.setdefault(track, [])
        if ph == "B":
            stack.append(event)
        else:
            test.assertTrue(stack, f"E without B: {event}")
            begin = stack.pop()
            test.assertEqual(begin["name"], event["name"])
            slices.setdefault(track, []).append((begin["name"], begin["ts"], event["ts"], begin.get("args", {})))
    for track, stack in open_slices.items():
        if complete:
            test.assertEqual(stack, [], f"slices left open on {track}")
        for begin in stack:  # a killed run's: open to the end, as the viewers draw it
            slices.setdefault(track, []).append((begin["name"], begin["ts"], math.inf, {}))
    for track, spans in slices.items():  # slices on one track nest, never overlap
        stack = []
        for name, start, end, _ in sorted(spans, key=lambda s: (s[1], -s[2])):
            while stack and stack[-1] <= start + 1e-6:
                stack.pop()
            if stack:
                test.assertLessEqual(end, stack[-1] + 1e-6, f"{name} on {track} overlaps a slice it is not inside")
            stack.append(end)
    return slices, counters


class Trace(unittest.TestCase):
    def setUp(self):
        # Every user's to reach, the marks channel is made here: not under a
        # private TMPDIR of the test run's (reachable_dir goes elsewhere).
        self.dir = reachable_dir(self, NOBODY, 0o755, "resmon-trace-test-")
        self.env = dict(os.environ, TMPDIR=self.dir.name)
        self.env.pop("RESMON_MARK_SOCKET", None)

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def run_resmon(self, *args, **kw):
        return subprocess.run([RESMON, *args], capture_output=True, text=True, timeout=SAFETY_NET_SEC, env=self.env,
                              **kw)

    def script(self, text):
        with open(self.path("w.sh"), "w") as f:
            f.write(text)
        return self.path("w.sh")

    def assert_no_temporary_files(self):
        self.assertEqual([n for n in os.listdir(self.dir.name) if ".resmon-" in n], [])

    def test_a_run_with_marks(self):
        # load holds 64 MiB, compute burns CPU, and the script exits 3.
        ready_read, ready_write = os.pipe()
        script = self.script(
            f'"{RESMON}" mark load\nWORKLOAD_READY_FD={ready_write} "{WORKLOAD}" mem 64 0.3\n'
            f'"{RESMON}" mark compute\n"{WORKLOAD}" spin 0.2\nexit 3\n')
        r = self.run_resmon("-q", "-i", "0.02", "-o", self.path("s.json"), "--trace", self.path("t.json"),
                            "--", "sh", script, pass_fds=(ready_write,))
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertEqual(os.read(ready_read, 1), b"r")
        with open(self.path("s.json")) as f:
            summary = json.load(f)
        slices, counters = check_trace(self, read_trace(self.path("t.json")))
        # The phases: a slice each, where the summary has them (microseconds after the first sample).
        phases = slices[(1, 1)]
        self.assertEqual([p[0] for p in phases], ["load", "compute"])
        for (name, start, end, _), expected in zip(phases, summary["phases"][1:]):
            self.assertEqual(name, expected["name"])
            self.assertAlmostEqual(start, expected["start_sec"] * 1e6, delta=1)
            self.assertAlmostEqual(end - start, expected["duration_sec"] * 1e6, delta=1)
        self.assertAlmostEqual(phases[-1][2], summary["duration_sec"] * 1e6, delta=1)  # to the last sample
        # The counters: every sample's CPU and RSS; the cgroup's memory where there is one.
        self.assertEqual(len(counters[(1, "CPU")]), summary["num_samples"])
        rss = counters[(1, "RSS (tree)")]
        self.assertEqual(len(rss), summary["num_samples"])
        self.assertAlmostEqual(max(args["MiB"] for _, args in rss), summary["peak_rss_mb"], places=6)
        load_rss = [args["MiB"] for ts, args in rss if phases[0][1] <= ts <= phases[0][2]]
        self.assertGreaterEqual(max(load_rss), 64)
        self.assertEqual((1, "cgroup memory") in counters, summary.get("cgroup_peak_mb") is not None)
        self.assertFalse(any(name.startswith("GPU") for _, name in counters))  # no GPU measured here
        # The command: one slice named by it, its status and wait4's figures in args.
        processes = [s for track, spans in slices.items() if track[0] == 2 for s in spans]
        commands = [p for p in processes if p[3]["source"] != "taskstats"]
        self.assertEqual(len(commands), 1, processes)
        # Every other process of the tree, from its taskstats record, as it
        # ended: the two `resmon mark`s and the two workloads.
        others = sorted(p[0] for p in processes if p[3]["source"] == "taskstats")
        if summary["processes"]["source"] == "taskstats":
            expected = ["cli_workload", "cli_workload", "resmon", "resmon"]
            if SANITIZED:  # LeakSanitizer's tracer at each one's exit is a process of its own, of its name
                self.assertEqual(sorted(set(others)), ["cli_workload", "resmon"], processes)
                self.assertGreaterEqual(len(others), len(expected), processes)
            else:
                self.assertEqual(others, expected, processes)
            # the command's child that held 64 MiB (under a sanitizer its
            # tracer, a child of its own, shares its memory and its name)
            loads = [p for p in processes if p[0] == "cli_workload" and p[3]["peak_rss_mb"] >= 64
                     and p[3]["ppid"] == commands[0][3]["pid"]]
            self.assertEqual(len(loads), 1, processes)
            workload = loads[0]
            self.assertTrue(phases[0][1] - 1e5 <= workload[1] <= workload[2] <= phases[0][2] + 1e5, (workload, phases))
        else:
            self.assertEqual(others, [], processes)  # without taskstats: the command's slice alone
        name, start, end, args = commands[0]
        self.assertEqual(name, "sh")
        self.assertEqual((args["exit_code"], args.get("signal")), (3, None))
        self.assertEqual(args["command"], f"sh {script}")
        self.assertIsInstance(args["pid"], int)
        self.assertIsInstance(args["ppid"], int)
        self.assertEqual(args["source"], "wait4, with the processes it reaped")
        self.assertAlmostEqual(args["cpu_sec"], summary["cpu_sec"], places=6)
        self.assertGreaterEqual(args["cpu_sec"], 0.18)
        self.assertAlmostEqual(end - start, summary["wall_sec"] * 1e6, delta=1)
        self.assertLessEqual(start, phases[0][1])
        self.assert_no_temporary_files()

    def test_a_killed_resmon_leaves_a_trace_the_viewers_read(self):
        # The run marks a phase and sleeps; once the trace holds the phase
        # (written within a second of it), resmon is killed with SIGKILL.
        script = self.script(f'"{RESMON}" mark waiting\nexec "{WORKLOAD}" sleep {SAFETY_NET_SEC}\n')
        trace = self.path("t.json")
        p = subprocess.Popen([RESMON, "-q", "-i", "0.05", "--trace", trace, "--", "sh", script], env=self.env,
                             stderr=subprocess.PIPE, text=True)
        self.addCleanup(p.stderr.close)
        self.addCleanup(p.kill)
        begin = '{"name":"waiting","cat":"phase","ph":"B"'
        deadline = time.monotonic() + SAFETY_NET_SEC
        text = ""
        while begin not in text and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.05)
            if os.path.exists(trace):
                with open(trace) as f:
                    text = f.read()
        self.assertTrue(begin in text, f"the phase never reached the trace: {text[-300:]!r}")
        with open(f"/proc/{p.pid}/task/{p.pid}/children") as f:
            children = [int(pid) for pid in f.read().split()]
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=SAFETY_NET_SEC)
        for child in children:  # the command, left behind by the killed resmon
            os.killpg(child, signal.SIGKILL)
        with open(trace) as f:
            text = f.read()
        self.assertFalse(text.rstrip().endswith("]"), "a killed run cannot have closed the array")
        self.assertTrue(text.endswith("}\n"), f"the file ends with a whole event: {text[-80:]!r}")
        with self.assertRaises(json.JSONDecodeError):
            json.loads(text)
        slices, counters = check_trace(self, read_trace(trace, complete=False), complete=False)
        self.assertEqual([s[0] for s in slices[(1, 1)]], ["waiting"])
        self.assertEqual(slices[(1, 1)][0][2], math.inf)  # still open: the viewers draw it to the end
        self.assertGreater(len(counters[(1, "CPU")]), 1)
        left = sorted(n for n in os.listdir(self.dir.name) if not n.startswith("resmon-marks-"))
        self.assertEqual(left, ["t.json", "w.sh"])  # its own name, no temporary file (the killed run's marks
        # channel stays in TMPDIR, removed with it)

    def test_gpu_counters_where_a_gpu_is_measured(self):
        # The fake NVML (tests/fake_nvml.c): 42 % util, 1000 MiB.
        sysfs = self.path("sysfs")
        os.makedirs(sysfs)
        self.env.update(RESMON_NVML_LIBRARY=os.environ["FAKE_NVML_LIB"], FAKE_NVML="devices=1",
                        RESMON_SYSFS_ROOT=sysfs)
        r = self.run_resmon("-q", "-i", "0.02", "--gpu", "nvml:0", "-o", self.path("s.json"),
                            "--trace", self.path("t.json"), "--", WORKLOAD, "sleep", "0.2")
        self.assertEqual(r.returncode, 0, r.stderr)
        _, counters = check_trace(self, read_trace(self.path("t.json")))
        self.assertEqual({args["percent"] for _, args in counters[(1, "GPU utilisation")]}, {42.0})
        self.assertEqual({args["MiB"] for _, args in counters[(1, "GPU memory")]}, {1000.0})
        self.assertIn((1, "GPU power"), counters)

    def test_marks_at_one_sample_are_slices_of_their_own(self):
        # 300 marks sent in a burst (datagrams on RESMON_MARK_SOCKET, as
        # resmon mark sends them): several land on one sample (phases of
        # 0 s), past 256 they are refused, a full channel drops some; the
        # trace has exactly the summary's phases, in order.
        sender = ("import os, socket, time\n"
                  "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
                  "for i in range(300):\n"
                  "    try:\n"
                  "        s.sendto(b'm%d' % i, socket.MSG_DONTWAIT, os.environ['RESMON_MARK_SOCKET'])\n"
                  "    except OSError:\n"
                  "        pass\n"
                  "time.sleep(0.2)\n")
        r = self.run_resmon("-q", "-i", "0.05", "-o", self.path("s.json"), "--trace", self.path("t.json"),
                            "--", sys.executable, "-c", sender)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.path("s.json")) as f:
            summary = json.load(f)
        slices, _ = check_trace(self, read_trace(self.path("t.json")))
        phases = sorted(slices[(1, 1)], key=lambda s: (s[1], int(s[0][1:])))
        expected = [p for p in summary["phases"] if p["name"]]
        self.assertEqual([p[0] for p in phases], [p["name"] for p in expected])
        for (name, start, end, _), p in zip(phases, expected):
            self.assertAlmostEqual(start, p["start_sec"] * 1e6, delta=1, msg=name)
            self.assertAlmostEqual(end - start, p["duration_sec"] * 1e6, delta=1, msg=name)
        self.assertTrue(any(end == start for _, start, end, _ in phases), "no two marks at one sample")

    def feed_processes(self, lines):
        """trace_file_processes() given lines "pid ppid start end name" (cli_trace_processes)."""
        r = subprocess.run([os.environ["TRACE_PROCESSES"], self.path("p.json")], input="".join(lines), text=True,
                           capture_output=True, timeout=SAFETY_NET_SEC)
        self.assertEqual(r.returncode, 0, r.stderr)
        slices, _ = check_trace(self, read_trace(self.path("p.json")))
        return {track: spans for track, spans in slices.items() if track[0] == 2}

    def test_a_trace_whose_reader_fell_64_mib_behind_still_closes(self):
        # The reader takes nothing while more than the writer keeps (64 MiB)
        # is written, then reads it all: the events past the bound are
        # dropped and counted, and the array still ends with "]" (it had
        # none: the closing line was dropped with them).
        p = subprocess.Popen([os.environ["TRACE_PROCESSES"], "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        self.addCleanup(lambda: p.poll() is not None or p.kill())
        p.stdin.write(b"repeat 450000\n100 99 0 0.5 cc\n")
        p.stdin.close()
        p.stdin = None  # written: communicate has nothing to send
        self.assertEqual(p.stderr.readline(), b"fed\n")  # all appended, nothing read yet
        out, err = p.communicate(timeout=SAFETY_NET_SEC)
        self.assertEqual(p.returncode, 1, err)
        self.assertRegex(err.decode(), r"^the reader fell 64 MiB behind; [1-9][0-9]* not written\n$")
        self.assertGreater(len(out), 32 << 20)
        events = json.loads(out)  # whole: "]" included
        self.assertEqual(events[0]["ph"], "M")

    def test_processes_take_the_first_free_slot_and_never_overlap_on_one(self):
        # 500 processes of a made-up build: each a slice with its args, on a
        # slot where nothing else runs at the time.  Handed over in start
        # order (all at once, as a list at the end) the slots are as many as
        # ran at once; handed over one by one as they end (as taskstats
        # delivers them), more may be opened, never an overlap.
        rng = random.Random(34)
        spans = []
        for pid in range(100, 600):
            start = round(rng.uniform(0, 20), 6)
            spans.append((pid, start, round(start + rng.expovariate(1 / 0.7), 6)))
        most_at_once = max(sum(1 for _, s, e in spans if s <= t < e) for _, t, _ in spans)
        by_start = ["batch\n"] + [f"{pid} 99 {s} {e} cc{pid}\n" for pid, s, e in sorted(spans, key=lambda x: x[1])]
        by_end = [f"{pid} 99 {s} {e} cc{pid}\n" for pid, s, e in sorted(spans, key=lambda x: x[2])]
        for lines, exact in ((by_start, True), (by_end, False)):
            with self.subTest(order="start" if exact else "end"):
                slots = self.feed_processes(lines)
                got = sorted((args["pid"], name, start, end) for spans_ in slots.values()
                             for name, start, end, args in spans_)
                self.assertEqual([(pid, name) for pid, name, _, _ in got], [(pid, f"cc{pid}") for pid, _, _ in
                                                                          sorted(spans)])
                for (pid, _, start, end), (_, s, e) in zip(got, sorted(spans)):
                    self.assertAlmostEqual(start, s * 1e6, delta=0.002)
                    self.assertAlmostEqual(end, e * 1e6, delta=0.002)
                if exact:
                    self.assertEqual(len(slots), most_at_once)
                else:
                    self.assertGreaterEqual(len(slots), most_at_once)
        # One still running when handed over: drawn to the trace's end, and said so.
        slots = self.feed_processes(["1 0 0 2 make\n", "2 1 0.5 - cc1\n"])
        spans_ = {name: (start, end, args) for s in slots.values() for name, start, end, args in s}
        self.assertEqual(spans_["cc1"][1], 2e6)
        self.assertTrue(spans_["cc1"][2]["running_at_end"])
        self.assertEqual(spans_["cc1"][2]["ppid"], 1)
        self.assertEqual((spans_["make"][2]["cpu_sec"], spans_["make"][2]["peak_rss_mb"]), (0.5, 12.25))

    def test_the_check_refuses_what_a_viewer_would_not_draw(self):
        # The strict check itself: each mistake a writer could make is caught.
        meta = [{"name": "process_name", "cat": "__metadata", "ph": "M", "pid": 1, "tid": 1, "ts": 0,
                 "args": {"name": "p"}},
                {"name": "thread_name", "cat": "__metadata", "ph": "M", "pid": 1, "tid": 1, "ts": 0,
                 "args": {"name": "t"}}]
        x = {"name": "a", "cat": "c", "ph": "X", "pid": 1, "tid": 1, "ts": 10, "dur": 5}
        check_trace(self, meta + [x])
        bad = [
            [dict(x, dur=-1)], [{k: v for k, v in x.items() if k != "dur"}], [{k: v for k, v in x.items() if k != "ts"}],
            [dict(x, ts="10")], [dict(x, pid="1")], [dict(x, tid=2)], [x, dict(x, ts=12, dur=5)],
            [dict(x, ph="E")], [dict(x, ph="B"), dict(x, ph="E", ts=5)], [dict(x, ph="B")],
            [{"name": "C", "cat": "c", "ph": "C", "pid": 1, "tid": 1, "ts": 1, "args": {"v": "1"}}],
            [{"name": "C", "cat": "c", "ph": "C", "pid": 1, "tid": 1, "ts": 1, "args": {}}],
            [{"name": "C", "cat": "c", "ph": "C", "pid": 1, "tid": 1, "ts": 2, "args": {"v": 1}},
             {"name": "C", "cat": "c", "ph": "C", "pid": 1, "tid": 1, "ts": 1, "args": {"v": 1}}],
            [dict(x, ph="Q")], [dict(x, extra=1)],
        ]
        for events in bad:
            with self.subTest(events=events), self.assertRaises(AssertionError):
                check_trace(self, meta + events)

    def test_a_long_command_line_is_cut_with_a_mark_never_silently(self):
        # 600 bytes of "x" then "é" (2 bytes) across the 512-byte cut: the
        # slice's command and the run's name end with an ellipsis, are cut
        # on a character boundary, and the slice says how long the line was.
        long_arg = "x" * 508 + "\u00e9" * 50
        trace = self.path("t.json")
        done = self.run_resmon("-q", "--trace", trace, "--", "sh", "-c", "exit 0", "sh", long_arg)
        self.assertEqual(done.returncode, 0, done.stderr)
        events = read_trace(trace)
        slices, _ = check_trace(self, events)
        full = f"sh -c exit 0 sh {long_arg}"
        commands = [s for spans in slices.values() for s in spans if s[3].get("source", "").startswith("wait4")]
        self.assertEqual(len(commands), 1)
        args = commands[0][3]
        self.assertTrue(args["command"].endswith("\u2026"), args["command"][-20:])
        self.assertTrue(full.startswith(args["command"][:-1]))
        self.assertLessEqual(len(args["command"].encode()), 512)
        self.assertEqual((args["command_truncated"], args["command_bytes"]), (True, len(full.encode())))
        title = [e["args"]["name"] for e in events if e["name"] == "process_name" and e["pid"] == 1][0]
        self.assertTrue(title.endswith("\u2026"), title[-20:])
        self.assertNotIn("\ufffd", title + args["command"])  # never cut inside a character
        # a line that fits is whole, with no mark
        done = self.run_resmon("-q", "--trace", trace, "--", "sh", "-c", "exit 0")
        slices, _ = check_trace(self, read_trace(trace))
        args = [s for spans in slices.values() for s in spans if s[3].get("source", "").startswith("wait4")][0][3]
        self.assertEqual(args["command"], "sh -c exit 0")
        self.assertNotIn("command_truncated", args)

    def test_the_name_must_end_in_json(self):
        for name in ("t.csv", "t.jsonl", "t"):
            r = self.run_resmon("-q", "--trace", self.path(name), "--", "touch", self.path("started"))
            self.assertEqual(r.returncode, 125)
            self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
            self.assertIn(f"trace file '{self.path(name)}' must end in .json", r.stderr)
            self.assertFalse(os.path.exists(self.path("started")))
        r = self.run_resmon("-q", "--trace", self.path("T.JSON"), "--", "true")
        self.assertEqual(r.returncode, 0, r.stderr)
        check_trace(self, read_trace(self.path("T.JSON")))

    def test_not_with_repeat_and_not_the_same_file_as_another_output(self):
        r = self.run_resmon("-q", "--repeat", "2", "--trace", self.path("t.json"), "--", "true")
        self.assertEqual(r.returncode, 125)
        self.assertIn("--trace is of one run", r.stderr)
        r = self.run_resmon("-q", "-o", self.path("t.json"), "--trace", self.path("t.json"), "--", "true")
        self.assertEqual(r.returncode, 125)
        self.assertIn("name the same file", r.stderr)
        self.assertEqual(os.listdir(self.dir.name), [])

    def test_unwritable_paths_behave_as_the_samples_file(self):
        r = self.run_resmon("-q", "--trace", self.path("missing/t.json"), "--", "true")
        self.assertEqual(r.returncode, 125)
        self.assertIn(f"cannot write trace file '{self.path('missing/t.json')}'", r.stderr)
        # A failed start keeps what was there; a run replaces it and keeps the link to it.
        with open(self.path("old.json"), "w") as f:
            f.write("old\n")
        os.symlink("old.json", self.path("link.json"))
        r = self.run_resmon("-q", "--trace", self.path("link.json"), "--", "resmon-no-such-command-xyz")
        self.assertEqual(r.returncode, 127)
        with open(self.path("old.json")) as f:
            self.assertEqual(f.read(), "old\n")
        self.assert_no_temporary_files()
        r = self.run_resmon("-q", "--trace", self.path("link.json"), "--", "true")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.islink(self.path("link.json")))
        check_trace(self, read_trace(self.path("old.json")))
        # A full device: the error is said, and the command's success becomes 125.
        os.symlink("/dev/full", self.path("full.json"))
        r = self.run_resmon("-q", "--trace", self.path("full.json"), "--", "true")
        self.assertEqual(r.returncode, 125)
        self.assertIn(f"error writing trace file '{self.path('full.json')}': No space left on device", r.stderr)
        self.assertTrue(os.path.islink(self.path("full.json")))
        self.assertTrue(stat.S_ISCHR(os.stat("/dev/full").st_mode))

    def test_a_read_only_file_is_refused_and_kept(self):
        with open(self.path("ro.json"), "w") as f:
            f.write("old\n")
        os.chmod(self.path("ro.json"), 0o444)
        r = self.run_resmon("-q", "--trace", self.path("ro.json"), "--", "touch", self.path("started"))
        self.assertEqual(r.returncode, 125, r.stderr)
        self.assertEqual(r.stderr, f"resmon: cannot write trace file '{self.path('ro.json')}': Permission denied\n")
        self.assertFalse(os.path.exists(self.path("started")))
        with open(self.path("ro.json")) as f:
            self.assertEqual(f.read(), "old\n")
        self.assertEqual(stat.S_IMODE(os.stat(self.path("ro.json")).st_mode), 0o444)
        self.assert_no_temporary_files()

    def test_a_fifo_is_written_in_place(self):
        fifo = self.path("t.json")
        os.mkfifo(fifo)
        p = subprocess.Popen([RESMON, "-q", "--trace", fifo, "--", "echo", "hi"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=self.env)
        self.addCleanup(p.kill)
        self.assertIn(f"waiting for a reader on FIFO '{fifo}'", p.stderr.readline())
        with open(fifo) as f:
            events = json.loads(f.read())
        out, err = p.communicate(timeout=SAFETY_NET_SEC)
        self.assertEqual(p.returncode, 0, err)
        self.assertEqual(out, "hi\n")
        check_trace(self, events)
        self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))

    def test_an_independent_reader_builds_the_same_model(self):
        # @tracerbench/trace-model (npm) builds processes, threads and slices
        # from trace events as a trace viewer's model does.  It is not
        # bundled: the test runs where RESMON_TRACE_MODEL names its
        # node_modules directory (no network at test time).
        modules = os.environ.get("RESMON_TRACE_MODEL")
        node = shutil.which("node")
        if not modules or not node:
            self.skipTest("set RESMON_TRACE_MODEL to a node_modules directory holding @tracerbench/trace-model "
                          "(npm install @tracerbench/trace-model), with node on PATH")
        script = self.script(f'"{RESMON}" mark one\n"{WORKLOAD}" sleep 0.1\n"{RESMON}" mark two\n')
        r = self.run_resmon("-q", "-i", "0.02", "--trace", self.path("t.json"), "--", "sh", script)
        self.assertEqual(r.returncode, 0, r.stderr)
        reader = (
            "const {buildModel} = require('@tracerbench/trace-model');"
            "const fs = require('fs');"
            "const m = buildModel(JSON.parse(fs.readFileSync(process.argv[1], 'utf8')));"
            "console.log(JSON.stringify(m.processes.map(p => ({pid: p.id, name: p.name, threads: p.threads.map("
            "t => ({tid: t.id, name: t.name, slices: t.events.filter(e => e.isComplete()).map("
            "e => [e.name, e.start, e.end])}))}))));")
        out = subprocess.run([node, "-e", reader, self.path("t.json")], capture_output=True, text=True,
                             timeout=SAFETY_NET_SEC, env=dict(self.env, NODE_PATH=modules))
        self.assertEqual(out.returncode, 0, out.stderr)
        model = {p["pid"]: p for p in json.loads(out.stdout)}
        self.assertEqual(model[1]["name"], f"resmon \u2014 sh {script}")
        self.assertEqual(model[2]["name"], "processes")
        threads = {t["tid"]: t for p in model.values() for t in p["threads"]}
        self.assertEqual(threads[1]["name"], "phases")
        self.assertEqual([s[0] for s in threads[1]["slices"]], ["one", "two"])
        self.assertEqual(threads[2]["name"], "slot 1")
        self.assertEqual([s[0] for s in threads[2]["slices"]], ["sh"])
        slices, _ = check_trace(self, read_trace(self.path("t.json")))
        self.assertEqual([[s[0], s[1], s[2]] for s in slices[(1, 1)]],
                         [[name, start, end] for name, start, end in threads[1]["slices"]])


if __name__ == "__main__":
    unittest.main()
