#!/usr/bin/env python3
"""Tests of the chart (--plot) and of `resmon plot`, on the real binary: the
SVG is parsed and its geometry read back through the axes' own tick labels.

Environment: RESMON (the command), WORKLOAD (tests/cli/workload.c).
"""
import csv
import json
import math
import os
import resource
import shutil
import signal
import tempfile
import unittest
import xml.etree.ElementTree as ET

# tests/cli/helpers.py: the signal dispositions, the environment and resmon().
from helpers import SAFETY_NET_SEC, TIME_FACTOR, WORKLOAD, resmon, sticky_with_links
SVG = "{http://www.w3.org/2000/svg}"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


# The workload's "mem" mode holds its memory to the end on purpose: not a
# leak for LeakSanitizer to fail a sanitized build's run on.
WORKLOAD_ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")


def by_id(root, element_id):
    return next((e for e in root.iter() if e.get("id") == element_id), None)


def panel(root, name):
    found = by_id(root, f"panel-{name}")
    if found is None:
        raise AssertionError(f"no panel-{name}")
    return found


def y_scale(group):
    """value -> SVG y, from a panel's y tick labels (text y is the line's + 4)."""
    ticks = [(float(t.text), float(t.get("y")) - 4) for t in group.iter(SVG + "text")
             if "y-tick" in (t.get("class") or "")]
    (v0, y0), (v1, y1) = ticks[0], ticks[-1]
    return lambda v: y0 + (v - v0) * (y1 - y0) / (v1 - v0)


def x_ticks(root):
    """(seconds, SVG x) of the time axis's round tick labels."""
    return [(float(t.text), float(t.get("x"))) for t in root.iter(SVG + "text")
            if "tick" in (t.get("class") or "").split() and t.get("text-anchor") == "middle"
            and "x-end" not in t.get("class")]


def x_value(root):
    """SVG x -> seconds."""
    (v0, x0), (v1, x1) = x_ticks(root)[:2]
    return lambda x: v0 + (x - x0) * (v1 - v0) / (x1 - x0)


def x_axis(root):
    """(seconds at the plot area's right edge, tick step)."""
    (v0, _), (v1, _) = x_ticks(root)[:2]
    area = next(e for e in root.iter(SVG + "rect") if e.get("stroke") == "#cbd5e1")  # a panel's frame
    return x_value(root)(float(area.get("x")) + float(area.get("width"))), v1 - v0


def points(element):
    return [tuple(map(float, p.split(","))) for p in element.get("points").split()]



def require_real_converter(test):
    """Skips, saying why, unless the real rsvg-convert is installed and the
    machine is not loaded on purpose.  resmon gives a converter the end's
    fixed 5 s (a hung one must not hold the run); under the busy-loop stage
    (six loops on 2 CPUs, RESMON_TEST_TIME_FACTOR > 1) a real one starting up
    took longer (CI18 of stop 47): that bound is tested with a fake converter
    (test_stuck_outputs), the PNG itself on an unloaded machine."""
    if not shutil.which("rsvg-convert"):
        test.skipTest("rsvg-convert not installed (librsvg2-bin)")
    if TIME_FACTOR > 1:
        test.skipTest("a real converter under deliberate load can pass the end's fixed 5 s")

class Tmp(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="resmon-plot-")
        self.addCleanup(self.dir.cleanup)

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def write(self, name, text):
        with open(self.path(name), "w") as f:
            f.write(text)
        return self.path(name)

    def run_ok(self, *args, **kw):
        r = resmon(*args, **kw)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def svg(self, name="p.svg"):
        return ET.parse(self.path(name)).getroot()


