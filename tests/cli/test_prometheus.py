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
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse
import urllib.request
import uuid

RESMON = os.environ["RESMON"]
WORKLOAD = os.environ["WORKLOAD"]
SANITIZED = os.environ.get("RESMON_TEST_SANITIZED") == "1"
FAKE_NVML_LIB = os.environ.get("FAKE_NVML_LIB")  # tests/fake_nvml.c, loaded as NVML
HAVE_SERVERS = all(shutil.which(p) for p in ("prometheus", "promtool", "prometheus-pushgateway"))
SKIP_REASON = "Debian packages prometheus and prometheus-pushgateway are not installed (scripts/deps installs them)"
DEADLINE = 60.0  # seconds for a server to come up or a scrape to arrive
# RESMON_TEST_TIME_FACTOR, as in tests/test_util.h (scripts/test sets 10 on a busy machine).
TIME_FACTOR = float(os.environ.get("RESMON_TEST_TIME_FACTOR") or "1")

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


def http_get(url, headers=None, method="GET", timeout=10):
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
    r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=30)
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
        self.gateway = subprocess.Popen(
            ["prometheus-pushgateway", f"--web.listen-address=127.0.0.1:{self.gateway_port}"],
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

    def __init__(self, tmpdir, resmon_args, script=WAIT_ONLY, env=None):
        self.summary_path = os.path.join(tmpdir, f"s-{uuid.uuid4().hex}.json")
        self.proc = subprocess.Popen(
            [RESMON, "-q", "-o", self.summary_path, *resmon_args, "--", sys.executable, "-c", script],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        line = self.proc.stdout.readline()  # the command runs: resmon's endpoint is up
        if line != "ready\n":
            self.proc.kill()
            raise AssertionError(f"command did not start: {line!r} {self.proc.stderr.read()}")

    def finish(self, timeout=60):
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

    def start(self, *args, script=WAIT_ONLY, env=None):
        run = Run(self.dir.name, args, script, env)
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
                           capture_output=True, text=True, timeout=60)
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
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
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
        self.assertEqual(run.proc.wait(timeout=10), 0)

    def test_port_in_use_is_125_before_the_command_starts(self):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            marker = self.path("started")
            r = subprocess.run([RESMON, "--serve", f"127.0.0.1:{port}", "--", "touch", marker],
                               capture_output=True, text=True, timeout=30)
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
        huge = socket.create_connection(("127.0.0.1", self.port), timeout=10)
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
            t.join(timeout=120)
        self.assertEqual(failures, [])
        self.assertEqual(http_get(self.url)[0], 200)  # the silent client blocks nobody
        grown_mib = (rss_kib() - before) / 1024
        self.assertLess(grown_mib, 8 * (5 if SANITIZED else 1), "resmon's RSS grew under scrapers")
        self.assertEqual(run.finish(), 0)
        s = run.summary
        slots = s["num_samples"] + s["skipped_slots"]
        print(f"\n  hostile clients: RSS grew {grown_mib:.2f} MiB; {s['num_samples']} samples, "
              f"{s['skipped_slots']} skipped slots over {s['wall_sec']:.2f} s at 0.01 s", file=sys.stderr)
        # The schedule accounts for every slot, and the sampler kept most of
        # them (a busy machine costs it slots of its own: 35 % seen at load 19).
        self.assertGreaterEqual(slots, s["wall_sec"] / 0.01 * 0.9)
        self.assertLessEqual(s["skipped_slots"], slots * min(0.25 * TIME_FACTOR, 0.6))


class Options(Tmp):
    def test_invalid_labels_are_125(self):
        for label in ("1x=a", "__x=a", "a-b=c", "noequals", "command=x", "job=x"):
            marker = self.path("started")
            r = subprocess.run([RESMON, "--label", label, "--textfile", self.path("m.prom"), "--", "touch", marker],
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 125, (label, r.stderr))
            self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
            self.assertFalse(os.path.exists(marker))
        r = subprocess.run([RESMON, "--label", "a=1", "--label", "a=2", "--", "true"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 125)

    def test_serve_needs_an_explicit_host(self):
        for address in (":9464", "9464", "127.0.0.1:", "127.0.0.1:notaport"):
            r = subprocess.run([RESMON, "--serve", address, "--", "true"], capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 125, (address, r.stderr))
            self.assertEqual(r.stderr.count("\n"), 1, r.stderr)

    def test_with_pid_the_command_label_is_the_process_name(self):
        target = subprocess.Popen([WORKLOAD, "trap-term", "0"])
        self.addCleanup(target.wait)
        self.addCleanup(target.terminate)
        prom = self.path("pid.prom")
        r = subprocess.run([RESMON, "-q", "--pid", str(target.pid), "--duration", "0.3", "--textfile", prom],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(prom) as f:
            text = f.read()
        comm = os.path.basename(WORKLOAD)[:15]  # the kernel keeps 15 bytes of the name
        self.assertIn(f'resmon_samples_total{{command="{comm}"}} ', text)

    def test_help_documents_the_options(self):
        r = subprocess.run([RESMON, "--help"], capture_output=True, text=True, timeout=30)
        for option in ("--serve HOST:PORT", "--serve-linger", "--push URL", "--push-interval", "--push-timeout",
                       "--textfile PATH", "--label KEY=VALUE", "No authentication"):
            self.assertIn(option, r.stdout)

    def test_a_dead_pushgateway_does_not_change_the_status(self):
        r = subprocess.run([RESMON, "-q", "--push", f"http://127.0.0.1:{free_port()}", "--", WORKLOAD, "exit", "3"],
                           capture_output=True, text=True, timeout=60)
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
                               capture_output=True, text=True, timeout=60)
            took = time.monotonic() - started
        self.assertEqual(r.returncode, 0)
        self.assertIn("timeout", r.stderr.lower())
        self.assertLess(took, 5)

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
                            "--", WORKLOAD, "sleep", "0.3"], capture_output=True, text=True, timeout=60, env=env)
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
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 125)
        self.assertIn("No such file or directory", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
