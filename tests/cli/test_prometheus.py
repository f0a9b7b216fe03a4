#!/usr/bin/env python3
"""Prometheus export of the resmon command, against the real servers.

Debian's `prometheus` (with `promtool`) and `prometheus-pushgateway` are
started here on 127.0.0.1, on free ports, with temporary configuration and
storage, and stopped at the end; no other address is contacted.  Each test
runs its command under its own `run` label, so series of different tests
never mix.  The monitored command waits on its stdin, so a test decides when
it ends (a pipe, not a sleep).

Environment: RESMON (the command), WORKLOAD (tests/cli/workload.c),
FAKE_NVML_LIB (tests/fake_nvml.c).
"""
import http.client
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import re
import threading
import time
import unittest
import urllib.parse
import urllib.request
import uuid

# tests/cli/helpers.py: the signal dispositions, the environment, the time factor.
from helpers import (NOBODY, RESMON, SAFETY_NET_SEC, SANITIZED, TIME_FACTOR, WORKLOAD, program_for, reachable_dir,
                     require_strace)

FAKE_NVML_LIB = os.environ.get("FAKE_NVML_LIB")  # tests/fake_nvml.c, loaded as NVML
HAVE_SERVERS = all(shutil.which(p) for p in ("prometheus", "promtool", "prometheus-pushgateway"))
SKIP_REASON = "Debian packages prometheus and prometheus-pushgateway are not installed (scripts/deps installs them)"
DEADLINE = 60.0  # seconds for a server to come up or a scrape to arrive