class LiveChart(Tmp):
    def test_time_axis_ends_at_the_runs_end(self):
        # issue 22: a 0.65 s run had its axis run to 0.8 s, a 9.8 s one to 12 s
        for seconds in ("0.65", "1.3"):
            self.run_ok("-q", "-i", "0.02", "-o", self.path("s.json"), "--plot", self.path("p.svg"), "--",
                        WORKLOAD, "sleep", seconds)
            with open(self.path("s.json")) as f:
                summary = json.load(f)
            # The run ends at the command's end, or at the last sample when a
            # busy machine delayed that past it (12 ms seen under six busy loops).
            wall = max(summary["wall_sec"], summary["duration_sec"])
            end, step = x_axis(self.svg())
            self.assertLess(abs(end - wall), max(0.01 * wall, step / 50), (seconds, end, wall, step))

    def capacity_line(self, root):
        line = by_id(root, "cpu-capacity")
        self.assertIsNotNone(line, "no capacity line")
        y = float(line.get("y1"))
        return y, y_scale(panel(root, "cpu")), by_id(root, "cpu-capacity-label").text

    def test_cpu_capacity_line_is_at_the_cpus_of_the_affinity_mask(self):
        def pin_to_first_cpu():
            os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

        self.run_ok("-q", "-i", "0.02", "--plot", self.path("p.svg"), "--", WORKLOAD, "spin", "0.3",
                    preexec_fn=pin_to_first_cpu)
        y, scale, label = self.capacity_line(self.svg())
        self.assertAlmostEqual(y, scale(100), delta=0.6)
        self.assertIn("= 1 CPU (resmon's affinity mask)", label)
        cpus = len(os.sched_getaffinity(0))
        if cpus > 4:
            self.skipTest(f"{cpus} CPUs: the capacity line is off a one-thread workload's scale")
        self.run_ok("-q", "-i", "0.02", "--plot", self.path("p.svg"), "--", WORKLOAD, "spin", "0.3")
        y, scale, label = self.capacity_line(self.svg())
        self.assertAlmostEqual(y, scale(cpus * 100), delta=0.6)
        self.assertIn(f"capacity {cpus * 100} % = {cpus} CPU", label)

    def test_exact_peak_names_its_scope(self):
        # two 40 MiB processes at once: the tree's sampled RSS is above the
        # largest single process's exact peak, and the chart says whose it is
        self.run_ok("-q", "-i", "0.02", "--plot", self.path("p.svg"), "--", "sh", "-c",
                    f"{WORKLOAD} mem 40 0.5 & {WORKLOAD} mem 40 0.5 & wait", env=WORKLOAD_ENV)
        root = self.svg()
        label = by_id(root, "exact-peak-label").text
        self.assertIn("largest single process, exact", label)
        self.assertIn("(wait4)", label)
        texts = " ".join(t.text or "" for t in root.iter(SVG + "text"))
        self.assertNotIn("exact peak (largest process)", texts)  # the old legend that read as a ceiling
        self.assertIn("RSS (tree)", texts)

    def test_subtitle_names_the_asked_interval_and_io_lines_never_hide_each_other(self):
        # Issue 29, 6: the subtitle said "every 0.1006 s" (the measured mean);
        # equal read and written totals (a copy) drew one line over the other.
        self.run_ok("-q", "-i", "0.02", "--plot", self.path("p.svg"), "--", "sh", "-c",
                    "dd if=/dev/zero of=/dev/null bs=64k count=200 2>/dev/null; sleep 0.1")
        root = self.svg()
        subtitle = next(t.text for t in root.iter(SVG + "text") if t.get("class") == "subtitle")
        self.assertRegex(subtitle, r" every 0\.02 s$")
        read, written = by_id(root, "series-io-read"), by_id(root, "series-io-written")
        self.assertGreater(float(read.get("stroke-width")), float(written.get("stroke-width")) + 2)
        group = list(panel(root, "io"))
        self.assertLess(group.index(read), group.index(written))  # the wide one underneath

    def test_process_count_is_drawn_when_counts_were_read(self):
        self.run_ok("-q", "-i", "0.02", "-s", self.path("s.csv"), "--plot", self.path("p.svg"), "--", "sh", "-c",
                    f"{WORKLOAD} sleep 0.4 & {WORKLOAD} sleep 0.4 & wait")
        root = self.svg()
        series = by_id(root, "series-nprocs")
        self.assertIsNotNone(series)
        with open(self.path("s.csv")) as f:
            most = max(float(r["nprocs"]) for r in csv.DictReader(f))
        self.assertGreaterEqual(most, 3)  # sh and its two workloads
        scale = y_scale(panel(root, "nprocs"))
        self.assertAlmostEqual(min(y for _, y in points(series)), scale(most), delta=0.6)
        # without the counts group, no strip (and no I/O panel without io)
        self.run_ok("-q", "--metrics", "memory", "--plot", self.path("p.svg"), "--", WORKLOAD, "sleep", "0.1")
        root = self.svg()
        self.assertIsNone(by_id(root, "panel-nprocs"))
        self.assertIsNone(by_id(root, "panel-io"))
        self.assertIsNotNone(by_id(root, "series-pss"))

    def test_png_name_writes_png(self):
        require_real_converter(self)
        self.run_ok("-q", "--plot", self.path("p.png"), "--", WORKLOAD, "sleep", "0.1")
        with open(self.path("p.png"), "rb") as f:
            self.assertEqual(f.read(8), PNG_MAGIC)

    def test_png_without_rsvg_convert_is_refused_before_the_command(self):
        empty = self.path("bin")
        os.mkdir(empty)
        marker = self.path("started")
        r = resmon("-q", "--plot", self.path("p.png"), "--", "/bin/sh", "-c", f": > {marker}",
                   env=dict(os.environ, PATH=empty))
        self.assertEqual(r.returncode, 125, r.stderr)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertIn("rsvg-convert", r.stderr)
        self.assertIn(self.path("p.png"), r.stderr)
        self.assertFalse(os.path.exists(marker))
        self.assertEqual(os.listdir(self.dir.name), ["bin"])  # no p.png, no temporary file

    def test_a_directory_named_rsvg_convert_is_not_the_converter(self):
        # Eighth review of issue 28: a directory of that name earlier on
        # PATH was taken (access(X_OK) is true of a directory) and the end
        # failed with EACCES; execvp skips it, and so does resmon now.
        shadow = self.path("shadow")
        os.makedirs(os.path.join(shadow, "rsvg-convert"))
        empty = self.path("empty")
        os.mkdir(empty)
        r = resmon("-q", "--plot", self.path("p.png"), "--", "true", env=dict(os.environ, PATH=f"{shadow}:{empty}"))
        self.assertEqual(r.returncode, 125, r.stderr)  # before: accepted, then "cannot run .../rsvg-convert"
        self.assertIn("rsvg-convert", r.stderr)
        self.assertNotIn("cannot run", r.stderr)
        self.assertFalse(os.path.exists(self.path("p.png")))

    def test_a_converter_that_writes_no_png_leaves_no_chart(self):
        # Eighth review of issue 28: a converter exiting 0 having written
        # nothing left a 0-byte p.png and exit 0.  The same for one that
        # writes something that is not a PNG.
        for body in ("exit 0", "echo not a png; exit 0"):
            with self.subTest(body=body):
                bin_dir = self.path("bin")
                os.makedirs(bin_dir, exist_ok=True)
                with open(os.path.join(bin_dir, "rsvg-convert"), "w") as f:
                    f.write(f"#!/bin/sh\n{body}\n")
                os.chmod(os.path.join(bin_dir, "rsvg-convert"), 0o755)
                env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
                r = resmon("-q", "--plot", self.path("p.png"), "-o", self.path("s.json"), "--", "true", env=env)
                self.assertEqual(r.returncode, 125, r.stderr)
                self.assertRegex(r.stderr, r"rsvg-convert exited 0 but wrote no PNG")
                self.assertFalse(os.path.exists(self.path("p.png")))
                with open(self.path("s.json")) as f:
                    self.assertEqual(json.load(f)["exit_status"], 0)

    def test_raster_names_it_cannot_write_are_refused(self):
        r = resmon("-q", "--plot", self.path("p.jpg"), "--", "true")
        self.assertEqual(r.returncode, 125)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertFalse(os.path.exists(self.path("p.jpg")))


def samples(path, rows, columns=("timestamp", "elapsed_sec", "cpu_percent", "rss_mb")):
    with open(path, "w") as f:
        f.write(",".join(columns) + "\n")
        for row in rows:
            f.write(",".join(str(v) for v in row) + "\n")
    return path


class PlotCommand(Tmp):
    def record(self, name, *workload):
        self.run_ok("-q", "-i", "0.02", "-s", self.path(name), "--", WORKLOAD, *workload, env=WORKLOAD_ENV)
        return self.path(name)

    def test_two_runs_overlaid_with_a_legend(self):
        base = self.record("base.csv", "mem", "30", "0.3")
        new = self.record("new.jsonl", "mem", "60", "0.5")
        self.run_ok("plot", base, new, "--label", "base", "-l", "new", "-o", self.path("o.svg"))
        root = self.svg("o.svg")
        labels = [next(e for e in by_id(root, f"run-legend-{i}").iter() if e.get("class") == "run-label").text
                  for i in (1, 2)]
        self.assertEqual(labels, ["base", "new"])
        strokes = [by_id(root, f"series-rss-{i}").get("stroke") for i in (1, 2)]
        self.assertNotEqual(strokes[0], strokes[1])
        fills = [next(e for e in by_id(root, f"run-legend-{i}").iter(SVG + "rect")).get("fill") for i in (1, 2)]
        self.assertEqual(fills, strokes)  # each legend entry in its run's colour
        # the longer run sets the axis end; the RSS curves reach their files' peaks
        with open(new) as f:
            rows = [json.loads(line) for line in f]
        end, _ = x_axis(root)
        self.assertAlmostEqual(end, rows[-1]["elapsed_sec"], delta=0.005)
        scale = y_scale(panel(root, "memory"))
        self.assertAlmostEqual(min(y for _, y in points(by_id(root, "series-rss-2"))),
                               scale(max(r["rss_mb"] for r in rows)), delta=0.6)
        # without --label, the file name
        self.run_ok("plot", base, new, "-o", self.path("o.svg"))
        texts = [e.text for e in self.svg("o.svg").iter() if e.get("class") == "run-label"]
        self.assertEqual(texts, ["base.csv", "new.jsonl"])

    def test_huge_figures_in_a_legend_stay_short(self):
        # Attack 67 F16: a file's 1.79e308 s and MiB were written out in full
        # in the legend, 309 digits each.
        samples = self.record("s.csv", "sleep", "0")
        with open(samples, newline="") as f:
            rows = list(csv.reader(f))
        huge = rows[1][:]
        for key in ("elapsed_sec", "rss_mb"):
            huge[rows[0].index(key)] = "1.79e308"
        with open(samples, "w", newline="") as f:
            csv.writer(f).writerows([rows[0], rows[1], huge])
        self.run_ok("plot", samples, "-o", self.path("o.svg"))
        legend = "".join(by_id(self.svg("o.svg"), "run-legend-1").itertext())
        self.assertIn("1.79e+308 s", legend)
        self.assertIn("peak RSS 1.79e+308 MiB", legend)
        self.assertLess(len(legend), 120, legend)

    def test_every_series_of_the_live_chart_reads_back_the_same(self):
        # The run's --plot and `resmon plot` of its samples file draw the
        # same points for every series (the CPU panel's height is the
        # machine's CPUs live and the file's peak read back: compared in
        # percent).  As root the command's leaf cgroup gives the cgroup
        # line, which a reader that skipped cgroup_mem_mb drew flat at zero.
        for name in ("s.csv", "s.jsonl"):
            with self.subTest(samples=name):
                self.run_ok("-q", "-i", "0.02", "-s", self.path(name), "--plot", self.path("live.svg"), "--",
                            "sh", "-c", f"{WORKLOAD} mem 30 0.2; {WORKLOAD} mem 60 0.2", env=WORKLOAD_ENV)
                self.run_ok("plot", self.path(name), "-o", self.path("back.svg"))
                live, back = self.svg("live.svg"), self.svg("back.svg")
                drawn = [e.get("id") for e in live.iter() if (e.get("id") or "").startswith("series-")]
                self.assertEqual(drawn, [e.get("id") for e in back.iter()
                                         if (e.get("id") or "").startswith("series-")])
                self.assertIn("series-rss", drawn)
                # Time in seconds on each chart's own axis (the live one ends at
                # the run's end, the file's at its last row: a busy machine
                # puts them apart), to half a pixel (each rounds to a tenth).
                seconds = [x_value(root) for root in (live, back)]
                per_px = [sec(1) - sec(0) for sec in seconds]
                for series in drawn:
                    a, b = points(by_id(live, series)), points(by_id(back, series))
                    self.assertEqual(len(a), len(b), series)
                    for (xa, ya), (xb, yb) in zip(a, b):
                        self.assertAlmostEqual(seconds[0](xa), seconds[1](xb), delta=0.5 * max(per_px), msg=series)
                        if series == "series-cpu":
                            scale = [y_scale(panel(root, "cpu")) for root in (live, back)]
                            self.assertAlmostEqual((scale[0](0) - ya) / (scale[0](0) - scale[0](100)),
                                                   (scale[1](0) - yb) / (scale[1](0) - scale[1](100)), delta=0.01)
                        else:
                            self.assertEqual(ya, yb, series)

    def test_values_near_the_largest_double_end_in_a_chart(self):
        # Review of issue 28: a field of 1e308 in a samples file made the
        # axis top (its value and a little head room, rounded up) infinite,
        # and the loop drawing its ticks never ended: `resmon plot` wrote
        # SVG until the disk was full.  Every field and the time near the
        # largest double, positive and negative, now draw a chart of a few
        # ticks.
        columns = ("timestamp", "elapsed_sec", "cpu_percent", "rss_mb", "nprocs", "cgroup_mem_mb", "read_bytes")
        for value in ("1e308", "-1e308", "1.7976931348623157e308", "1e-300"):
            with self.subTest(value=value):
                rows = [(1, 0.1, value, value, value, value, value), (2, 0.2, 1, 1, 1, 1, 1),
                        (3, value if float(value) > 1 else 0.3, 5, 5, 5, 5, 5)]
                run = samples(self.path("huge.csv"), rows, columns)
                # A file size limit keeps a loop that does not end from filling
                # the disk (SIGXFSZ is a write error to resmon: 125).
                r = resmon("plot", run, "-o", self.path("huge.svg"), timeout=SAFETY_NET_SEC,
                           preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (50 << 20, 50 << 20)))
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertLess(os.path.getsize(self.path("huge.svg")), 200_000)
                root = self.svg("huge.svg")
                ticks = [e for e in root.iter() if "tick" in (e.get("class") or "")]
                self.assertLess(len(ticks), 200)

    def test_every_coordinate_is_finite_for_values_near_the_largest_double(self):
        # Attack 56a B10: 1.79e308 is finite, but the axis's last round
        # tick past it (4 x 5e307) was infinite, and `resmon plot` wrote
        # y="-inf"; a mean of two such values (a point of two samples, two
        # points merged on a long run) summed to infinity too, and
        # -1.79e308 on an axis of 100 scaled to an infinite coordinate.
        # Every number the chart writes is finite; the ticks stay within
        # the axis.
        columns = ("timestamp", "elapsed_sec", "cpu_percent", "rss_mb", "gpu_util", "nprocs", "read_bytes")
        huge = "1.79e308"
        cases = {
            "a few rows": [(1, 0.1, huge, huge, huge, huge, huge), (2, 0.2, 1, 1, 1, 1, 1),
                           (3, 0.3, f"-{huge}", f"-{huge}", f"-{huge}", 5, 5), (4, huge, 5, 5, 5, 5, 5)],
            # past CHART_MAX_POINTS (2048): points of two samples, then merged
            "a long run": [(t, t / 10, huge, huge, huge, 1, t) for t in range(1, 4200)],
        }
        for case, rows in cases.items():
            with self.subTest(case=case):
                run = samples(self.path("huge.csv"), rows, columns)
                r = resmon("plot", run, "-o", self.path("huge.svg"), timeout=SAFETY_NET_SEC)
                self.assertEqual(r.returncode, 0, r.stderr)
                root = self.svg("huge.svg")
                for e in root.iter():
                    for name in ("x", "y", "x1", "x2", "y1", "y2", "width", "height", "points"):
                        text = e.get(name)
                        if text is None:
                            continue
                        for number in text.replace(",", " ").split():
                            self.assertTrue(math.isfinite(float(number)), (case, e.tag, name, text))
                ticks = [float(t.text) for t in root.iter(SVG + "text") if "y-tick" in (t.get("class") or "")]
                self.assertTrue(ticks and all(math.isfinite(v) for v in ticks), ticks)
                run_line = next(t for t in root.iter(SVG + "text") if t.get("class") == "subtitle")
                self.assertNotIn("inf", "".join(run_line.itertext()))
                if case == "a long run":  # every mean is 1.79e308 itself: the top of its panel
                    for name, series in (("cpu", "series-cpu"), ("cpu", "series-gpu-util")):
                        area = next(e for e in panel(root, name).iter(SVG + "rect") if e.get("class") == "plot-area")
                        ys = {y for _, y in points(by_id(root, series))}
                        self.assertEqual(ys, {float(area.get("y"))}, series)

    def test_cgroup_column_draws_the_cgroup_line(self):
        columns = ("timestamp", "elapsed_sec", "cpu_percent", "rss_mb", "cgroup_mem_mb")
        rows = [(t / 10, t / 10, 50, 1 + t, mb) for t, mb in enumerate((0.25, 20, 60, 104, 80))]
        path = samples(self.path("c.csv"), rows, columns)
        with open(self.path("c.jsonl"), "w") as f:
            for row in rows:
                f.write(json.dumps(dict(zip(columns, row))) + "\n")
        for name in ("c.csv", "c.jsonl"):
            with self.subTest(samples=name):
                self.run_ok("plot", self.path(name), "-o", self.path("o.svg"))
                root = self.svg("o.svg")
                series = by_id(root, "series-cgroup")
                self.assertIsNotNone(series)
                scale = y_scale(panel(root, "memory"))
                ys = [y for _, y in points(series)]
                self.assertAlmostEqual(min(ys), scale(104), delta=0.6)
                self.assertAlmostEqual(max(ys), scale(0.25), delta=0.6)
        # an empty column (a run without a cgroup) draws no cgroup line,
        # and a column the file lacks is not known, never zero
        for cgroup in ("", None):
            rows = [(t / 10, t / 10, 50, 1 + t) + ((cgroup,) if cgroup is not None else ()) for t in range(3)]
            self.run_ok("plot", samples(self.path("n.csv"), rows, columns[:len(rows[0])]), "-o", self.path("o.svg"))
            root = self.svg("o.svg")
            for absent in ("series-cgroup", "series-pss", "series-nprocs", "series-io-read"):
                self.assertIsNone(by_id(root, absent), absent)

    def test_phase_column_draws_labelled_bands(self):
        columns = ("timestamp", "elapsed_sec", "cpu_percent", "rss_mb", "nprocs", "phase")
        rows = [(100 + t / 10, t / 10, 50, 10 + t, 1, name) for t, name in
                [(0, ""), (1, ""), (2, "load"), (3, "load"), (4, "load"), (5, "compute"), (6, "compute"),
                 (7, '"write, back"'), (8, '"write, back"')]]
        path = samples(self.path("phases.csv"), rows, columns)
        self.run_ok("plot", path, "-o", self.path("o.svg"))
        root = self.svg("o.svg")
        bands = [e for e in root.iter(SVG + "rect") if e.get("class") == "phase-band"]
        names = [b.find(SVG + "title").text for b in bands]
        self.assertEqual(names, ["load", "compute", "write, back"])
        to_sec = x_value(root)
        starts = [to_sec(float(b.get("x"))) for b in bands]
        ends = [to_sec(float(b.get("x")) + float(b.get("width"))) for b in bands]
        for got, want in zip(starts + ends, [0.2, 0.5, 0.7, 0.5, 0.7, 0.8]):
            self.assertAlmostEqual(got, want, delta=0.002)
        labels = [e.text for e in root.iter(SVG + "text") if e.get("class") == "phase-label"]
        self.assertEqual(labels, ["load", "compute", "write, back"])
        self.assertTrue(any(e.get("class") == "phase-shade" for e in root.iter()))
        # the same from JSON Lines
        with open(self.path("phases.jsonl"), "w") as f:
            for row in rows:
                record = dict(zip(columns, row))
                record["phase"] = record["phase"].strip('"') or None
                f.write(json.dumps(record) + "\n")
        self.run_ok("plot", self.path("phases.jsonl"), "-o", self.path("j.svg"))
        names = [b.find(SVG + "title").text for b in self.svg("j.svg").iter(SVG + "rect")
                 if b.get("class") == "phase-band"]
        self.assertEqual(names, ["load", "compute", "write, back"])

    def test_phases_beyond_the_bound_are_counted_not_kept(self):
        columns = ("timestamp", "elapsed_sec", "cpu_percent", "rss_mb", "phase")
        rows = [(i / 100, i / 100, 10, 5, f"step {i}") for i in range(100)]
        self.run_ok("plot", samples(self.path("many.csv"), rows, columns), "-o", self.path("o.svg"))
        root = self.svg("o.svg")
        bands = [e for e in root.iter(SVG + "rect") if e.get("class") == "phase-band"]
        self.assertEqual(len(bands), 64)  # CHART_MAX_PHASES
        self.assertEqual(float(bands[-1].get("data-end")), 0.99)  # the last kept one runs to the end
        self.assertIn("+36 more phases", [e.text for e in root.iter(SVG + "text")])

    def test_no_nprocs_column_no_process_series(self):
        path = samples(self.path("a.csv"), [(1, 0, 0, 5), (1.1, 0.1, 40, 8)])
        self.run_ok("plot", path, "-o", self.path("o.svg"), "--cpus", "4")
        root = self.svg("o.svg")
        self.assertIsNone(by_id(root, "panel-nprocs"))
        self.assertIsNone(by_id(root, "series-nprocs"))
        y = float(by_id(root, "cpu-capacity").get("y1"))
        self.assertAlmostEqual(y, y_scale(panel(root, "cpu"))(400), delta=0.6)
        self.assertIn("4 CPUs (--cpus)", by_id(root, "cpu-capacity-label").text)

    def test_a_failed_write_names_its_errno(self):
        # /dev/full: ENOSPC.  A file-size limit: EFBIG in the middle of the
        # SVG, where stdio has long forgotten errno; never "out of memory".
        path = samples(self.path("s.csv"), [(100 + t / 10, t / 10, 50, 10 + t) for t in range(2000)])
        r = resmon("plot", path, "-o", "/dev/full")
        self.assertEqual(r.returncode, 125, r.stderr)
        self.assertIn("'/dev/full': No space left on device", r.stderr)
        self.write("o.svg", "old\n")

        def small_files():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))

        r = resmon("plot", path, "-o", self.path("o.svg"), preexec_fn=small_files)
        self.assertEqual(r.returncode, 125, r.stderr)
        self.assertIn(f"'{self.path('o.svg')}': File too large", r.stderr)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        with open(self.path("o.svg")) as f:
            self.assertEqual(f.read(), "old\n")
        self.assertEqual(sorted(os.listdir(self.dir.name)), ["o.svg", "s.csv"])
        r = resmon("-q", "-i", "0.01", "--plot", self.path("o.svg"), "--", WORKLOAD, "sleep", "0.3",
                   preexec_fn=small_files)
        self.assertEqual(r.returncode, 125, r.stderr)
        self.assertIn(f"cannot write plot file '{self.path('o.svg')}': File too large", r.stderr)

    def test_every_error_line_starts_with_resmon_plot(self):
        # Review: the usage errors said "resmon plot: ", but an output that
        # could not be written, a raster name and a PNG without rsvg-convert
        # said "resmon: " (the run's shared code), unlike compare and mark.
        path = samples(self.path("s.csv"), [(100 + t / 10, t / 10, 50, 10 + t) for t in range(20)])
        empty = self.path("bin")
        os.mkdir(empty)
        cases = [((path, "-o", "/dev/full"), {}), ((path, "-o", self.path("p.jpg")), {}),
                 ((path, "-o", self.path("p.png")), {"env": dict(os.environ, PATH=empty)}),
                 ((path, "-o", self.path("no/such/p.svg")), {}),
                 ((path, "-o", "-"), {"preexec_fn": lambda: os.close(1)}),
                 ((self.path("missing.csv"), "-o", self.path("p.svg")), {}), ((path, "-o", path), {}),
                 ((path, "--cpus", "0", "-o", self.path("p.svg")), {})]
        for args, kw in cases:
            with self.subTest(args=args):
                r = resmon("plot", *args, **kw)
                self.assertEqual(r.returncode, 125, r.stderr)
                self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                self.assertTrue(r.stderr.startswith("resmon plot: "), r.stderr)

    def test_png_output(self):
        require_real_converter(self)
        path = samples(self.path("a.csv"), [(1, 0, 0, 5), (1.1, 0.1, 40, 8)])
        self.run_ok("plot", path, "-o", self.path("o.png"))
        with open(self.path("o.png"), "rb") as f:
            self.assertEqual(f.read(8), PNG_MAGIC)

    def test_the_format_is_the_names_extension_in_any_case_and_a_bare_extension_counts(self):
        # One rule for every name resmon picks a format by: the name ends in
        # the extension, in any case; ".png" alone is a .png name (never SVG
        # bytes in it), a directory's ".png" is not the file's.
        require_real_converter(self)
        path = samples(self.path("a.csv"), [(1, 0, 0, 5), (1.1, 0.1, 40, 8)])
        os.mkdir(self.path("d.png"))
        for name, magic in ((".png", PNG_MAGIC), ("x.PNG", PNG_MAGIC), ("d.png/x", b"<?xml ve"),
                            ("x.svg", b"<?xml ve")):
            with self.subTest(name=name):
                self.run_ok("plot", path, "-o", name, cwd=self.dir.name)
                with open(self.path(name), "rb") as f:
                    self.assertEqual(f.read(8), magic)
        r = resmon("plot", path, "-o", ".jpg", cwd=self.dir.name)
        self.assertEqual(r.returncode, 125, r.stderr)
        self.assertIn("a chart is written as SVG, or as PNG for a .png name", r.stderr)
        # The samples file: .csv alone is CSV; .JSONL is JSON Lines, written and read back.
        for name, first in ((".csv", "timestamp,"), ("r.CSV", "timestamp,"), ("r.JSONL", "{")):
            with self.subTest(name=name):
                self.run_ok("-q", "-i", "0.01", "-s", name, "--", WORKLOAD, "sleep", "0.05", cwd=self.dir.name)
                with open(self.path(name)) as f:
                    self.assertTrue(f.read().startswith(first))
                self.run_ok("plot", name, "-o", "p.svg", cwd=self.dir.name)

    def test_bad_input_is_one_line_naming_the_file(self):
        good = samples(self.path("good.csv"), [(1, 0, 0, 5), (1.1, 0.1, 40, 8)])
        summary = self.write("summary.jsonl", json.dumps({"peak_rss_mb": 3, "num_samples": 2}) + "\n")
        cases = {
            "missing.csv": None,
            "empty.csv": "",
            "header-only.csv": "timestamp,elapsed_sec,cpu_percent,rss_mb\n",
            "no-rss.csv": "timestamp,elapsed_sec,cpu_percent\n1,0,0\n",
            "short-row.csv": "timestamp,elapsed_sec,cpu_percent,rss_mb\n1,0,0,5\n1.1,0.1,3\n",
            "word.csv": "timestamp,elapsed_sec,cpu_percent,rss_mb\n1,0,zero,5\n",
            "backwards.csv": "timestamp,elapsed_sec,cpu_percent,rss_mb\n1,0.2,0,5\n1.1,0.1,3,5\n",
            "open-quote.csv": 'timestamp,elapsed_sec,cpu_percent,rss_mb,phase\n1,0,0,5,"load\n',
            "csv-named.jsonl": "timestamp,elapsed_sec,cpu_percent,rss_mb\n1,0,0,5\n",
            "string.jsonl": '{"elapsed_sec": 0, "cpu_percent": "0", "rss_mb": 5}\n',
            "samples.txt": "timestamp,elapsed_sec,cpu_percent,rss_mb\n1,0,0,5\n",
            # review of issue 28: a 3 GB file without a newline took 3 GB of memory
            "one-long-line.csv": "timestamp,elapsed_sec,cpu_percent,rss_mb\n" + "1" * (2 << 20),
            "one-long-line.jsonl": "{" + " " * (2 << 20) + "}\n",
            "nul.csv": "timestamp,elapsed_sec,cpu_percent,rss_mb\n1,0,0,5\x00\n",
        }
        # Attack 57a: a sparse file of zeros (or a line of them) was read
        # to its end for the NUL's line, 31 s for 8 GB, then "empty file":
        # it is a line longer than 1 MiB, said after that MiB (read whole,
        # the 1 TiB here takes an hour: the safety net ends it).
        for name, head in (("sparse.csv", b""), ("sparse-header.csv", b"timestamp,elapsed_sec\0")):
            with open(self.path(name), "wb") as f:
                f.write(head)
                f.truncate(1 << 40)  # 1 TiB, no block of it on disk
            with self.subTest(name=name):
                r = resmon("plot", self.path(name), "-o", self.path("o.svg"), timeout=SAFETY_NET_SEC)
                self.assertEqual(r.returncode, 125, r.stderr)
                self.assertEqual(r.stderr, f"resmon plot: '{self.path(name)}': line 1 is longer than 1 MiB: "
                                           "not a samples file\n")
                self.assertFalse(os.path.exists(self.path("o.svg")))
        for name, text in cases.items():
            path = self.path(name) if text is None else self.write(name, text)
            for argv in ([path], [good, path]):
                with self.subTest(name=name, runs=len(argv)):
                    r = resmon("plot", *argv, "-o", self.path("o.svg"))
                    self.assertEqual(r.returncode, 125, r.stderr)
                    self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                    self.assertIn(f"'{path}'", r.stderr)
                    self.assertFalse(os.path.exists(self.path("o.svg")))
        r = resmon("plot", summary, "-o", self.path("o.svg"))
        self.assertEqual(r.returncode, 125)
        self.assertIn("line 1 has no elapsed_sec", r.stderr)

    def test_an_output_that_is_a_run_is_refused_before_anything_is_written(self):
        # issue 28: `resmon plot run.csv -o run.csv` replaced the samples with SVG.
        run = samples(self.path("run.csv"), [(1, 0, 0, 5), (1.1, 0.1, 40, 8)])
        with open(run) as f:
            before = f.read()
        os.symlink(run, self.path("link.svg"))
        os.link(run, self.path("hard.svg"))
        other = samples(self.path("other.csv"), [(1, 0, 0, 5), (1.1, 0.1, 40, 8)])
        for argv in ([run, "-o", run], [run, "-o", os.path.join(self.dir.name, ".", "run.csv")],
                     [run, "-o", self.path("link.svg")], [run, "-o", self.path("hard.svg")],
                     [other, run, "-o", run]):
            with self.subTest(argv=argv):
                r = resmon("plot", *argv)
                self.assertEqual(r.returncode, 125, r.stderr)
                self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                self.assertIn("name the same file", r.stderr)
                with open(run) as f:
                    self.assertEqual(f.read(), before)
        self.assertTrue(os.path.islink(self.path("link.svg")))
        self.run_ok("plot", run, run, "-o", self.path("o.svg"))  # one run twice: two inputs may be one file

    def test_a_fifo_or_device_as_a_run_is_refused_not_waited_on(self):
        # A FIFO would block open() for ever; a device reads for ever or not at all.
        os.mkfifo(self.path("fifo.csv"))
        os.symlink("/dev/zero", self.path("zero.csv"))
        for name, kind in (("fifo.csv", "a FIFO"), ("zero.csv", "a character device")):
            with self.subTest(name=name):
                r = resmon("plot", self.path(name), "-o", self.path("o.svg"), timeout=SAFETY_NET_SEC)
                self.assertEqual(r.returncode, 125, r.stderr)
                self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                self.assertIn(f"'{self.path(name)}': {kind}, not a regular file", r.stderr)
                self.assertFalse(os.path.exists(self.path("o.svg")))

    def test_another_users_link_to_a_run_in_a_sticky_directory_is_not_read(self):
        # Stop 55's second attack: inputs were opened by name, so nobody's
        # link in /tmp to a root-only run had root's plot draw its phases
        # into a chart nobody could read.  Inputs keep the kernel's
        # protected_symlinks rule, as outputs do; compare reads the same way.
        if os.geteuid() != 0:
            self.skipTest("needs root, to give the link to a second user (nobody)")
        secret = samples(self.path("secret.csv"), [(1, 0, 0, 5), (1.1, 0.1, 40, 8)])
        os.chmod(secret, 0o600)
        sticky = sticky_with_links(self.path("sticky"), {"run.csv": secret})
        r = resmon("plot", os.path.join(sticky, "run.csv"), "-o", self.path("o.svg"), timeout=SAFETY_NET_SEC)
        self.assertEqual(r.returncode, 125, r.stderr)
        self.assertIn("another user's symbolic link in a sticky directory", r.stderr)
        self.assertFalse(os.path.exists(self.path("o.svg")))
        os.lchown(os.path.join(sticky, "run.csv"), 0, 0)  # root's own link: read
        self.run_ok("plot", os.path.join(sticky, "run.csv"), "-o", self.path("o.svg"))

    def test_usage_errors(self):
        good = samples(self.path("good.csv"), [(1, 0, 0, 5)])
        for argv in (["plot"], ["plot", good], ["plot", good, "-o", self.path("o.svg"), "-l", "a", "-l", "b"],
                     ["plot", good, "-o", self.path("o.svg"), "--cpus", "0"],
                     ["plot", good, "-o", self.path("o.gif")],
                     ["plot", good, "-o", self.path("o.svg"), "--bogus"]):
            with self.subTest(argv=argv):
                r = resmon(*argv)
                self.assertEqual(r.returncode, 125, r.stderr)
                self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        # A short option inside a group names itself, not the word before it ('plot').
        r = resmon("plot", "-xh", good, "-o", self.path("o.svg"))
        self.assertEqual(r.returncode, 125, r.stderr)
        self.assertIn("unknown option '-x'", r.stderr)
        r = self.run_ok("plot", "--help")
        self.assertIn("usage: resmon plot", r.stdout)
        self.assertEqual(resmon("plot", "-h").stdout, r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