# A command that holds 64 MiB, burns 0.4 s of CPU, says "ready" and waits
# for its stdin to close: everything measured happens before "ready".
HOLD_AND_WAIT = (
    "import sys, time\n"
    "block = bytearray(b'\\x01') * (64 << 20)\n"
    "t = time.process_time()\n"
    "while time.process_time() - t < 0.4: pass\n"
    "print('ready', flush=True)\n"
    "sys.stdin.read()\n"
)
WAIT_ONLY = "import sys\nprint('ready', flush=True)\nsys.stdin.read()\n"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, headers=None, method="GET", timeout=10 * TIME_FACTOR):
    req = urllib.request.Request(url, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def wait_until(what, predicate, deadline=DEADLINE):
    """Polls an external server (which we cannot synchronise with otherwise)."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {deadline} s waiting for {what}")


def promtool_check(text):
    r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True,
                       timeout=SAFETY_NET_SEC)
    return r.returncode, r.stdout + r.stderr


class Servers:
    """prometheus and prometheus-pushgateway for the whole module."""

    def __init__(self):
        self.dir = tempfile.TemporaryDirectory(prefix="resmon-prom-")
        self.resmon_port = free_port()  # the address Prometheus scrapes resmon at
        self.gateway_port = free_port()
        self.prometheus_port = free_port()
        config = os.path.join(self.dir.name, "prometheus.yml")
        with open(config, "w") as f:
            f.write(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                "scrape_configs:\n"
                f"  - job_name: resmon\n    static_configs:\n      - targets: ['127.0.0.1:{self.resmon_port}']\n"
                "  - job_name: pushgateway\n    honor_labels: true\n"
                f"    static_configs:\n      - targets: ['127.0.0.1:{self.gateway_port}']\n"
            )
        self.logs = open(os.path.join(self.dir.name, "servers.log"), "w")
        # A persistence file of this run's own: Debian's default
        # (/var/lib/prometheus/pushgateway.data) would bring back what earlier
        # runs, or anyone else, pushed.
        self.gateway_persistence = os.path.join(self.dir.name, "pushgateway.data")
        self.gateway = subprocess.Popen(
            ["prometheus-pushgateway", f"--web.listen-address=127.0.0.1:{self.gateway_port}",
             f"--persistence.file={self.gateway_persistence}"],
            stdout=self.logs, stderr=subprocess.STDOUT)
        self.prometheus = subprocess.Popen(
            ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={self.dir.name}/data",
             f"--web.listen-address=127.0.0.1:{self.prometheus_port}"],
            stdout=self.logs, stderr=subprocess.STDOUT)
        wait_until("the Pushgateway", lambda: self.ready(f"http://127.0.0.1:{self.gateway_port}/-/ready"))
        wait_until("Prometheus", lambda: self.ready(f"http://127.0.0.1:{self.prometheus_port}/-/ready"))

    @staticmethod
    def ready(url):
        try:
            return http_get(url, timeout=2)[0] == 200
        except OSError:
            return False

    def query(self, promql):
        """The instant vector of promql as {labels-tuple: float}."""
        url = f"http://127.0.0.1:{self.prometheus_port}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        status, _, body = http_get(url)
        reply = json.loads(body)
        if status != 200 or reply["status"] != "success":
            raise AssertionError(f"query {promql}: {status} {body[:300]!r}")
        return [(r["metric"], float(r["value"][1])) for r in reply["data"]["result"]]

    def stop(self):
        for p in (self.prometheus, self.gateway):
            p.terminate()
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.logs.close()
        self.dir.cleanup()


servers = None


def setUpModule():
    global servers
    if HAVE_SERVERS:
        servers = Servers()


def tearDownModule():
    if servers:
        servers.stop()


class Run:
    """resmon around a Python command that says "ready" and waits for stdin."""

    def __init__(self, tmpdir, resmon_args, script=WAIT_ONLY, env=None, tracer=()):
        """tracer: a command resmon runs under (strace ...); self.pid is
        resmon's own pid all the same."""
        self.summary_path = os.path.join(tmpdir, f"s-{uuid.uuid4().hex}.json")
        self.proc = subprocess.Popen(
            [*tracer, RESMON, "-q", "-o", self.summary_path, *resmon_args, "--", sys.executable, "-c", script],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        line = self.proc.stdout.readline()  # the command runs: resmon's endpoint is up
        if line != "ready\n":
            self.proc.kill()
            raise AssertionError(f"command did not start: {line!r} {self.proc.stderr.read()}")
        self.pid = self.proc.pid
        if tracer:  # the tracer's only child
            with open(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children") as f:
                self.pid = int(f.read().split()[0])

    def finish(self, timeout=SAFETY_NET_SEC):
        self.proc.stdin.close()
        rc = self.proc.wait(timeout=timeout)
        self.stderr = self.proc.stderr.read()
        self.proc.stdout.close()
        self.proc.stderr.close()
        with open(self.summary_path) as f:
            self.summary = json.load(f)
        return rc

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if not pipe.closed:
                pipe.close()


class Tmp(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="resmon-prom-test-")
        self.addCleanup(self.dir.cleanup)
        self.run_id = uuid.uuid4().hex[:12]

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def start(self, *args, script=WAIT_ONLY, env=None, tracer=()):
        run = Run(self.dir.name, args, script, env, tracer)
        self.addCleanup(run.kill)
        return run


@unittest.skipUnless(HAVE_SERVERS, SKIP_REASON)
class Scrape(Tmp):
    def test_prometheus_records_cpu_seconds_and_peak_rss(self):
        port = servers.resmon_port
        run = self.start("-i", "0.02", "--serve", f"127.0.0.1:{port}", "--label", f"run={self.run_id}",
                         script=HOLD_AND_WAIT)
        ready_at = time.time()
        selector = f'{{job="resmon",run="{self.run_id}"}}'
        # A scrape that started after "ready" holds the workload's totals.
        wait_until("a scrape after the workload",
                   lambda: any(v > ready_at for _, v in servers.query(f"timestamp(resmon_cpu_seconds_total{selector})")))
        [(labels, cpu)] = servers.query(f"resmon_cpu_seconds_total{selector}")
        [(_, peak)] = servers.query(f"resmon_resident_memory_max_bytes{selector}")
        [(_, samples)] = servers.query(f"resmon_samples_total{selector}")
        self.assertEqual(labels["command"], os.path.basename(sys.executable))
        # Prometheus asks for OpenMetrics first, so this is resmon's
        # OpenMetrics that it parsed without complaint.
        targets = json.loads(http_get(f"http://127.0.0.1:{servers.prometheus_port}/api/v1/targets")[2])
        [target] = [t for t in targets["data"]["activeTargets"] if t["labels"]["job"] == "resmon"]
        self.assertEqual((target["health"], target["lastError"]), ("up", ""))
        self.assertEqual(run.finish(), 0)
        s = run.summary
        # CPU: the kernel's own accounting (wait4) of the whole run; the
        # command did nothing after "ready" but wait.
        self.assertGreaterEqual(cpu, 0.35)
        self.assertAlmostEqual(cpu, s["cpu_sec"], delta=0.05 + 0.05 * s["cpu_sec"])
        # Peak RSS: the sampled peak of the same monitor, and the kernel's
        # exact peak bounds it.
        self.assertGreaterEqual(peak, 64 * 1048576)
        self.assertAlmostEqual(peak, s["peak_rss_mb"] * 1048576, delta=1048576)
        self.assertLessEqual(peak, s["exact_peak_rss_mb"] * 1048576 * 1.02)
        self.assertLessEqual(samples, s["num_samples"])

    def test_pushgateway_receives_the_run_and_prometheus_sees_the_job(self):
        gateway = f"http://127.0.0.1:{servers.gateway_port}"
        job = f"resmon-test-{self.run_id}"
        r = subprocess.run([RESMON, "-q", "-o", self.path("s.json"), "--push", gateway, "--push-job", job,
                            "--label", f"run={self.run_id}", "--label", "path=/a/b", "--", WORKLOAD, "exit", "3"],
                           capture_output=True, text=True, timeout=SAFETY_NET_SEC)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertEqual(r.stderr, "")
        with open(self.path("s.json")) as f:
            s = json.load(f)
        _, _, body = http_get(gateway + "/metrics")
        lines = [l for l in body.decode().splitlines()
                 if l.startswith("resmon_samples_total{") and f'run="{self.run_id}"' in l]
        self.assertEqual(len(lines), 1, body.decode()[:2000])
        self.assertIn(f'job="{job}"', lines[0])
        self.assertIn('path="/a/b"', lines[0])  # a grouping value with slashes
        self.assertIn(f'command="{os.path.basename(WORKLOAD)}"', lines[0])
        self.assertEqual(float(lines[0].rsplit(" ", 1)[1]), s["num_samples"])
        # Prometheus scraping the gateway with honor_labels keeps the job.
        found = wait_until("the pushed job in Prometheus",
                           lambda: servers.query(f'resmon_samples_total{{job="{job}",run="{self.run_id}"}}'))
        self.assertEqual(found[0][1], s["num_samples"])

    def test_periodic_pushes_while_the_command_runs(self):
        gateway = f"http://127.0.0.1:{servers.gateway_port}"
        job = f"resmon-periodic-{self.run_id}"
        run = self.start("--push", gateway, "--push-job", job, "--push-interval", "0.2")
        url = f"{gateway}/metrics"

        def pushed():
            body = http_get(url)[2].decode()
            return [l for l in body.splitlines() if l.startswith("resmon_samples_total{") and f'job="{job}"' in l]

        wait_until("a push before the end", pushed)
        self.assertEqual(run.finish(), 0)
        self.assertEqual(float(pushed()[0].rsplit(" ", 1)[1]), run.summary["num_samples"])  # the final push


@unittest.skipUnless(HAVE_SERVERS, SKIP_REASON)
class Endpoint(Tmp):
    def serve(self, *extra, env=None):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/metrics"
        return self.start("--serve", f"127.0.0.1:{self.port}", *extra, env=env)

    def test_text_format_by_default_and_promtool_accepts_it(self):
        run = self.serve("--label", 'note=say "hi"\\now\nnext line')
        status, headers, body = http_get(self.url)
        self.assertEqual(status, 200)
        self.assertEqual(headers["Content-Type"], "text/plain; version=0.0.4; charset=utf-8")
        text = body.decode()
        self.assertIn('note="say \\"hi\\"\\\\now\\nnext line"', text)
        self.assertIn("# TYPE resmon_cpu_seconds_total counter", text)
        rc, out = promtool_check(text)
        self.assertEqual((rc, out), (0, ""))
        self.assertEqual(run.finish(), 0)

    def test_openmetrics_when_asked(self):
        run = self.serve()
        accept = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"
        status, headers, body = http_get(self.url, {"Accept": accept})
        self.assertEqual(status, 200)
        self.assertTrue(headers["Content-Type"].startswith("application/openmetrics-text; version=1.0.0"))
        text = body.decode()
        self.assertTrue(text.endswith("\n# EOF\n"), text[-200:])
        self.assertIn("# UNIT resmon_resident_memory_bytes bytes", text)
        self.assertEqual(run.finish(), 0)

    def test_head_other_paths_and_methods(self):
        run = self.serve()
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10 * TIME_FACTOR)
        conn.request("HEAD", "/metrics")
        r = conn.getresponse()
        self.assertEqual(r.status, 200)
        self.assertGreater(int(r.getheader("Content-Length")), 100)
        self.assertEqual(r.read(), b"")
        conn.close()
        self.assertEqual(http_get(f"http://127.0.0.1:{self.port}/")[0], 404)
        self.assertEqual(http_get(f"http://127.0.0.1:{self.port}/metrics/x")[0], 404)
        status, headers, _ = http_get(self.url, method="POST")
        self.assertEqual(status, 405)
        self.assertEqual(run.finish(), 0)

    def test_linger_serves_the_final_values(self):
        run = self.serve("--serve-linger", "30")
        run.proc.stdin.close()  # the command ends; resmon lingers
        wait_until("the summary file", lambda: os.path.exists(run.summary_path) and os.path.getsize(run.summary_path))
        with open(run.summary_path) as f:
            s = json.load(f)
        text = http_get(self.url)[2].decode()
        self.assertIn(f'resmon_samples_total{{command="{os.path.basename(sys.executable)}"}} {s["num_samples"]}\n',
                      text)
        # the exact peak from wait4, known only after the end
        exact = [l for l in text.splitlines() if l.startswith("resmon_resident_memory_exact_max_bytes{")]
        self.assertEqual(float(exact[0].rsplit(" ", 1)[1]), s["exact_peak_rss_mb"] * 1048576)
        # the metric groups the command collects by default, in base units
        def series(name):
            [line] = [l for l in text.splitlines() if l.startswith(name + "{")]
            return float(line.rsplit(" ", 1)[1])
        self.assertEqual(series("resmon_io_write_bytes_total"), s["io_wchar"])
        self.assertEqual(series("resmon_processes_max"), s["peak_nprocs"])
        self.assertAlmostEqual(series("resmon_cpu_user_seconds_total"), s["cpu_user_sec"], places=9)
        self.assertAlmostEqual(series("resmon_proportional_memory_max_bytes"), s["peak_pss_mb"] * 1048576, places=3)
        run.proc.send_signal(signal.SIGINT)  # cuts the linger short
        self.assertEqual(run.proc.wait(timeout=SAFETY_NET_SEC), 0)

    def test_port_in_use_is_125_before_the_command_starts(self):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            marker = self.path("started")
            r = subprocess.run([RESMON, "--serve", f"127.0.0.1:{port}", "--", "touch", marker],
                               capture_output=True, text=True, timeout=SAFETY_NET_SEC)
        self.assertEqual(r.returncode, 125, r.stderr)
        self.assertEqual(r.stderr.count("\n"), 1)
        self.assertIn("Address already in use", r.stderr)
        self.assertFalse(os.path.exists(marker))

    def test_hostile_clients_cost_bounded_memory_and_no_samples(self):
        # ASan holds freed memory in quarantine (256 MiB by default), which
        # would count every freed response; a small one keeps RSS meaningful.
        env = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=1")
        run = self.serve("-i", "0.01", env=env)
        pid = run.proc.pid
        http_get(self.url)  # warm: the first response's allocations

        def rss_kib():
            with open(f"/proc/{pid}/status") as f:
                return int(next(l for l in f if l.startswith("VmRSS:")).split()[1])

        before = rss_kib()
        silent = socket.create_connection(("127.0.0.1", self.port))  # connects and says nothing
        self.addCleanup(silent.close)
        # a 1 MB request line is refused without being buffered
        huge = socket.create_connection(("127.0.0.1", self.port), timeout=10 * TIME_FACTOR)
        try:
            huge.sendall(b"GET /" + b"a" * (1 << 20) + b" HTTP/1.1\r\nHost: x\r\n\r\n")
            reply = huge.recv(100)
        except (ConnectionResetError, BrokenPipeError):
            reply = b""
        huge.close()
        self.assertFalse(reply.startswith(b"HTTP/1.1 200"), reply)
        status_line = reply.split(b"\r\n")[0]
        print(f"\n  1 MB request line answered: {status_line!r}", file=sys.stderr)
        # many concurrent scrapers
        failures = []

        def scraper():
            for _ in range(60):
                try:
                    if http_get(self.url)[0] != 200:
                        failures.append("status")
                except OSError as e:
                    failures.append(str(e))

        threads = [threading.Thread(target=scraper) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=SAFETY_NET_SEC)
        self.assertEqual(failures, [])
        self.assertEqual(http_get(self.url)[0], 200)  # the silent client blocks nobody
        grown_mib = (rss_kib() - before) / 1024
        self.assertLess(grown_mib, 8 * (5 if SANITIZED else 1), "resmon's RSS grew under scrapers")
        self.assertEqual(run.finish(), 0)
        s = run.summary
        slots = s["num_samples"] + s["skipped_slots"]
        print(f"\n  hostile clients: RSS grew {grown_mib:.2f} MiB; {s['num_samples']} samples, "
              f"{s['skipped_slots']} skipped slots over {s['wall_sec']:.2f} s at 0.01 s", file=sys.stderr)
        # The schedule accounts for every slot.  How many the sampler kept
        # (printed above) depends on whatever else the machine runs, however
        # long after the factor was chosen that load arrives (35 % skipped
        # seen at load 19): a figure, not a tight bound.  A sampler that the
        # clients held up would skip nearly all; the bound is there.
        self.assertGreaterEqual(slots, s["wall_sec"] / 0.01 * 0.9)
        self.assertLessEqual(s["skipped_slots"], slots * 0.9)


class Options(Tmp):
    def test_invalid_labels_are_125(self):
        for label in ("1x=a", "__x=a", "a-b=c", "noequals", "command=x", "job=x"):
            marker = self.path("started")
            r = subprocess.run([RESMON, "--label", label, "--textfile", self.path("m.prom"), "--", "touch", marker],
                               capture_output=True, text=True, timeout=SAFETY_NET_SEC)
            self.assertEqual(r.returncode, 125, (label, r.stderr))
            self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
            self.assertFalse(os.path.exists(marker))
        r = subprocess.run([RESMON, "--label", "a=1", "--label", "a=2", "--", "true"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 125)

    def test_serve_needs_an_explicit_host(self):
        for address in (":9464", "9464", "127.0.0.1:", "127.0.0.1:notaport"):
            r = subprocess.run([RESMON, "--serve", address, "--", "true"], capture_output=True, text=True,
                               timeout=SAFETY_NET_SEC)
            self.assertEqual(r.returncode, 125, (address, r.stderr))
            self.assertEqual(r.stderr.count("\n"), 1, r.stderr)

    def test_with_pid_the_command_label_is_the_process_name(self):
        target = subprocess.Popen([WORKLOAD, "trap-term", "0"])
        self.addCleanup(target.wait)
        self.addCleanup(target.terminate)
        prom = self.path("pid.prom")
        r = subprocess.run([RESMON, "-q", "--pid", str(target.pid), "--duration", "0.3", "--textfile", prom],
                           capture_output=True, text=True, timeout=SAFETY_NET_SEC)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(prom) as f:
            text = f.read()
        comm = os.path.basename(WORKLOAD)[:15]  # the kernel keeps 15 bytes of the name
        self.assertIn(f'resmon_samples_total{{command="{comm}"}} ', text)

    def test_help_documents_the_options(self):
        r = subprocess.run([RESMON, "--help"], capture_output=True, text=True, timeout=SAFETY_NET_SEC)
        for option in ("--serve HOST:PORT", "--serve-linger", "--push URL", "--push-interval", "--push-timeout",
                       "--textfile PATH", "--label KEY=VALUE", "No authentication"):
            self.assertIn(option, r.stdout)

    def test_a_dead_pushgateway_does_not_change_the_status(self):
        r = subprocess.run([RESMON, "-q", "--push", f"http://127.0.0.1:{free_port()}", "--", WORKLOAD, "exit", "3"],
                           capture_output=True, text=True, timeout=SAFETY_NET_SEC)
        self.assertEqual(r.returncode, 3)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.assertIn("push to http://127.0.0.1:", r.stderr)
        self.assertIn("failed", r.stderr)

    def test_a_silent_pushgateway_is_given_up_after_the_timeout(self):
        with socket.socket() as silent:  # the kernel accepts; nobody answers
            silent.bind(("127.0.0.1", 0))
            silent.listen()
            started = time.monotonic()
            r = subprocess.run([RESMON, "-q", "--push", f"http://127.0.0.1:{silent.getsockname()[1]}",
                                "--push-timeout", "1", "--", WORKLOAD, "exit", "0"],
                               capture_output=True, text=True, timeout=SAFETY_NET_SEC)
            took = time.monotonic() - started
        self.assertEqual(r.returncode, 0)
        self.assertIn("timeout", r.stderr.lower())
        # Given up, not left to the 60 s safety net: bounded by half of that,
        # which no load seen so far comes near (a time factor chosen before
        # the load arrived cannot say).
        self.assertLess(took, 30)

    @unittest.skipUnless(HAVE_SERVERS, SKIP_REASON)
    def test_textfile_is_replaced_atomically_and_holds_the_final_values(self):
        prom = self.path("resmon.prom")
        run = self.start("-i", "0.05", "--textfile", prom, "--label", f"run={self.run_id}")
        wait_until("the first textfile", lambda: os.path.exists(prom))
        with open(prom) as f:
            rc, out = promtool_check(f.read())
        self.assertEqual((rc, out), (0, ""))
        self.assertEqual(os.stat(prom).st_mode & 0o777, 0o644)
        self.assertEqual(run.finish(), 0)
        with open(prom) as f:
            text = f.read()
        self.assertIn(f'resmon_samples_total{{command="{os.path.basename(sys.executable)}",run="{self.run_id}"}} '
                      f'{run.summary["num_samples"]}\n', text)
        self.assertEqual(os.listdir(self.dir.name).count("resmon.prom"), 1)
        self.assertEqual([n for n in os.listdir(self.dir.name) if n.endswith(".tmp")], [])

    @unittest.skipUnless(HAVE_SERVERS and FAKE_NVML_LIB, SKIP_REASON + " or FAKE_NVML_LIB is not set")
    def test_gpu_series_in_base_units(self):
        sysfs = self.path("sysfs")  # no AMD or Intel cards
        os.makedirs(sysfs)
        env = dict(os.environ, RESMON_NVML_LIBRARY=FAKE_NVML_LIB, FAKE_NVML="devices=1", RESMON_SYSFS_ROOT=sysfs)
        prom = self.path("gpu.prom")
        r = subprocess.run([RESMON, "-q", "-i", "0.02", "--gpu", "nvml:0", "--textfile", prom, "-o", self.path("s.json"),
                            "--", WORKLOAD, "sleep", "0.3"], capture_output=True, text=True, timeout=SAFETY_NET_SEC,
                           env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.path("s.json")) as f:
            s = json.load(f)
        with open(prom) as f:
            text = f.read()
        self.assertEqual(promtool_check(text), (0, ""))
        values = {l.split("{")[0]: float(l.rsplit(" ", 1)[1]) for l in text.splitlines() if not l.startswith("#")}
        self.assertEqual(values["resmon_gpu_utilization_ratio"], s["mean_gpu_util"] / 100)  # the fake is constant
        self.assertEqual(values["resmon_gpu_memory_used_max_bytes"], s["peak_gpu_mem_mb"] * 1048576)
        self.assertEqual(values["resmon_gpu_power_watts"], s["mean_gpu_power_w"])
        self.assertEqual(values["resmon_gpu_clock_hertz"], s["mean_gpu_clock_mhz"] * 1e6)
        self.assertEqual(values["resmon_gpu_energy_joules_total"], s["gpu_energy_j"])

    def test_unwritable_textfile_is_125(self):
        r = subprocess.run([RESMON, "--textfile", "/nonexistent-dir/x.prom", "--", "true"],
                           capture_output=True, text=True, timeout=SAFETY_NET_SEC)
        self.assertEqual(r.returncode, 125)
        self.assertIn("No such file or directory", r.stderr)


def resmon_run(*args, **kwargs):
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("timeout", 60)
    return subprocess.run([RESMON, *args], **kwargs)


def as_nobody_if_root(test):
    """Root may write any file: check the read-only refusal as nobody, with
    a resmon nobody can run (program_for: a copy where the build tree is
    closed to it), in a test directory (test.dir) nobody may write
    (reachable_dir: elsewhere where TMPDIR is closed to it).  Call it before
    the test makes its files.  Returns the program and subprocess's
    arguments."""
    if os.getuid() != 0:
        return RESMON, {}
    program = program_for(test, NOBODY, RESMON)
    test.dir = reachable_dir(test, NOBODY, 0o777, "resmon-prom-")
    return program, {"preexec_fn": lambda: os.setuid(NOBODY)}


class TextfileIsAnOutputFile(Tmp):
    """--textfile keeps the file guarantees of every other output (README,
    "Your files"), and refuses what a textfile collector cannot read."""

    def test_a_symbolic_link_is_followed_and_kept(self):
        target, link = self.path("target.prom"), self.path("link.prom")
        with open(target, "w") as f:
            f.write("old\n")
        os.symlink("target.prom", link)
        r = resmon_run("-q", "--textfile", link, "--", "true", text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.islink(link))
        with open(target) as f:
            self.assertIn("resmon_samples_total{", f.read())
        self.assertEqual(sorted(os.listdir(self.dir.name)), ["link.prom", "target.prom"])

    def test_a_dangling_symbolic_link_gets_its_target_made_and_is_kept(self):
        # Review: holding the textfile's place at the start refused a
        # dangling link ("Invalid argument", 125, the command never ran)
        # and left its target created empty.
        os.mkdir(self.path("d"))
        link = self.path("link.prom")
        os.symlink(os.path.join("d", "target.prom"), link)
        r = resmon_run("-q", "--textfile", link, "--", "true", text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.islink(link))
        with open(self.path("d/target.prom")) as f:
            self.assertIn("resmon_samples_total{", f.read())
        self.assertEqual(os.listdir(self.path("d")), ["target.prom"])

    def test_a_read_only_file_is_refused_and_kept(self):
        program, as_user = as_nobody_if_root(self)
        prom = self.path("ro.prom")
        with open(prom, "w") as f:
            f.write("old\n")
        os.chmod(prom, 0o444)
        marker = self.path("started")
        r = subprocess.run([program, "-q", "--textfile", prom, "--", "touch", marker], capture_output=True,
                           text=True, timeout=SAFETY_NET_SEC, **as_user)
        self.assertEqual(r.returncode, 125, r.stderr)
        self.assertIn("Permission denied", r.stderr)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.assertFalse(os.path.exists(marker))
        with open(prom) as f:
            self.assertEqual(f.read(), "old\n")

    def test_devices_fifos_and_directories_are_refused_and_left_alone(self):
        fifo = self.path("fifo.prom")
        os.mkfifo(fifo)
        stdout_was_link = os.path.islink("/dev/stdout")
        for path in ("/dev/null", "/dev/stdout", fifo, self.dir.name, "-"):
            marker = self.path("started")
            r = resmon_run("-q", "--textfile", path, "--", "touch", marker, text=True, timeout=SAFETY_NET_SEC)
            self.assertEqual(r.returncode, 125, (path, r.stderr))
            self.assertIn("not a regular file", r.stderr)
            self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
            self.assertFalse(os.path.exists(marker), path)
        self.assertTrue(stat.S_ISCHR(os.stat("/dev/null").st_mode))
        self.assertEqual(os.path.islink("/dev/stdout"), stdout_was_link)
        self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))

    def run_while(self, prom, during, umask=None):
        """Runs resmon --textfile prom around a command that waits (under
        umask, when given); once the first textfile is there, calls
        during() and lets the command end.  Returns (returncode, stderr)."""
        p = subprocess.Popen([RESMON, "-q", "-i", "0.05", "--textfile", prom, "--", "sh", "-c", "echo $$; read x"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=None if umask is None else lambda: os.umask(umask))
        try:
            p.stdout.readline()  # the command runs
            wait_until("the first textfile", lambda: os.path.exists(prom))
            during()
            p.stdin.write("\n")
            p.stdin.close()
            err = p.stderr.read()
            p.wait(timeout=SAFETY_NET_SEC)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            for pipe in (p.stdin, p.stdout, p.stderr):
                if not pipe.closed:
                    pipe.close()
        return p.returncode, err

    def test_the_textfile_stays_where_it_was_opened_while_another_user_swaps_the_path(self):
        # Issue 28, sixth review: each write resolved the path again by name,
        # once a second for the whole run.  Another user who could write the
        # textfile's directory (node_exporter's, often another user's) put a
        # link to root's file at the entry, or swapped a directory on the
        # path for a link to theirs: root's 0640 file got the metrics.  Each
        # write now goes to the directory held from the start and its
        # entry; a link put there is refused, never followed.
        if os.getuid() != 0:
            self.skipTest("needs root and another user to swap the path")
        self.dir = reachable_dir(self, NOBODY, 0o777, "resmon-prom-")  # nobody's to write: it swaps there
        victim = self.path("victim")
        with open(victim, "w") as f:
            f.write("secret\n")
        os.chmod(victim, 0o640)
        as_nobody = {"preexec_fn": lambda: os.setuid(NOBODY), "capture_output": True, "text": True,
                     "timeout": SAFETY_NET_SEC}
        # A link put at the entry, in a directory of the other user's.
        theirs = self.path("theirs")
        os.mkdir(theirs)
        os.chown(theirs, NOBODY, -1)
        prom = os.path.join(theirs, "m.prom")

        def plant():
            # Renamed over the entry: at no instant is there no entry for a
            # write of resmon's to create.
            r = subprocess.run(["/bin/sh", "-c", 'ln -s "$2" "$1.new" && mv -T "$1.new" "$1"', "plant", prom, victim],
                               **as_nobody)
            self.assertEqual(r.returncode, 0, r.stderr)
        rc, err = self.run_while(prom, plant)
        self.assertEqual(rc, 125, err)
        self.assertIn("a symbolic link was put in its place while resmon ran; not followed", err)
        self.assertEqual(err.count("\n"), 1, err)
        # A directory on the path swapped for a link to the other user's
        # directory, where a link to the victim waits.
        race, evil = self.path("race"), self.path("evil")
        os.mkdir(race)
        os.mkdir(evil)
        os.chown(evil, NOBODY, -1)
        os.symlink(victim, os.path.join(evil, "m.prom"))

        def swap():
            r = subprocess.run(["/bin/sh", "-c", 'mv "$1" "$1.old" && ln -s "$2" "$1"', "swap", race, evil],
                               **as_nobody)
            self.assertEqual(r.returncode, 0, r.stderr)
        rc, err = self.run_while(os.path.join(race, "m.prom"), swap)  # the parent is 0777: theirs to write
        self.assertEqual(rc, 0, err)
        with open(os.path.join(race + ".old", "m.prom")) as f:
            self.assertIn("resmon_samples_total{", f.read())  # the last write is where it was opened
        with open(victim) as f:
            self.assertEqual(f.read(), "secret\n")
        st = os.stat(victim)
        self.assertEqual((st.st_uid, stat.S_IMODE(st.st_mode)), (0, 0o640))

    def test_a_file_another_user_made_at_the_textfile_name_does_not_make_it_theirs(self):
        # Stop 55's attack: each write copied the owner and mode of whatever
        # file was at the name then: nobody's 0666 file, made there after
        # the start (before the first write, in a directory they can write),
        # made root's textfile nobody's for the rest of the run.  The owner
        # and mode kept are those of the file there at the start (none here:
        # root's, 0666 minus the umask).
        if os.getuid() != 0:
            self.skipTest("needs root and another user to make the file")
        os.chmod(self.dir.name, 0o1777)
        prom = self.path("m.prom")

        def plant():
            os.unlink(prom)  # as if root's first write had not come yet
            fd = os.open(prom, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            os.fchmod(fd, 0o666)
            os.fchown(fd, NOBODY, NOBODY)
            os.close(fd)
        rc, err = self.run_while(prom, plant)
        self.assertEqual(rc, 0, err)
        umask = os.umask(0)
        os.umask(umask)
        st = os.stat(prom)
        self.assertEqual((st.st_uid, stat.S_IMODE(st.st_mode)), (0, 0o666 & ~umask))
        with open(prom) as f:
            self.assertIn("resmon_samples_total{", f.read())

    def test_a_textfile_made_read_only_while_resmon_runs_is_125(self):
        # Sixth review: a write that failed after the start was one line on
        # stderr and the status stayed 0, the last write (the one with the
        # exit status) included.  It is an output not written: 125.
        prom = self.path("t.prom")
        rc, err = self.run_while(prom, lambda: os.chmod(prom, 0o444))
        self.assertEqual(rc, 125, err)
        self.assertIn("made read-only while resmon ran", err)
        self.assertEqual(err.count("\n"), 1, err)
        self.assertEqual(stat.S_IMODE(os.stat(prom).st_mode), 0o444)

    def test_a_textfile_the_umask_made_read_only_is_still_rewritten(self):
        # Attack 56a B3: under umask 0222 the first write made the file
        # 0444 (0666 minus the umask), and the next write refused it as
        # "made read-only while resmon ran", exit 125.  No one made it
        # read-only: resmon's own file, with the mode resmon gave it, is
        # rewritten; a chmod of it is still a user's (the test above).
        prom = self.path("t.prom")
        first = []

        def rewritten():
            first.append(os.stat(prom).st_ino)
            # a periodic write after the first, then the final one at the end
            wait_until("a second textfile", lambda: os.stat(prom).st_ino != first[0])
        rc, err = self.run_while(prom, rewritten, umask=0o222)
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual(stat.S_IMODE(os.stat(prom).st_mode), 0o444)
        with open(prom) as f:
            self.assertIn("resmon_command_exit_status", f.read())  # the last write's, at the end
        self.assertEqual(os.listdir(self.dir.name), ["t.prom"])

    def test_an_output_and_the_textfile_naming_one_file_are_refused(self):
        for option, name in (("-o", "x.prom"), ("-s", "x.csv"), ("--plot", "x.svg")):
            path = self.path(name)
            with open(path, "w") as f:
                f.write("old\n")
            r = resmon_run("-q", option, path, "--textfile", os.path.join(self.dir.name, ".", name), "--", "true",
                           text=True)
            self.assertEqual(r.returncode, 125, (option, r.stderr))
            self.assertIn("name the same file", r.stderr)
            with open(path) as f:
                self.assertEqual(f.read(), "old\n")


class LabelsStayValid(Tmp):
    """Every label value is valid UTF-8 whatever its source, and names a
    scraper gives a meaning to are refused."""

    def assert_promtool_accepts(self, prom):
        with open(prom, "rb") as f:
            data = f.read()
        text = data.decode("utf-8")  # raises on invalid UTF-8
        if shutil.which("promtool"):
            self.assertEqual(promtool_check(text), (0, ""))
        return text

    def test_a_label_that_is_not_utf8_is_written_with_u_fffd(self):
        prom = self.path("m.prom")
        r = resmon_run("-q", "--textfile", prom, "--label", b"team=ml\xff", "--", "true")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('team="ml\ufffd"', self.assert_promtool_accepts(prom))

    def test_a_latin1_command_name_is_written_with_u_fffd(self):
        link = os.path.join(os.fsencode(self.dir.name), b"caf\xe9")
        os.symlink(WORKLOAD, link)
        prom = self.path("m.prom")
        r = resmon_run("-q", "--textfile", prom, "--", link, "exit", "0")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('command="caf\ufffd"', self.assert_promtool_accepts(prom))

    def test_a_comm_cut_mid_character_is_written_with_u_fffd(self):
        # 14 bytes and a two-byte character: the kernel keeps 15 bytes of the
        # name, half of the character.
        link = os.path.join(os.fsencode(self.dir.name), b"abcdefghijklmn\xc3\xa9")
        os.symlink(WORKLOAD, link)
        target = subprocess.Popen([link, "trap-term", "0"])
        self.addCleanup(target.wait)
        self.addCleanup(target.terminate)
        prom = self.path("pid.prom")
        r = resmon_run("-q", "--pid", str(target.pid), "--duration", "0.3", "--textfile", prom)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('command="abcdefghijklmn\ufffd"', self.assert_promtool_accepts(prom))

    def test_reserved_label_names_are_125(self):
        for label in ("le=1", "quantile=0.5", "version=1"):
            marker = self.path("started")
            r = resmon_run("--label", label, "--textfile", self.path("m.prom"), "--", "touch", marker, text=True)
            self.assertEqual(r.returncode, 125, (label, r.stderr))
            self.assertIn("reserved", r.stderr)
            self.assertFalse(os.path.exists(marker))

    def test_a_push_job_that_is_not_utf8_is_125(self):
        marker = self.path("started")
        r = resmon_run("--push", "http://127.0.0.1:9/", "--push-job", b"job\xff", "--", "touch", marker)
        self.assertEqual(r.returncode, 125, r.stderr)
        self.assertIn(b"not valid UTF-8", r.stderr)
        self.assertIn(b"\\xff", r.stderr)
        self.assertEqual(r.stderr.count(b"\n"), 1)
        self.assertFalse(os.path.exists(marker))

    @unittest.skipUnless(HAVE_SERVERS, SKIP_REASON)
    def test_a_label_that_is_not_utf8_leaves_the_gateway_healthy(self):
        gateway = f"http://127.0.0.1:{servers.gateway_port}"
        job = f"resmon-utf8-{self.run_id}"
        r = resmon_run("-q", "--push", gateway, "--push-job", job, "--label", b"team=ml\xff", "--", "true")
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        status, _, body = http_get(gateway + "/metrics")
        self.assertEqual(status, 200)
        self.assertIn(f'resmon_samples_total{{command="true",instance="",job="{job}",team="ml\ufffd"}}',
                      body.decode())
        http_get(f"{gateway}/metrics/job/{job}/team@base64/" + "bWzvv70=", method="DELETE")

    @unittest.skipUnless(HAVE_SERVERS, SKIP_REASON)
    def test_the_gateway_runs_on_a_private_persistence_file(self):
        with open(f"/proc/{servers.gateway.pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
        self.assertIn(f"--persistence.file={servers.gateway_persistence}".encode(), argv)
        self.assertTrue(servers.gateway_persistence.startswith(servers.dir.name + os.sep))


@unittest.skipUnless(HAVE_SERVERS, SKIP_REASON)
class ServerUnderIdleAndSlowClients(Tmp):
    def serve(self, *extra, **kw):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/metrics"
        return self.start("--serve", f"127.0.0.1:{self.port}", *extra, **kw)

    def connect(self, count):
        sockets = []
        for _ in range(count):
            s = socket.create_connection(("127.0.0.1", self.port))  # blocking: recv(MSG_DONTWAIT) never waits
            self.addCleanup(s.close)
            sockets.append(s)
        return sockets

    def test_64_idle_connections_do_not_delay_the_exit(self):
        require_strace(self)
        # A thread a file (-ff), resmon's own: its epoll_wait calls whole.
        # epoll_wait(2) where the architecture has it; arm64's libc calls epoll_pwait(2).
        run = self.serve(tracer=["strace", "-ff", "-qq", "-e", "trace=/^epoll_p?wait$", "-o", self.path("epoll")],
                         env=dict(os.environ, ASAN_OPTIONS="detect_leaks=0"))  # LeakSanitizer cannot run traced
        idle = self.connect(64)  # libmicrohttpd's old limit: the listening socket left its poll set

        def sockets_held():
            held = 0
            for fd in os.listdir(f"/proc/{run.pid}/fd"):
                try:
                    held += os.readlink(f"/proc/{run.pid}/fd/{fd}").startswith("socket:")
                except FileNotFoundError:
                    pass  # closed since the listing: a connection shut to make room
            return held

        def shut_by_resmon(s):
            try:
                return s.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
            except BlockingIOError:
                return False
            except OSError:
                return True

        # Every connection is taken, or shut to make room (16 a client address).
        wait_until("resmon to take the 64 connections",
                   lambda: sockets_held() - 1 + sum(map(shut_by_resmon, idle)) >= 64)
        started = time.monotonic()
        self.assertEqual(run.finish(), 0)
        took = time.monotonic() - started
        print(f"\n  exit with 64 idle connections: {took:.2f} s", file=sys.stderr)
        # The fault was an epoll_wait(10000) never woken: the exit waited for
        # its timeout, up to 10 s.  Told by how the wait ended, not by the
        # time the exit took (load arriving mid-run can take that past any
        # bound): the daemon's last epoll_wait was woken (its stop, through
        # the inter-thread channel), it did not time out (= 0).
        last = {}
        for name in os.listdir(self.dir.name):
            if name.startswith("epoll."):
                with open(self.path(name)) as f:
                    waits = [line for line in f if line.startswith(("epoll_wait(", "epoll_pwait("))]
                if waits:
                    last[name] = waits[-1].strip()
        self.assertTrue(last, "no thread of resmon's waited in epoll_wait: the trace saw no daemon")
        for name, line in last.items():
            self.assertFalse(line.endswith(" = 0"), f"the daemon's last wait timed out, not woken: {line[-120:]}")
        del idle

    def test_scrapes_are_answered_during_a_slowloris(self):
        run = self.serve()
        slow = self.connect(64)
        request = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 4000
        stop, started = threading.Event(), threading.Event()

        def trickle():  # a byte per connection every second: no idle timeout ever fires
            for i in range(len(request)):
                for s in slow:
                    try:
                        s.send(request[i:i + 1])
                    except OSError:
                        pass  # shut down to make room: the point
                started.set()
                if stop.wait(1):
                    return

        t = threading.Thread(target=trickle)
        t.start()
        try:
            self.assertTrue(started.wait(DEADLINE))  # every slow connection has started its request
            answered = 0
            for _ in range(10):
                try:
                    answered += http_get(self.url, timeout=5 * TIME_FACTOR)[0] == 200
                except OSError:
                    pass
        finally:
            stop.set()
            t.join()
        print(f"\n  scrapes answered during 64 slow connections: {answered} of 10", file=sys.stderr)
        self.assertEqual(answered, 10)  # was 0 of 10 in 40 s
        self.assertEqual(run.finish(), 0)

    def test_ports_outside_1_to_65535_are_125(self):
        for address in ("127.0.0.1:99999", "127.0.0.1:65536", "127.0.0.1:0", "127.0.0.1:-1", "127.0.0.1:+80",
                        "[::1]:70000"):
            marker = self.path("started")
            r = resmon_run("--serve", address, "--", "touch", marker, text=True, timeout=SAFETY_NET_SEC)
            self.assertEqual(r.returncode, 125, (address, r.stderr))
            self.assertIn("from 1 to 65535", r.stderr)
            self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
            self.assertFalse(os.path.exists(marker))

    def test_binding_every_interface_prints_one_warning(self):
        # In a network namespace of its own, with only a loopback device, so
        # the wildcard address reaches nothing beyond this test.
        unshare = shutil.which("unshare")
        if not unshare or subprocess.run([unshare, "-n", "true"], capture_output=True).returncode != 0:
            self.skipTest("unshare -n (a private network namespace) is not available")
        for address in (f"0.0.0.0:{free_port()}", f"[::]:{free_port()}"):
            r = subprocess.run([unshare, "-n", RESMON, "-q", "--serve", address, "--", "true"],
                               capture_output=True, text=True, timeout=SAFETY_NET_SEC)
            if "Address family not supported" in r.stderr:
                continue  # no IPv6 in the namespace
            self.assertEqual(r.returncode, 0, (address, r.stderr))
            self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
            self.assertIn("every network interface", r.stderr)
            self.assertIn("no authentication", r.stderr)
        r = resmon_run("-q", "--serve", f"127.0.0.1:{free_port()}", "--", "true", text=True)
        self.assertEqual((r.returncode, r.stderr), (0, ""))


class SilentGateway:
    """A socket the kernel accepts connections on, and nobody answers."""

    def __enter__(self):
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(64)
        self.url = f"http://127.0.0.1:{self.socket.getsockname()[1]}"
        return self

    def __exit__(self, *exc):
        self.socket.close()


class FirstPushHangsGateway:
    """A gateway on 127.0.0.1 that never answers the first connection (held
    open, unread) and answers each later one, after `delay` seconds, with
    200.  connections: the accepted sockets, in order, and accepted_at: when
    (time.monotonic()); requests: the first lines of the requests it read
    whole (each then answered)."""

    def __init__(self, delay):
        self.delay = delay
        self.connections, self.accepted_at, self.requests = [], [], []

    def __enter__(self):
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(64)
        self.url = f"http://127.0.0.1:{self.socket.getsockname()[1]}"
        self.thread = threading.Thread(target=self.accept, daemon=True)
        self.thread.start()
        return self

    def accept(self):
        while True:
            try:
                conn, _ = self.socket.accept()
            except OSError:  # closed: the test is over
                return
            self.accepted_at.append(time.monotonic())
            self.connections.append(conn)
            if len(self.connections) > 1:
                threading.Thread(target=self.answer, args=(conn,), daemon=True).start()

    def answer(self, conn):
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return
            data += chunk
        head, body = data.split(b"\r\n\r\n", 1)
        length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
        while length and len(body) < int(length.group(1)):
            chunk = conn.recv(65536)
            if not chunk:
                return
            body += chunk
        self.requests.append(head.split(b"\r\n", 1)[0].decode())
        time.sleep(self.delay)  # the push waits for its answer: it is given its time
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

    def open(self, index):
        """Whether the client has not closed connection index."""
        try:
            return self.connections[index].recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
        except BlockingIOError:
            return True
        except OSError:
            return False

    def __exit__(self, *exc):
        self.socket.shutdown(socket.SHUT_RDWR)  # wakes the accept
        self.socket.close()
        self.thread.join(SAFETY_NET_SEC)
        for conn in self.connections:
            conn.close()


class ReplyingGateway:
    """An HTTP server on 127.0.0.1 that answers every request with status and body."""

    def __init__(self, status, body):
        import http.server

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_PUT(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


class PushNeverStallsAnything(Tmp):
    def test_a_hung_gateway_neither_stalls_the_textfile_nor_doubles_the_exit(self):
        # Told by the order of events, not by wall-clock bounds that load
        # arriving mid-run broke (2.9 s to the first textfile; the exit
        # between 1 and 1.75 push timeouts): the push timeout is far longer
        # than anything the test waits for, the first push hangs for all of
        # it, and the final one is answered, after a delay.
        prom = self.path("m.prom")
        timeout = SAFETY_NET_SEC
        answer_after = 2  # more than the "about a second" the exit has besides the push
        with FirstPushHangsGateway(answer_after) as gateway:
            run = self.start("-i", "0.05", "--textfile", prom, "--push", gateway.url, "--push-interval", "0.1",
                             "--push-timeout", str(timeout))
            # The first push hangs from 0.1 s on; the textfile is written
            # every second all the same: two of them while that push is
            # still the only one, and still open.
            wait_until("the first push", lambda: len(gateway.connections) >= 1)
            wait_until("the first textfile", lambda: os.path.exists(prom))
            first = os.stat(prom).st_mtime_ns
            wait_until("a second textfile", lambda: os.stat(prom).st_mtime_ns != first)
            self.assertEqual(len(gateway.connections), 1)
            self.assertTrue(gateway.open(0), "the first push ended before the second textfile was written")
            started = time.monotonic()
            rc = run.finish(timeout=2 * timeout)
            ended = time.monotonic()
            took = ended - started
        print(f"\n  exit with a hung gateway and --push-timeout {timeout:.0f}: {took:.2f} s", file=sys.stderr)
        self.assertEqual(rc, 0)
        # Stopping gave the push in flight up for the final one, which came
        # at once, not after the hung push's timeout ...
        self.assertLess(ended - gateway.accepted_at[0], timeout, "the exit waited for the hung push's timeout")
        # ... and was given its time: it waited for the answer, which came
        # after answer_after seconds, and nothing failed.
        self.assertEqual(len(gateway.connections), 2)
        self.assertEqual(len(gateway.requests), 1)
        self.assertTrue(gateway.requests[0].startswith("PUT "), gateway.requests)
        self.assertEqual(run.stderr, "")

    def test_push_errors_are_escaped_and_credentials_redacted(self):
        with ReplyingGateway(400, b"\x1b[31mbad\x07 request\r\nsecond line\n") as gateway:
            r = resmon_run("-q", "--push", f"http://user:s3cret@127.0.0.1:{gateway.port}/", "--", "true")
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stderr.count(b"\n"), 1, r.stderr)
        self.assertNotIn(b"\x1b", r.stderr)
        self.assertNotIn(b"\x07", r.stderr)
        self.assertIn(b"HTTP 400: \\x1b[31mbad\\x07 request\n", r.stderr)
        self.assertNotIn(b"s3cret", r.stderr)
        self.assertIn(f"http://***@127.0.0.1:{gateway.port}/metrics/job@base64/".encode(), r.stderr)

    def test_push_urls_other_than_http_are_125(self):
        for url in ("ftp://127.0.0.1/x", "file:///tmp/x", "127.0.0.1:9091", "gopher://u:s3cret@127.0.0.1/"):
            marker = self.path("started")
            r = resmon_run("--push", url, "--", "touch", marker, text=True)
            self.assertEqual(r.returncode, 125, (url, r.stderr))
            self.assertIn("http:// or https://", r.stderr)
            self.assertNotIn("s3cret", r.stderr)
            self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
            self.assertFalse(os.path.exists(marker))


@unittest.skipUnless(HAVE_SERVERS, SKIP_REASON)
class CommandSeries(Tmp):
    def test_running_exit_status_and_build_info(self):
        port = free_port()
        url = f"http://127.0.0.1:{port}/metrics"
        version = resmon_run("--version", text=True).stdout.split()[1]
        run = self.start("--serve", f"127.0.0.1:{port}", "--serve-linger", "30",
                         script=WAIT_ONLY.replace("sys.stdin.read()\n", "sys.stdin.read()\nsys.exit(3)\n"))
        command = os.path.basename(sys.executable)
        text = http_get(url)[2].decode()
        self.assertEqual(promtool_check(text), (0, ""))
        self.assertIn(f'resmon_command_running{{command="{command}"}} 1\n', text)
        self.assertNotIn("resmon_command_exit_status", text)
        self.assertIn(f'resmon_build_info{{command="{command}",version="{version}"}} 1\n', text)
        om = http_get(url, {"Accept": "application/openmetrics-text;version=1.0.0"})[2].decode()
        self.assertIn("# TYPE resmon_build info\n", om)
        self.assertTrue(om.endswith(f'resmon_build_info{{command="{command}",version="{version}"}} 1\n# EOF\n'), om)
        run.proc.stdin.close()
        wait_until("the summary file", lambda: os.path.exists(run.summary_path) and os.path.getsize(run.summary_path))
        text = http_get(url)[2].decode()  # lingering: the command has ended
        self.assertEqual(promtool_check(text), (0, ""))
        self.assertIn(f'resmon_command_running{{command="{command}"}} 0\n', text)
        self.assertIn(f'resmon_command_exit_status{{command="{command}"}} 3\n', text)
        run.proc.send_signal(signal.SIGINT)
        self.assertEqual(run.proc.wait(timeout=SAFETY_NET_SEC), 3)

    def test_the_exact_peak_is_a_live_gauge(self):
        port = free_port()
        url = f"http://127.0.0.1:{port}/metrics"
        run = self.start("-i", "0.05", "--serve", f"127.0.0.1:{port}", script=HOLD_AND_WAIT)
        with open(f"/proc/{run.proc.pid}/task/{run.proc.pid}/children") as f:
            [child] = f.read().split()
        with open(f"/proc/{child}/status") as f:  # the kernel's mark, after "ready": it no longer moves
            vmhwm = int(next(l for l in f if l.startswith("VmHWM:")).split()[1]) * 1024

        def exact():
            lines = [l for l in http_get(url)[2].decode().splitlines()
                     if l.startswith("resmon_resident_memory_exact_max_bytes{")]
            return float(lines[0].rsplit(" ", 1)[1]) if lines else None

        # while the command runs (it waits on its stdin), not only after the end
        value = wait_until("the exact peak while the command runs", lambda: (exact() or 0) >= vmhwm and exact())
        self.assertGreaterEqual(vmhwm, 64 << 20)
        self.assertLessEqual(value, vmhwm * 1.02)  # never below a sampled value, which may count a few more pages
        self.assertIsNone(run.proc.poll())
        self.assertEqual(run.finish(), 0)


FORWARDED = (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGTERM)


def where_they_wait(pid):
    """Every thread of pid and of its children: name, state, wchan, and the
    kernel stack where it can be read (root) -- a hang's diagnosis."""
    lines = []
    pids = [pid]
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                pids += [int(c) for c in f.read().split()]
    except OSError:
        pass
    for p in pids:
        try:
            tids = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for tid in tids:
            fields = []
            for name in ("comm", "wchan", "stat", "stack"):
                try:
                    with open(f"/proc/{p}/task/{tid}/{name}") as f:
                        fields.append(f.read().strip().replace("\n", " | "))
                except OSError:
                    fields.append("?")
            lines.append(f"{p}/{tid}: " + " ; ".join(fields))
    return "\n".join(lines)


def blocked_signals(pid, tid):
    with open(f"/proc/{pid}/task/{tid}/status") as f:
        mask = int(next(l for l in f if l.startswith("SigBlk:")).split()[1], 16)
    return {sig for sig in FORWARDED if mask & (1 << (sig - 1))}


class ForwardedSignalsReachTheMainThread(Tmp):
    """The exporters' threads block every signal resmon forwards (one list,
    signals.c), so each reaches the main thread, which forwards it and whose
    waits it cuts short (issue 19.4: exporters.c left SIGQUIT out)."""

    QUIT_42 = ("import os, signal, sys\n"
               "signal.signal(signal.SIGQUIT, lambda *a: os._exit(42))\n"
               "print('ready', flush=True)\n"
               "sys.stdin.read()\n")

    def test_exporter_threads_block_every_forwarded_signal_and_sigquit_reaches_the_command(self):
        with SilentGateway() as gateway:
            run = self.start("--serve", f"127.0.0.1:{free_port()}", "--textfile", self.path("m.prom"),
                             "--push", gateway.url, "--push-interval", "30", "--push-timeout", "0.2",
                             script=self.QUIT_42)
            pid = run.proc.pid
            threads = {}
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/comm") as f:
                    threads[int(tid)] = f.read().strip()
            exporters = {tid: name for tid, name in threads.items()
                         if name.startswith("MHD") or name in ("resmon-textfile", "resmon-push")}
            self.assertEqual(sorted(exporters.values()), ["MHD-single", "resmon-push", "resmon-textfile"],
                             threads)
            for tid, name in exporters.items():
                self.assertEqual(blocked_signals(pid, tid), set(FORWARDED), name)
            self.assertEqual(blocked_signals(pid, pid), set(), "the main thread takes them")
            run.proc.send_signal(signal.SIGQUIT)
            try:
                status = run.proc.wait(timeout=SAFETY_NET_SEC)
            except subprocess.TimeoutExpired:
                # Seen once (CI23 of stop 49, six busy loops beside it), not
                # reproduced in 72 runs: say where every thread waits.
                self.fail(f"resmon did not end after SIGQUIT:\n{where_they_wait(pid)}")
            self.assertEqual(status, 42)  # the command got it, its status stands
            run.finish()
        self.assertTrue(run.summary["interrupted"])
        self.assertEqual(run.summary["exit_status"], 42)


def mapped_objects(pid):
    with open(f"/proc/{pid}/maps") as f:
        return {os.path.basename(l.split()[5]) for l in f if len(l.split()) >= 6 and ".so" in l.split()[5]}


class PayForWhatIsUsed(Tmp):
    """libmicrohttpd and libcurl are loaded only for --serve and --push
    (issue 20): a plain run maps neither."""

    def test_a_plain_run_maps_neither_http_library(self):
        run = self.start()
        objects = mapped_objects(run.proc.pid)
        self.assertEqual(run.finish(), 0)
        for name in ("libcurl", "libmicrohttpd", "libgnutls", "libssl", "libkrb5", "libldap", "libjansson"):
            self.assertFalse([o for o in objects if o.startswith(name)], (name, sorted(objects)))
        if not SANITIZED:  # the sanitizers' runtimes bring their own
            # ld.so, libc, libm: Jansson is loaded by plot and compare alone
            self.assertLessEqual(len(objects), 3, sorted(objects))

    def test_serve_and_push_load_their_library(self):
        with SilentGateway() as gateway:
            run = self.start("--serve", f"127.0.0.1:{free_port()}", "--push", gateway.url, "--push-timeout", "0.2")
            objects = mapped_objects(run.proc.pid)
            run.finish()
        self.assertTrue([o for o in objects if o.startswith("libmicrohttpd.so")], sorted(objects))
        self.assertTrue([o for o in objects if o.startswith("libcurl.so")], sorted(objects))

    def test_a_missing_library_is_one_line_and_125(self):
        missing = self.path("no-such-library.so")
        for option, variable, soname in ((["--serve", f"127.0.0.1:{free_port()}"], "RESMON_MICROHTTPD_LIBRARY",
                                          "libmicrohttpd.so.12"),
                                         (["--push", "http://127.0.0.1:9/"], "RESMON_CURL_LIBRARY", "libcurl.so.4")):
            marker = self.path("started")
            r = resmon_run(*option, "--", "touch", marker, text=True, env=dict(os.environ, **{variable: missing}))
            self.assertEqual(r.returncode, 125, r.stderr)
            self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
            self.assertIn(f"{option[0]} needs {soname}, which cannot be loaded", r.stderr)
            self.assertFalse(os.path.exists(marker))
            # a plain run does not care
            r = resmon_run("-q", "--", "true", text=True, env=dict(os.environ, **{variable: missing}))
            self.assertEqual((r.returncode, r.stderr), (0, ""))

    def test_jansson_is_loaded_only_to_read_json_lines(self):
        for name in ("s.jsonl", "s.csv"):
            r = resmon_run("-q", "-s", self.path(name), "--", "true", text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
        env = dict(os.environ, RESMON_JANSSON_LIBRARY=self.path("no-such-library.so"))
        r = resmon_run("plot", self.path("s.csv"), "-o", self.path("c.svg"), text=True, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)  # CSV needs no JSON parser
        r = resmon_run("plot", self.path("s.jsonl"), "-o", self.path("j.svg"), text=True, env=env)
        self.assertEqual(r.returncode, 125, r.stderr)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.assertIn("needs libjansson.so.4, which cannot be loaded", r.stderr)
        r = resmon_run("plot", self.path("s.jsonl"), "-o", self.path("j.svg"), text=True)
        self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
