"""resmon's pytest plugin, end to end: real pytest runs, in a subprocess, of
generated test files, with the plugin loaded through its pytest11 entry
point as an installed package loads it."""

import json
import os
import re
import stat
import subprocess
import sys
import textwrap

import pytest

from helpers import SAFETY_SEC, bind_mount

MIB = 1 << 20
# Under ASan (scripts/test-python's second run) every allocated byte has an
# eighth of a byte of shadow, and its quarantine keeps freed blocks resident.
ASAN = "ASAN_OPTIONS" in os.environ
SHADOW = 1.15 if ASAN else 1.0

# A test body that touches every page of 100 MiB (a bytearray alone may be
# zero pages the kernel never backs).
ALLOCATE_100 = """
        def allocate(mib):
            block = bytearray(mib << 20)
            block[::4096] = b"x" * len(range(0, len(block), 4096))
            return block
"""


def run_pytest(directory, source, *args, ini=None, timeout=None):
    """Runs pytest on test_generated.py (source) in directory; returns the
    CompletedProcess.  ini: the [pytest] section's lines."""
    (directory / "test_generated.py").write_text(textwrap.dedent(source))
    (directory / "pytest.ini").write_text("[pytest]\n" + (textwrap.dedent(ini) if ini else ""))
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    env.pop("PYTEST_PLUGINS", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *args],
                          cwd=directory, capture_output=True, text=True,
                          timeout=2 * SAFETY_SEC if timeout is None else timeout, env=env)


def outcomes(result):
    """{test name: PASSED/FAILED/ERROR} from the -rA short summary."""
    found = {}
    for word, name in re.findall(r"^(PASSED|FAILED|ERROR) test_generated\.py::(\S+)", result.stdout, re.M):
        found.setdefault(name, word)
    return found


def report(directory, name="report.json"):
    with open(directory / name) as f:
        return json.load(f)


def test_the_plugin_is_registered_by_its_entry_point_and_inert_until_used(tmp_path):
    # Unused, it starts no sampler and leaves the peak mark alone: the
    # second test still sees the first one's 100 MiB in ru_maxrss.
    result = run_pytest(tmp_path, ALLOCATE_100 + """
        import os, resource

        def test_big():
            allocate(100)

        def test_peak_mark_kept():
            assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >= 100 * 1024
            for task in os.listdir("/proc/self/task"):
                with open(f"/proc/self/task/{task}/comm") as f:
                    assert f.read().strip() != "resmon-sampler"
    """, "--trace-config")
    assert outcomes(result) == {"test_big": "PASSED", "test_peak_mark_kept": "PASSED"}, result.stdout
    assert re.search(r"PLUGIN registered: <module 'resmon.pytest_plugin'", result.stdout), result.stdout
    assert "resmon: " not in result.stdout


@pytest.mark.parametrize("measured", [False, True], ids=["unused", "json"])
def test_a_tests_own_user_property_named_resmon_is_not_a_record(tmp_path, measured):
    # Attack 57b: record_property("resmon", ...) in a test -- the name the
    # plugin's record travels under -- was parsed as a record: INTERNALERROR
    # in every session, the plugin unused.  The test's own value is its own.
    result = run_pytest(tmp_path, """
        def test_prop(record_property):
            record_property("resmon", "fast")
            record_property("resmon", 5)
            record_property("resmon", "[1]")

        def test_other():
            pass
    """, *(["--resmon-json=report.json"] if measured else []))
    assert "INTERNALERROR" not in result.stdout + result.stderr, result.stdout + result.stderr
    assert outcomes(result) == {"test_prop": "PASSED", "test_other": "PASSED"}, result.stdout
    if measured:
        tests = report(tmp_path)["tests"]
        assert tests["test_generated.py::test_prop"]["measured_by"] in ("cgroup", "sampled-tree"), tests
        assert tests["test_generated.py::test_prop"]["outcome"] == "passed", tests


def test_a_marker_over_its_limit_fails_with_one_line_and_under_it_passes(tmp_path):
    result = run_pytest(tmp_path, ALLOCATE_100 + """
        import pytest

        @pytest.mark.resmon_limit(rss_growth_mb=50)
        def test_over():
            allocate(100)

        @pytest.mark.resmon_limit(rss_growth_mb=150, cpu_sec=30)
        def test_under():
            allocate(100)
    """, "--resmon-json=report.json")
    assert outcomes(result) == {"test_over": "FAILED", "test_under": "PASSED"}, result.stdout
    assert re.search(r"\b1 failed, 1 passed\b", result.stdout), result.stdout
    assert "error" not in result.stdout.splitlines()[-1]
    over = report(tmp_path)["tests"]["test_generated.py::test_over"]["rss_growth_mb"]
    # The failure is this one line, with the figure the report holds.
    section = result.stdout.split("_ test_over _", 1)[1].splitlines()[1]
    assert section == f"resmon_limit: rss_growth_mb = {over:.4g} exceeds the limit of 50"


def test_rss_growth_is_the_exact_peak_above_the_calls_start(tmp_path):
    # 60 MiB held since before the call (a fixture's) are not growth; 100 MiB
    # touched and freed inside the call are, though they are gone at its end.
    result = run_pytest(tmp_path, ALLOCATE_100 + """
        import pytest

        @pytest.fixture
        def held():
            return allocate(60)

        def test_growth(held):
            block = allocate(100)
            del block
    """, "--resmon-json=report.json")
    assert outcomes(result) == {"test_growth": "PASSED"}, result.stdout
    record = report(tmp_path)["tests"]["test_generated.py::test_growth"]
    assert record["peak_rss_exact"] is True
    # The kernel's RSS counters are per-CPU and batched: a few pages either way.
    assert 99 <= record["rss_growth_mb"] < 110 * SHADOW, record
    assert record["rss_start_mb"] >= 60, record
    assert record["peak_rss_mb"] == pytest.approx(record["rss_start_mb"] + record["rss_growth_mb"], abs=0.01)
    assert record["measured_by"] in ("cgroup", "sampled-tree")
    assert 0 <= record["retained_mb"] <= record["rss_growth_mb"], record
    if not ASAN:  # the 100 MiB were freed (ASan's quarantine keeps them resident)
        assert record["retained_mb"] < 5, record
    assert 0 < record["cpu_sec"] and 0 < record["wall_sec"]


@pytest.mark.parametrize("cgroup", ["auto", "no"])
def test_a_test_running_a_child_is_measured_with_it(tmp_path, cgroup):
    # The child touches 80 MiB and burns 0.3 s of CPU, in the test's leaf
    # cgroup or seen by the samples of the tree (its PSS); the kernel's own
    # CPU accounting of it (wait4) is in the record.
    result = run_pytest(tmp_path, """
        import resource, subprocess, sys, time, json

        CHILD = '''
        import time
        block = bytearray(80 << 20)
        block[::4096] = b"x" * len(range(0, len(block), 4096))
        end = time.process_time() + 0.3
        while time.process_time() < end:
            pass
        '''

        def test_child():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([sys.executable, "-c", CHILD], check=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            with open("kernel.json", "w") as f:
                json.dump({"maxrss_kb": after.ru_maxrss,
                           "cpu": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime}, f)
    """, "--resmon-json=report.json", ini=f"resmon_cgroup = {cgroup}\n")
    assert outcomes(result) == {"test_child": "PASSED"}, result.stdout
    record = report(tmp_path)["tests"]["test_generated.py::test_child"]
    if cgroup == "no":
        assert record["measured_by"] == "sampled-tree", record
        assert record["cgroup_error"] == "off (resmon_cgroup = no)", record
    kernel = report(tmp_path, "kernel.json")
    # The child's 80 MiB: all of them in its leaf cgroup; seen by samples of
    # the tree's PSS while it held them for 0.3 s of CPU, which came out 75
    # to 80 under load (the tree's PSS, not the child's RSS: see the report).
    assert record["rss_growth_mb"] >= (80 if record["measured_by"] == "cgroup" else 70), json.dumps(record)
    assert record["peak_rss_mb"] == pytest.approx(record["rss_start_mb"] + record["rss_growth_mb"], abs=0.01)
    assert record["cpu_sec"] >= kernel["cpu"] >= 0.3
    assert record["tree_peak_rss_mb"] >= record["rss_start_mb"]


def test_the_json_report_holds_machine_version_and_every_measured_test(tmp_path):
    import resmon
    result = run_pytest(tmp_path, """
        import pytest

        def test_one():
            pass

        @pytest.mark.parametrize("n", [1, 2])
        def test_param(n):
            pass
    """, "--resmon-json=report.json")
    assert result.returncode == 0, result.stdout
    data = report(tmp_path)
    assert data["resmon_version"] == resmon.library_version
    assert data["machine"]["cpus"] == os.cpu_count()
    assert data["machine"]["hostname"]
    assert list(data["tests"]) == ["test_generated.py::test_one", "test_generated.py::test_param[1]",
                                   "test_generated.py::test_param[2]"]
    for record in data["tests"].values():
        assert {"rss_growth_mb", "peak_rss_mb", "cpu_sec", "wall_sec"} <= record.keys()
        assert "peak_gpu_mem_mb" not in record  # no GPU measured


def test_the_ini_limit_applies_to_every_test_and_the_marker_overrides_it(tmp_path):
    result = run_pytest(tmp_path, ALLOCATE_100 + """
        import pytest

        def test_default():
            allocate(100)

        @pytest.mark.resmon_limit(rss_growth_mb=200)
        def test_raised():
            allocate(100)

        @pytest.mark.resmon_limit(rss_growth_mb=None)
        def test_lifted():
            allocate(100)

        def test_small():
            pass
    """, ini="resmon_limit = rss_growth_mb=50\n")
    assert outcomes(result) == {"test_default": "FAILED", "test_raised": "PASSED", "test_lifted": "PASSED",
                                "test_small": "PASSED"}, result.stdout


def test_a_module_marker_applies_to_its_tests_and_a_tests_own_marker_overrides_it(tmp_path):
    result = run_pytest(tmp_path, ALLOCATE_100 + """
        import pytest

        pytestmark = pytest.mark.resmon_limit(rss_growth_mb=50)

        def test_module_limit():
            allocate(100)

        @pytest.mark.resmon_limit(rss_growth_mb=200)
        def test_own_limit():
            allocate(100)
    """, "--strict-markers")
    assert outcomes(result) == {"test_module_limit": "FAILED", "test_own_limit": "PASSED"}, result.stdout


def test_a_limit_holds_whatever_ran_before(tmp_path):
    # Attack 74: memory two earlier tests freed stayed resident in the C
    # heap, and the limited test reused it: 0.2 MiB for 20 MiB touched, so
    # its limit of 5 failed alone and passed after them.
    result = run_pytest(tmp_path, ALLOCATE_100 + """
        import pytest

        def test_1_larger():
            allocate(30)

        def test_2_as_large():
            allocate(20)

        @pytest.mark.resmon_limit(rss_growth_mb=5)
        def test_3_limited():
            allocate(20)
    """)
    assert outcomes(result) == {"test_1_larger": "PASSED", "test_2_as_large": "PASSED",
                                "test_3_limited": "FAILED"}, result.stdout
    # Review 76: memory reused and freed again within one call, in 64 KiB
    # blocks of the heap; a trim gated on the heap's free bytes missed it.
    result = run_pytest(tmp_path, """
        import pytest

        KEEP = []

        def churn(mib):
            blocks = [bytearray(65536) for _ in range(mib * 16)]
            for block in blocks:
                block[::4096] = b"\\1" * 16
            return blocks

        def test_0_fragment():
            blocks = churn(40)
            KEEP.append(bytearray(65536))
            del blocks

        def test_1_uses_20():
            churn(20)

        @pytest.mark.resmon_limit(rss_growth_mb=5)
        def test_2_uses_20():
            churn(20)
    """, "--resmon")
    assert outcomes(result) == {"test_0_fragment": "PASSED", "test_1_uses_20": "PASSED",
                                "test_2_uses_20": "FAILED"}, result.stdout


def test_two_markers_of_one_test_give_a_key_the_stricter_limit(tmp_path):
    # Attack 70: of two markers stacked on one test the one nearest the
    # function won, so a tighter limit added above an existing one was
    # ignored, unsaid.  On one node the stricter of the two holds, in
    # either order; a class's marker is still overridden by the test's own.
    result = run_pytest(tmp_path, ALLOCATE_100 + """
        import pytest

        @pytest.mark.resmon_limit(rss_growth_mb=50)
        @pytest.mark.resmon_limit(rss_growth_mb=400)
        def test_tighter_above():
            allocate(100)

        @pytest.mark.resmon_limit(rss_growth_mb=400)
        @pytest.mark.resmon_limit(rss_growth_mb=50)
        def test_tighter_below():
            allocate(100)

        @pytest.mark.resmon_limit(rss_growth_mb=None)
        @pytest.mark.resmon_limit(rss_growth_mb=50)
        def test_a_limit_beside_none():
            allocate(100)

        @pytest.mark.resmon_limit(rss_growth_mb=50)
        class TestClass:
            @pytest.mark.resmon_limit(rss_growth_mb=400)
            def test_own_overrides_class(self):
                allocate(100)

        # Review 71: a subclass's marker overrides its base's (one class
        # node holds both), a limit or None.
        @pytest.mark.resmon_limit(rss_growth_mb=50)
        class TestBase:
            pass

        @pytest.mark.resmon_limit(rss_growth_mb=400)
        class TestLooser(TestBase):
            def test_subclass_overrides_base(self):
                allocate(100)

        @pytest.mark.resmon_limit(rss_growth_mb=None)
        class TestLifted(TestBase):
            def test_subclass_lifts_base(self):
                allocate(100)

        # Review 72: stacked on a class, the stricter too.
        @pytest.mark.resmon_limit(rss_growth_mb=50)
        @pytest.mark.resmon_limit(rss_growth_mb=400)
        class TestStackedOnAClass:
            def test_class_stacked(self):
                allocate(100)

        # Attack 73: the same with pytestmark class attributes (a list of
        # MarkDecorators, not the Marks pytest hands out): the subclass's
        # was merged with its base's, the stricter winning.
        class TestAttrBase:
            pytestmark = [pytest.mark.resmon_limit(rss_growth_mb=50)]

        class TestAttrLooser(TestAttrBase):
            pytestmark = [pytest.mark.resmon_limit(rss_growth_mb=400)]
            def test_attribute_subclass_overrides_base(self):
                allocate(100)

        class TestAttrStacked:
            pytestmark = [pytest.mark.resmon_limit(rss_growth_mb=50), pytest.mark.resmon_limit(rss_growth_mb=400)]
            def test_attribute_stacked(self):
                allocate(100)
    """, "--strict-markers")
    assert outcomes(result) == {"test_tighter_above": "FAILED", "test_tighter_below": "FAILED",
                                "test_a_limit_beside_none": "FAILED",
                                "TestClass::test_own_overrides_class": "PASSED",
                                "TestLooser::test_subclass_overrides_base": "PASSED",
                                "TestLifted::test_subclass_lifts_base": "PASSED",
                                "TestStackedOnAClass::test_class_stacked": "FAILED",
                                "TestAttrLooser::test_attribute_subclass_overrides_base": "PASSED",
                                "TestAttrStacked::test_attribute_stacked": "FAILED"}, result.stdout


def test_bad_limits(tmp_path):
    result = run_pytest(tmp_path, """
        import pytest

        @pytest.mark.resmon_limit(rss_growth=1)
        def test_unknown_key():
            pass

        @pytest.mark.resmon_limit(rss_growth_mb="lots")
        def test_not_a_number():
            pass

        @pytest.mark.resmon_limit(children_peak_rss_mb=10)
        def test_removed_key():
            pass
    """)
    assert outcomes(result) == {"test_unknown_key": "FAILED", "test_not_a_number": "FAILED",
                                "test_removed_key": "FAILED"}, result.stdout
    assert "resmon_limit: children_peak_rss_mb is no more: rss_growth_mb holds what a test's children added" \
        in result.stdout
    assert "resmon_limit: unknown key 'rss_growth' (one of rss_growth_mb," in result.stdout
    assert "resmon_limit: rss_growth_mb='lots' is not a number >= 0" in result.stdout
    # Issue 29, 5: the record's kernel CPU seconds are cpu_sec (the command's
    # name for them; cpu_time_sec is the sampled figure): the old name is
    # refused with a word on the new one, in the marker and the ini file.
    result = run_pytest(tmp_path, """
        import pytest

        @pytest.mark.resmon_limit(cpu_time_sec=5)
        def test_old_name():
            pass
    """)
    assert outcomes(result) == {"test_old_name": "FAILED"}, result.stdout
    assert "resmon_limit: cpu_time_sec is now cpu_sec (the kernel's CPU seconds)" in result.stdout
    result = run_pytest(tmp_path, "def test_x():\n    pass\n", ini="resmon_limit = cpu_time_sec=5\n")
    assert result.returncode == 4 and "cpu_time_sec is now cpu_sec" in result.stderr, result.stdout + result.stderr
    result = run_pytest(tmp_path, "def test_x():\n    pass\n", ini="resmon_limit = rss_growth_mb\n")
    assert result.returncode == 4, result.stdout + result.stderr  # pytest's usage error
    assert "resmon_limit: 'rss_growth_mb' is not KEY=VALUE" in result.stderr
    # Review 71: decimal only -- float() took "1_0" as 10 and "inf".
    for bad in ("rss_growth_mb=1_0", "rss_growth_mb=0x10", "rss_growth_mb=inf"):
        result = run_pytest(tmp_path, "def test_x():\n    pass\n", ini=f"resmon_limit = {bad}\n")
        assert result.returncode == 4, result.stdout + result.stderr
        assert f"resmon_limit: '{bad}' is not KEY=VALUE" in result.stderr, result.stderr


def test_a_resmon_interval_outside_the_librarys_range_is_refused_at_start(tmp_path):
    # Attack 59: 0, -1 and nan were refused in one line, but 1e-9 and 1e9
    # passed the start and failed every measured test ("the test cannot be
    # measured").
    for value, why in (("1e-9", "between 1e-06 and 1000000.0, got 1e-09"), ("1e9", "got 1000000000.0"),
                       ("0", "a positive number of seconds"), ("nan", "a positive number of seconds")):
        result = run_pytest(tmp_path, "def test_x():\n    pass\n", "--resmon", ini=f"resmon_interval = {value}\n")
        assert result.returncode == 4, result.stdout + result.stderr
        assert "resmon: resmon_interval must be " in result.stderr and why in result.stderr, result.stderr
    result = run_pytest(tmp_path, "def test_x():\n    pass\n", "--resmon", ini="resmon_interval = 0.05\n")
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_bad_resmon_cgroup_value_is_refused_and_none_turns_the_leaves_off(tmp_path):
    # "none" (resmon_gpu's word for off) or a typo measured with leaves, silently.
    for value in ("nope", "autoo", "2"):
        result = run_pytest(tmp_path, "def test_x():\n    pass\n", "--resmon", ini=f"resmon_cgroup = {value}\n")
        assert result.returncode == 4, result.stdout + result.stderr
        assert f"resmon: resmon_cgroup = '{value}': auto or no" in result.stderr, result.stderr
    for value in ("none", "Off ", "no"):
        result = run_pytest(tmp_path, "def test_x():\n    pass\n", "--resmon-json=report.json",
                            ini=f"resmon_cgroup = {value}\n")
        assert result.returncode == 0, result.stdout + result.stderr
        record = report(tmp_path)["tests"]["test_generated.py::test_x"]
        assert record["measured_by"] == "sampled-tree", (value, record)


def test_a_gpu_that_cannot_be_opened_fails_the_measured_test_with_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("RESMON_NVML_LIBRARY", str(tmp_path / "no-libnvidia-ml.so.1"))
    result = run_pytest(tmp_path, """
        def test_measured():
            pass
    """, "--resmon", ini="resmon_gpu = nvml:0\n")
    assert outcomes(result) == {"test_measured": "FAILED"}, result.stdout
    assert re.search(r"^resmon: the test cannot be measured: .*NVIDIA library .* not found", result.stdout, re.M), result.stdout


def test_resmon_lists_the_heaviest_tests(tmp_path):
    result = run_pytest(tmp_path, ALLOCATE_100 + """
        def test_light():
            pass

        def test_heavy():
            allocate(100)
    """, "--resmon", "--resmon-top", "1")
    assert result.returncode == 0, result.stdout
    memory = result.stdout.split("resmon: 1 heaviest of 2 tests by memory growth", 1)[1].splitlines()
    assert memory[1].split()[:2] == ["growth", "MiB"]
    assert memory[2].endswith("  test_generated.py::test_heavy"), memory
    assert float(memory[2].split()[0]) >= 99
    assert "resmon: 1 heaviest of 2 tests by CPU time" in result.stdout


@pytest.mark.parametrize("cgroup", ["auto", "no"])
def test_a_measured_test_resets_the_peak_mark_only_without_a_leaf(tmp_path, monkeypatch, cgroup):
    # Documented: in a leaf the mark is left alone (an outer resmon or
    # /usr/bin/time keeps the session's peak: faults.md 24); without one the
    # pytest process's peak mark (VmHWM) then shows the last measured test's
    # peak.  VmHWM, not ru_maxrss: ru_maxrss also keeps the
    # peak of the process image pytest was exec'd from (this test's own
    # pytest when it is large), which no reset clears.  The 100 MiB is mapped
    # and unmapped directly, so that no allocator (ASan's quarantine) keeps it
    # resident; the same file run unmeasured is the control.  The two
    # outcomes are told apart by half the block, not by its whole size: the
    # process's resident set grows between the peak and the next test (ASan's
    # shadow, the sampler's thread), 0.1-1 MiB that a 99 MiB bound missed in CI.
    source = """
        import mmap, os

        def vm(key):
            with open("/proc/self/status") as f:
                return next(int(line.split()[1]) for line in f if line.startswith(key + ":"))

        def test_big():
            block = mmap.mmap(-1, 100 << 20)
            for offset in range(0, len(block), 4096):
                block[offset] = 1
            assert vm("VmRSS") >= 100 * 1024
            block.close()

        def test_after():
            above = vm("VmHWM") - vm("VmRSS")
            if os.environ.get("EXPECT_RESET"):
                assert above < 50 * 1024
            else:
                assert above >= 75 * 1024
    """
    control = run_pytest(tmp_path, source)
    ini = f"resmon_cgroup = {cgroup}\n"
    probe = run_pytest(tmp_path, "def test_x():\n    pass\n", "--resmon-json=probe.json", ini=ini)
    in_leaf = report(tmp_path, "probe.json")["tests"]["test_generated.py::test_x"]["measured_by"] == "cgroup"
    assert probe.returncode == 0, probe.stdout
    if not in_leaf:
        monkeypatch.setenv("EXPECT_RESET", "1")
    result = run_pytest(tmp_path, source, "--resmon", ini=ini)
    assert outcomes(result) == {"test_big": "PASSED", "test_after": "PASSED"}, result.stdout
    assert outcomes(control) == {"test_big": "PASSED", "test_after": "PASSED"}, control.stdout


def test_under_xdist_every_workers_tests_are_reported(tmp_path, monkeypatch):
    pytest.importorskip("xdist")
    monkeypatch.setenv("COLUMNS", "200")
    result = run_pytest(tmp_path, ALLOCATE_100 + """
        import os, pytest

        @pytest.mark.parametrize("n", range(6))
        def test_many(n):
            with open(f"worker-{n}", "w") as f:
                f.write(os.environ["PYTEST_XDIST_WORKER"])

        @pytest.mark.resmon_limit(rss_growth_mb=50)
        def test_over():
            allocate(100)
    """, "-p", "xdist", "-n", "2", "--resmon-json=report.json", "--resmon")
    assert re.search(r"\b1 failed, 6 passed\b", result.stdout), result.stdout
    assert "FAILED test_generated.py::test_over" in result.stdout
    assert "resmon_limit: rss_growth_mb = " in result.stdout
    # The reason reaches the controller's short summary too.
    assert re.search(r"^FAILED test_generated\.py::test_over - resmon_limit: rss_growth_mb [0-9.]+ > 50$",
                     result.stdout, re.M), result.stdout
    workers = {(tmp_path / f"worker-{n}").read_text() for n in range(6)}
    assert len(workers) == 2, workers  # both workers ran tests
    tests = report(tmp_path)["tests"]
    assert sorted(tests) == sorted([f"test_generated.py::test_many[{n}]" for n in range(6)]
                                   + ["test_generated.py::test_over"])
    assert tests["test_generated.py::test_over"]["rss_growth_mb"] >= 99
    assert "resmon: 7 heaviest of 7 tests by memory growth" in result.stdout


def test_the_readmes_pytest_example(tmp_path):
    # The ini and test file of README.md's "In CI", verbatim: one test under
    # its limit, one over it, failing with the line the README shows.
    readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    blocks = dict(re.findall(r"^<!-- tests/readme runs this block with the (?:next|previous) one[^\n]*-->\n"
                             r"```(ini|python)\n(.*?)^```$", text, re.S | re.M))
    assert blocks.keys() == {"ini", "python"}
    (tmp_path / "pytest.ini").write_text(blocks["ini"])
    (tmp_path / "test_index.py").write_text(blocks["python"])
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--resmon",
                             "--resmon-json=resmon-tests.json"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=2 * SAFETY_SEC)
    assert re.search(r"\b1 failed, 1 passed\b", result.stdout), result.stdout
    assert "FAILED test_index.py::test_big_index" in result.stdout
    line = re.search(r"^resmon_limit: rss_growth_mb = ([0-9.]+) exceeds the limit of 50$", result.stdout, re.M)
    assert line and 120 <= float(line.group(1)) < 140 * SHADOW, result.stdout
    tests = report(tmp_path, "resmon-tests.json")["tests"]
    assert set(tests) == {"test_index.py::test_small_index", "test_index.py::test_big_index"}


# ---- each test charged with what its tree allocated (issue 31) -------------

# A conftest that holds 150 MiB for the whole session: pytest's own RSS, which
# a forked child inherits and a vfork+exec child's accounting used to carry.
CONFTEST_150 = """
big = bytearray(150 << 20)
big[::4096] = b"x" * len(range(0, len(big), 4096))
"""

NO_OPS = ALLOCATE_100 + """
        import multiprocessing, os, subprocess, pytest

        pytestmark = pytest.mark.resmon_limit(rss_growth_mb=10)

        def test_fork():
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            assert os.waitpid(pid, 0)[1] == 0

        def test_spawn():
            subprocess.run(["true"], check=True)

        def noop():
            pass

        def test_multiprocessing_fork():
            process = multiprocessing.get_context("fork").Process(target=noop)
            process.start()
            process.join()
            assert process.exitcode == 0
"""


def cgroup_records(tmp_path, result):
    """The report's records; skips when no leaf cgroup could be made here."""
    tests = report(tmp_path)["tests"]
    for record in tests.values():
        if record["measured_by"] != "cgroup":
            pytest.skip(f"no leaf cgroup can be made here: {record.get('cgroup_error')}")
    return tests


@pytest.mark.parametrize("xdist", [False, True], ids=["serial", "xdist"])
def test_children_that_allocate_nothing_are_charged_nothing_beside_a_big_pytest(tmp_path, xdist):
    (tmp_path / "conftest.py").write_text(CONFTEST_150)
    args = ["-p", "xdist", "-n", "2"] if xdist else []
    if xdist:
        pytest.importorskip("xdist")
    result = run_pytest(tmp_path, NO_OPS, *args, "--resmon-json=report.json")
    tests = cgroup_records(tmp_path, result)
    assert outcomes(result) == {"test_fork": "PASSED", "test_spawn": "PASSED",
                                "test_multiprocessing_fork": "PASSED"}, result.stdout
    for name, record in tests.items():
        assert record["rss_start_mb"] >= 150, (name, record)
        assert record["rss_growth_mb"] < 10, (name, record)
        assert record["peak_rss_mb"] == pytest.approx(record["rss_start_mb"] + record["rss_growth_mb"], abs=0.01)
        assert 0 <= record["retained_mb"] <= record["rss_growth_mb"], (name, record)


def test_a_pool_of_forked_workers_is_charged_each_page_once(tmp_path):
    # Two workers each write 100 MiB of their own: ~200, not 200 plus what
    # each inherited from pytest (the 150 MiB conftest).
    (tmp_path / "conftest.py").write_text(CONFTEST_150)
    result = run_pytest(tmp_path, ALLOCATE_100 + """
        import multiprocessing

        def work(n):
            block = allocate(100)
            return len(block)

        def test_pool():
            with multiprocessing.get_context("fork").Pool(2) as pool:
                assert pool.map(work, [0, 1], chunksize=1) == [100 << 20] * 2
    """, "--resmon-json=report.json")
    record = cgroup_records(tmp_path, result)["test_generated.py::test_pool"]
    assert outcomes(result) == {"test_pool": "PASSED"}, result.stdout
    # Each worker may run one or both tasks; a worker's second block can
    # reuse the first's pages: 100 to 200, plus the workers' own interpreters.
    assert 99 <= record["rss_growth_mb"] < 230 * SHADOW, record


def test_a_pool_whose_workers_hold_their_blocks_together_is_charged_200(tmp_path):
    # Each worker keeps its 100 MiB until both have written theirs (a
    # barrier): the test's peak is both at once, each page counted once.
    (tmp_path / "conftest.py").write_text(CONFTEST_150)
    result = run_pytest(tmp_path, ALLOCATE_100 + """
        import multiprocessing

        def work(barrier):
            block = allocate(100)
            barrier.wait()
            return len(block)

        def test_pool():
            context = multiprocessing.get_context("fork")
            barrier = context.Barrier(2)
            workers = [context.Process(target=work, args=(barrier,)) for _ in range(2)]
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join()
                assert worker.exitcode == 0
    """, "--resmon-json=report.json")
    record = cgroup_records(tmp_path, result)["test_generated.py::test_pool"]
    assert outcomes(result) == {"test_pool": "PASSED"}, result.stdout
    assert 199 <= record["rss_growth_mb"] < 230 * SHADOW, record


def test_a_double_forked_grandchild_is_caught_with_the_reason_in_the_short_summary(tmp_path, monkeypatch):
    # The child forks a grandchild and exits at once; the grandchild (no
    # longer a descendant of pytest) writes 200 MiB and holds them until the
    # test has seen it ready.  Pipes, not sleeps.
    monkeypatch.setenv("COLUMNS", "200")
    result = run_pytest(tmp_path, ALLOCATE_100 + """
        import os, pytest

        @pytest.mark.resmon_limit(rss_growth_mb=50)
        def test_grandchild():
            ready_r, ready_w = os.pipe()
            go_r, go_w = os.pipe()
            child = os.fork()
            if child == 0:
                if os.fork() == 0:
                    block = allocate(200)
                    os.write(ready_w, b"x")
                    os.read(go_r, 1)
                os._exit(0)
            os.waitpid(child, 0)
            assert os.read(ready_r, 1) == b"x"
            os.write(go_w, b"x")
            os.close(go_w)
    """, "--resmon-json=report.json")
    record = cgroup_records(tmp_path, result)["test_generated.py::test_grandchild"]
    assert outcomes(result) == {"test_grandchild": "FAILED"}, result.stdout
    assert record["rss_growth_mb"] >= 200, record
    assert re.search(r"^FAILED test_generated\.py::test_grandchild - resmon_limit: rss_growth_mb [0-9.]+ > 50$",
                     result.stdout, re.M), result.stdout


def test_pool_workers_of_an_earlier_tests_forkserver_are_not_missed_as_exact(tmp_path):
    # Attack 57b: multiprocessing's forkserver (the default from Python
    # 3.14), started by an earlier test, outlives it outside any leaf; the
    # pool workers it forks for a later test are never in that test's leaf:
    # 200 MiB of workers read as rss_growth_mb 0.8, "exact", and a limit of
    # 50 passed.  The sampled tree sees them: beside such a process, a tree
    # that rose more than the leaf was charged makes the memory figures
    # inexact, and no limit is applied to them (said in the warning).
    # The workers hold their pages until the pool ends, and the test waits
    # for the plugin's sampler to take two samples of them (under load the
    # next sample could come after the pool ended: it failed once, a CI run
    # beside it).
    result = run_pytest(tmp_path, ALLOCATE_100 + """
        import multiprocessing, time, pytest

        ctx = multiprocessing.get_context("forkserver")
        held = []

        def touch(mib):  # in a worker: its pages are the worker's alone, kept until it ends
            held.append(allocate(mib))
            return len(held[-1])

        def test_first():
            with ctx.Pool(1) as pool:
                pool.map(abs, [1])

        @pytest.mark.resmon_limit(rss_growth_mb=50)
        def test_second(request):
            monitor = request.config.pluginmanager.get_plugin("resmon-session").monitor
            with ctx.Pool(2) as pool:
                assert pool.map(touch, [100, 100]) == [100 << 20] * 2
                seen = monitor.summary.num_samples
                deadline = time.monotonic() + 60
                while monitor.summary.num_samples < seen + 2 and time.monotonic() < deadline:
                    time.sleep(0.005)
    """, "--resmon-json=report.json")
    tests = cgroup_records(tmp_path, result)
    second = tests["test_generated.py::test_second"]
    assert second["tree_peak_rss_mb"] - second["cgroup_peak_mb"] > 150, second  # the workers, outside the leaf
    assert second["rss_growth_mb"] < 50, second  # the leaf's: none of them
    assert second["exact"] is False, second
    # the workers' CPU is in no figure of the test's: not exact either (57c)
    assert second["cpu_sec_exact"] is False, second
    assert outcomes(result) == {"test_first": "PASSED", "test_second": "PASSED"}, result.stdout
    assert re.search(r"test_second ran beside work an earlier test left running: .*its rss_growth_mb, "
                     r"peak_rss_mb, retained_mb, tree_peak_rss_mb, cpu_sec may include", result.stdout), result.stdout


def test_a_fork_pool_of_the_tests_own_beside_an_idle_fixture_server_keeps_its_limits(tmp_path):
    # Review 57c: a session fixture's process (idle: it starts nothing) and
    # a test's own fork Pool(4) that allocates nothing: the workers' shared
    # pages made the sampled tree rise ~100 MiB against ~10 charged to the
    # leaf, and the test lost its exactness and its rss_growth_mb limit.
    # The pool's workers are the test's, in its leaf; the idle process
    # beside it started nothing.
    result = run_pytest(tmp_path, """
        import multiprocessing, os, subprocess, pytest

        @pytest.fixture(scope="session")
        def server():  # without a sanitizer's preload, whose start-up would run beside the test
            proc = subprocess.Popen(["sleep", "600"], env={k: v for k, v in os.environ.items() if k != "LD_PRELOAD"})
            yield proc
            proc.kill()
            proc.wait()

        @pytest.mark.resmon_limit(rss_growth_mb=50)
        def test_pool(server):
            with multiprocessing.get_context("fork").Pool(4) as pool:
                assert pool.map(abs, range(-8, 0)) == list(range(8, 0, -1))
    """, "--resmon-json=report.json")
    tests = cgroup_records(tmp_path, result)
    record = tests["test_generated.py::test_pool"]
    assert record["exact"] is True, record
    assert outcomes(result) == {"test_pool": "PASSED"}, result.stdout
    # Beside the server, only the figures it can enter go unlimited (not
    # cpu_sec: it still runs, unreaped, review 64 F1).
    assert re.search(r"test_pool ran beside work an earlier test left running: .*its tree_peak_rss_mb may "
                     r"include", result.stdout), result.stdout


GRANDCHILD_BURNS = """
    import os, time, pytest

    BURN = float(os.environ.get("BURN", "0.5"))

    @pytest.mark.resmon_limit(cpu_sec=float(os.environ.get("LIMIT", "0.3")))
    def test_grandchild():
        done_r, done_w = os.pipe()
        child = os.fork()
        if child == 0:
            if os.fork() == 0:
                start = time.process_time()
                while time.process_time() - start < BURN:
                    pass
                os.write(done_w, b"x")
            os._exit(0)
        os.close(done_w)
        os.waitpid(child, 0)
        assert os.read(done_r, 1) == b"x"
        assert os.read(done_r, 1) == b""  # the grandchild has exited (its end of the pipe closed)

    def test_plain():
        pass
"""


def test_a_double_forked_grandchilds_cpu_is_the_leafs_and_not_exact(tmp_path, monkeypatch):
    # Attack 57b: a grandchild (double-forked, reparented to init and reaped
    # there) burned 0.5 s that no getrusage of pytest counts: cpu_sec 0.04,
    # cpu_sec_exact true, and a limit of 0.3 passed.  The leaf's CPU clock
    # counts it.  The test waits for the grandchild's last act on a pipe.
    # Attack 63 F1: the report kept getrusage's 0.04 as cpu_sec, and
    # --resmon-compare passed the 0.5 s that resmon_limit failed: cpu_sec
    # is the leaf's figure now, getrusage's kept as cpu_sec_rusage.
    result = run_pytest(tmp_path, GRANDCHILD_BURNS, "--resmon-json=report.json")
    tests = cgroup_records(tmp_path, result)
    record = tests["test_generated.py::test_grandchild"]
    with open("/proc/self/mountinfo") as f:  # v2's leaf has cpu.stat; v1's needs a cpuacct hierarchy
        clock = any(" - cgroup2 " in line or (" - cgroup " in line and "cpuacct" in line.split()[-1].split(","))
                    for line in f)
    if not clock:
        pytest.skip("no CPU clock of a leaf here (cgroup v1 without cpuacct)")
    assert outcomes(result) == {"test_grandchild": "FAILED", "test_plain": "PASSED"}, result.stdout
    assert record["cpu_sec_rusage"] < 0.3 and record["cgroup_cpu_sec"] >= 0.5, record
    assert record["cpu_sec"] == record["cgroup_cpu_sec"], record
    assert record["cpu_sec_exact"] is False, record
    assert "resmon_limit: cpu_sec" in result.stdout, result.stdout
    # The gate judges the figure the limit judged (the limit itself out of
    # the way here: LIMIT).
    monkeypatch.setenv("LIMIT", "100")
    monkeypatch.setenv("BURN", "0")
    base = run_pytest(tmp_path, GRANDCHILD_BURNS, "--resmon-json=base.json")
    assert base.returncode == 0, base.stdout + base.stderr
    monkeypatch.setenv("BURN", "0.5")
    gate = run_pytest(tmp_path, GRANDCHILD_BURNS, "--resmon-compare=base.json",
                      "--resmon-compare-fail=test_generated.py::test_grandchild::cpu_sec=100%,0.1")
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert re.search(r"test_grandchild::cpu_sec .*EXCEEDED", gate.stdout), gate.stdout
    plain = tests["test_generated.py::test_plain"]
    assert plain["cpu_sec_exact"] is True and plain["cgroup_cpu_sec"] <= plain["cpu_sec"] + 0.01, plain


def test_the_short_summary_line_carries_the_limits_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    result = run_pytest(tmp_path, ALLOCATE_100 + """
        import pytest

        @pytest.mark.resmon_limit(rss_growth_mb=50, wall_sec=0)
        def test_over():
            allocate(100)
    """, "--resmon-json=report.json")
    record = report(tmp_path)["tests"]["test_generated.py::test_over"]
    line = (f"FAILED test_generated.py::test_over - resmon_limit: rss_growth_mb {record['rss_growth_mb']:.4g} > 50; "
            f"wall_sec {record['wall_sec']:.4g} > 0")
    assert line in result.stdout.splitlines(), result.stdout


def test_a_thread_left_running_is_named_and_not_charged_to_the_next_test(tmp_path):
    # test_leaves starts a thread that allocates 200 MiB only once
    # test_next_one has begun (an event it sets), then holds it until
    # test_next_one has seen it.
    result = run_pytest(tmp_path, ALLOCATE_100 + """
        import threading, pytest

        begun, allocated, done = threading.Event(), threading.Event(), threading.Event()

        def late():
            begun.wait()
            block = allocate(200)
            allocated.set()
            done.wait()

        def test_leaves():
            threading.Thread(target=late, name="late-allocator").start()

        @pytest.mark.resmon_limit(rss_growth_mb=50)
        def test_next_one():
            begun.set()
            assert allocated.wait(60)
            done.set()
    """, "--resmon-json=report.json")
    assert outcomes(result) == {"test_leaves": "PASSED", "test_next_one": "PASSED"}, result.stdout
    tests = report(tmp_path)["tests"]
    assert tests["test_generated.py::test_leaves"]["left_running"] == ["thread 'late-allocator'"]
    assert tests["test_generated.py::test_next_one"]["overlapped_by"] == [
        "thread 'late-allocator' (left by test_generated.py::test_leaves)"]
    assert "resmon: test_generated.py::test_leaves left running after it returned: thread 'late-allocator'" \
        in result.stdout
    assert "resmon: test_generated.py::test_next_one ran beside work an earlier test left running" in result.stdout


# test_leaves starts a child that touches 150 MiB when the next test writes
# go_w, says so on done_r, and holds them until pytest ends (EOF on go_r).
LEAVES_A_150_MIB_CHILD = """
        import os, subprocess, sys, pytest

        go_r, go_w = os.pipe()
        done_r, done_w = os.pipe()
        CHILD = ("import os\\n"
                 "block = bytearray(150 << 20)\\n"
                 f"os.read({go_r}, 1)\\n"
                 "block[::4096] = b'x' * len(range(0, len(block), 4096))\\n"
                 f"os.write({done_w}, b'x')\\n"
                 f"os.read({go_r}, 1)\\n")  # EOF: pytest ended

        def test_leaves():
            subprocess.Popen([sys.executable, "-c", CHILD], pass_fds=(go_r, done_w))
"""


@pytest.mark.parametrize("cgroup", ["auto", "no"])
def test_a_process_left_running_is_not_charged_to_the_next_tests_tree_or_cpu(tmp_path, cgroup):
    # Stop 54's attack on issue 28: in a leaf, a process an earlier test
    # left running was outside the leaf but inside the sampled tree, and its
    # 150 MiB failed the next test's tree_peak_rss_mb limit, without a word
    # of overlap.  The child allocates when test_next_one says go and holds
    # it until pytest ends, so the window's last sample sees it.
    result = run_pytest(tmp_path, LEAVES_A_150_MIB_CHILD + """

        @pytest.mark.resmon_limit(tree_peak_rss_mb=100, cpu_sec=0.001)
        def test_next_one():
            os.write(go_w, b"x")
            assert os.read(done_r, 1) == b"x"
    """, "--resmon-json=report.json", ini=f"resmon_cgroup = {cgroup}\n")
    assert outcomes(result) == {"test_leaves": "PASSED", "test_next_one": "PASSED"}, result.stdout
    tests = report(tmp_path)["tests"]
    left = tests["test_generated.py::test_leaves"]["left_running"]
    assert len(left) == 1 and left[0].startswith("process "), left
    nxt = tests["test_generated.py::test_next_one"]
    assert nxt["tree_peak_rss_mb"] > 100, nxt  # the child's pages, seen
    assert nxt["overlapped_by"] == [f"{left[0]} (left by test_generated.py::test_leaves)"], nxt
    assert "resmon: test_generated.py::test_next_one ran beside work an earlier test left running" in result.stdout
    assert "no limit on them is applied" in result.stdout


@pytest.mark.parametrize("cgroup", ["auto", "no"])
def test_a_process_an_unmeasured_test_left_running_is_not_charged_to_a_measured_one(tmp_path, cgroup):
    # Stop 54's second attack: without --resmon only marked tests are
    # measured, so a process an unmarked test left was never named, and its
    # 150 MiB failed the next test's tree_peak_rss_mb limit, unsaid.
    result = run_pytest(tmp_path, LEAVES_A_150_MIB_CHILD + """

        @pytest.mark.resmon_limit(tree_peak_rss_mb=100)
        def test_measured():
            os.write(go_w, b"x")
            assert os.read(done_r, 1) == b"x"
    """, ini=f"resmon_cgroup = {cgroup}\n")
    assert outcomes(result) == {"test_leaves": "PASSED", "test_measured": "PASSED"}, result.stdout
    assert re.search(r"resmon: test_generated.py::test_measured ran beside work an earlier test left running: "
                     r"process \d+ \(python3?[^)]*\) \(running when the test began\)", result.stdout), result.stdout


def test_a_thread_running_beside_a_test_that_no_measured_test_left_is_not_charged_to_it(tmp_path):
    # Attack 58: a session fixture's busy thread, started before the test,
    # put its CPU in the test's cpu_sec (0.69 s against a limit of 0.3:
    # FAILED), "exact", with no word of it -- stop 54's rule for processes
    # did not cover threads.  Its CPU is taken out of cpu_sec (said in
    # beside_threads_cpu_sec); a thread that ran over 10 ms or touched
    # memory during the call is named and the figures it enters judge
    # nothing; an idle one (most session threads, xdist's channel) is in no
    # figure.
    result = run_pytest(tmp_path, """
        import threading, time
        import pytest

        go, burned, stop, idle_stop, grow, grown = (threading.Event() for _ in range(6))
        held = []

        def burn():  # 0.2 s of CPU once go is set, then idle, alive (one that ends in the call is unknown)
            start = None
            while True:
                go.wait()
                if stop.is_set():
                    return
                start = time.thread_time() if start is None else start
                sum(range(1000))
                if time.thread_time() - start > 0.2:
                    go.clear()
                    burned.set()

        def allocate():
            grow.wait()
            held.append(bytearray(64 << 20))  # zeroed pages: touched
            grown.set()
            idle_stop.wait()  # alive after: named by its page faults, not for ending in the call

        @pytest.fixture(scope="session")
        def server():
            threads = [threading.Thread(target=burn, name="busy", daemon=True),
                       threading.Thread(target=idle_stop.wait, name="idle", daemon=True),
                       threading.Thread(target=allocate, name="grower", daemon=True)]
            for t in threads:
                t.start()
            yield
            stop.set()
            go.set()
            idle_stop.set()
            grow.set()
            for t in threads:
                t.join()

        @pytest.mark.resmon_limit(cpu_sec=10)
        def test_quiet(server):
            pass

        @pytest.mark.resmon_limit(cpu_sec=0.1)
        def test_beside_a_busy_thread(server):
            go.set()
            assert burned.wait(60)

        @pytest.mark.resmon_limit(rss_growth_mb=16)
        def test_beside_a_growing_thread(server):
            grow.set()
            assert grown.wait(60)
    """, "--resmon-json=report.json")
    assert outcomes(result) == {"test_quiet": "PASSED", "test_beside_a_busy_thread": "PASSED",
                                "test_beside_a_growing_thread": "PASSED"}, result.stdout
    tests = report(tmp_path)["tests"]
    quiet = tests["test_generated.py::test_quiet"]
    assert "overlapped_by" not in quiet and quiet["cpu_sec_exact"], quiet
    busy = tests["test_generated.py::test_beside_a_busy_thread"]
    assert busy["beside_threads_cpu_sec"] > 0.15, busy
    assert busy["cpu_sec"] < 0.1, busy  # its own threads': the busy thread's is taken out ...
    # ... and named: it may have done the test's work (a session pool), so
    # no limit judges cpu_sec (review 58b)
    assert busy["overlapped_by"] == ["thread 'busy' (running when the test began)"], busy
    assert busy["cpu_sec_exact"] is False, busy
    grower = tests["test_generated.py::test_beside_a_growing_thread"]
    assert grower["overlapped_by"] == ["thread 'grower' (running when the test began)"], grower
    assert grower["exact"] is False and grower["rss_growth_mb"] > 16, grower
    assert "resmon: test_generated.py::test_beside_a_growing_thread ran beside work an earlier test left " \
        "running: thread 'grower'" in result.stdout
    # What no limit judged is said in the record, for a gate to leave alone.
    assert "cpu_sec" in busy["unjudged"] and not [k for k in busy["unjudged"] if k.endswith("_mb")], busy
    assert {"cpu_sec", "rss_growth_mb", "peak_rss_mb"} <= set(grower["unjudged"]), grower
    assert grower.get("cgroup_peak_mb") is None or "cgroup_peak_mb" in grower["unjudged"], grower
    assert "unjudged" not in quiet, quiet


def test_an_idle_process_beside_leaves_cpu_sec_judged(tmp_path, monkeypatch):
    # Review 64 F1: a session fixture's sleeping server put cpu_sec in every
    # test's unjudged, and the gate judged cpu_sec nowhere (a 12x rise
    # passed).  A process beside enters cpu_sec only when pytest reaps it.
    (tmp_path / "conftest.py").write_text(textwrap.dedent("""
        import os, subprocess, pytest

        @pytest.fixture(scope="session", autouse=True)
        def server():  # without a sanitizer's preload, whose start-up would run beside the test
            p = subprocess.Popen(["sleep", "1000"], env={k: v for k, v in os.environ.items() if k != "LD_PRELOAD"})
            yield
            p.kill()
            p.wait()
    """))
    source = """
        import os, time

        def test_a():
            start = time.process_time()
            while time.process_time() - start < float(os.environ.get("BURN", "0.05")):
                pass

        def test_b():
            pass
    """
    base = run_pytest(tmp_path, source, "--resmon-json=base.json")
    assert base.returncode == 0, base.stdout + base.stderr
    record = report(tmp_path, "base.json")["tests"]["test_generated.py::test_a"]
    assert record["overlapped_by"] and "cpu_sec" not in record.get("unjudged", []), record
    monkeypatch.setenv("BURN", "0.6")
    gate = run_pytest(tmp_path, source, "--resmon-compare=base.json", "--resmon-compare-fail=cpu_sec=30%,0.1")
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert re.search(r"test_a::cpu_sec .*EXCEEDED", gate.stdout), gate.stdout


def test_a_threading_server_beside_that_did_the_tests_work_takes_cpu_sec(tmp_path):
    # Review 65: a session fixture's server answering on a new thread each
    # time burned 0.4 s for the test in threads that had ended by the end
    # of the call: a sum over the live threads saw none of it, and
    # cpu_sec 0.02 passed a limit of 0.2, "exact".  The process's CPU clock
    # counts ended threads too.
    (tmp_path / "conftest.py").write_text(textwrap.dedent("""
        import subprocess, sys, pytest

        SERVER = '''
        import sys, threading, time
        def work():
            start = time.process_time()
            while time.process_time() - start < 0.4:
                pass
        print("ready", flush=True)
        for line in sys.stdin:
            thread = threading.Thread(target=work)
            thread.start()
            thread.join()  # ended before the answer: only the process's clock holds its work
            print("done", flush=True)
        '''

        @pytest.fixture(scope="session")
        def server():
            p = subprocess.Popen([sys.executable, "-c", textwrap.dedent(SERVER)], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)
            assert p.stdout.readline() == "ready\\n"  # started: idle until asked
            yield p
            p.kill()
            p.wait()
    """).replace("import subprocess, sys, pytest", "import subprocess, sys, textwrap, pytest"))
    result = run_pytest(tmp_path, """
        import pytest

        @pytest.mark.resmon_limit(cpu_sec=0.2)
        def test_asks_the_server(server):
            server.stdin.write("go\\n")
            server.stdin.flush()
            assert server.stdout.readline() == "done\\n"
    """, "--resmon-json=report.json")
    record = report(tmp_path)["tests"]["test_generated.py::test_asks_the_server"]
    assert "cpu_sec" in record["unjudged"], record
    assert outcomes(result) == {"test_asks_the_server": "PASSED"}, result.stdout


def test_a_gate_leaves_alone_what_the_plugins_limits_left_alone(tmp_path, monkeypatch):
    # Attack 63 F2: a session fixture's thread faulted in 100 MiB while
    # test_b ran; the plugin applied no limit to test_b's memory (a
    # warning), yet --resmon-compare failed the session on it.
    (tmp_path / "conftest.py").write_text(textwrap.dedent("""
        import os, threading, pytest
        held, done = [], threading.Event()

        @pytest.fixture(scope="session")
        def server():
            go = threading.Event()
            def run():
                go.wait()
                if os.environ.get("ALLOC"):
                    held.append(bytearray(100 << 20))
                    for i in range(0, 100 << 20, 4096):
                        held[-1][i] = 1
                done.set()
            threading.Thread(target=run, name="server", daemon=True).start()
            yield go
    """))
    source = """
        import conftest

        def test_a(server):
            pass

        def test_b(server):
            server.set()
            assert conftest.done.wait(60)
    """
    base = run_pytest(tmp_path, source, "--resmon-json=base.json")
    assert base.returncode == 0, base.stdout + base.stderr
    monkeypatch.setenv("ALLOC", "1")
    gate = run_pytest(tmp_path, source, "--resmon-json=report.json", "--resmon-compare=base.json",
                      "--resmon-compare-fail=rss_growth_mb=20%,8")
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert "test_b ran beside work" in gate.stdout, gate.stdout
    assert "rss_growth_mb" in report(tmp_path)["tests"]["test_generated.py::test_b"]["unjudged"]
    assert "rss_growth_mb=20%,8 not judged in 1 test that ran beside other work (unjudged in the record, as " \
           "resmon_limit leaves it): test_generated.py::test_b" in gate.stdout, gate.stdout


def test_a_session_fixtures_own_monitor_runs_beside_a_test_and_one_a_test_leaves_is_named(tmp_path):
    # Attack 59: the plugin left out of the threads beside a test every
    # thread named "resmon-", taking them for its own monitor's; a session
    # fixture's ResourceMonitor sampled beside every test, its CPU in the
    # test's cpu_sec, "exact" (0.072 s for a sleep, a limit of 0.02 failed),
    # and a monitor a test left running was never named.  Only the plugin's
    # own monitor's threads are left out now.
    result = run_pytest(tmp_path, """
        import os, time
        import pytest
        import resmon

        fixture_threads, left = [], []

        def resmon_threads():
            found = set()
            for tid in os.listdir("/proc/self/task"):
                with open(f"/proc/self/task/{tid}/comm") as f:
                    if f.read().startswith("resmon-"):
                        found.add(tid)
            return found

        def cpu_ns(tids):
            total = 0
            for tid in tids:
                with open(f"/proc/self/task/{tid}/schedstat") as f:
                    total += int(f.read().split()[0])
            return total

        @pytest.fixture(scope="session")
        def session_monitor():
            before = resmon_threads()
            with resmon.ResourceMonitor(0.001, pid=os.getpid(), include_children=True) as m:
                fixture_threads.extend(resmon_threads() - before)
                yield m
            for monitor in left:
                monitor.__exit__(None, None, None)

        @pytest.mark.resmon_limit(cpu_sec=0.03)
        def test_beside_a_fixtures_monitor(session_monitor):
            start = cpu_ns(fixture_threads)
            deadline = time.monotonic() + 60
            while cpu_ns(fixture_threads) - start < 50_000_000 and time.monotonic() < deadline:
                time.sleep(0.02)
            assert cpu_ns(fixture_threads) - start >= 50_000_000

        def test_leaves_a_monitor_running(session_monitor):
            left.append(resmon.ResourceMonitor(0.1).__enter__())
    """, "--resmon-json=report.json")
    assert outcomes(result) == {"test_beside_a_fixtures_monitor": "PASSED",
                                "test_leaves_a_monitor_running": "PASSED"}, result.stdout
    tests = report(tmp_path)["tests"]
    beside = tests["test_generated.py::test_beside_a_fixtures_monitor"]
    assert beside["beside_threads_cpu_sec"] >= 0.05, beside
    # taken out of cpu_sec, and named: a limit judges cpu_sec no more (its
    # 0.03 failed at 0.0998 before, "exact")
    assert beside["cpu_sec_exact"] is False, beside
    assert "thread 'resmon-sampler' (running when the test began)" in beside["overlapped_by"], beside
    leaves = tests["test_generated.py::test_leaves_a_monitor_running"]
    assert "thread 'resmon-sampler'" in leaves["left_running"], leaves


# For a generated test: its own memory cgroup (a test's leaf, as root) and
# the file that bounds it.
OWN_MEMORY_CGROUP = """
        import os

        def own_memory_cgroup():
            for line in open("/proc/self/cgroup"):
                _, controllers, path = line.rstrip("\\n").split(":", 2)
                if controllers == "":
                    return "/sys/fs/cgroup" + path, "memory.max"
                if "memory" in controllers.split(","):
                    return "/sys/fs/cgroup/memory" + path, "memory.limit_in_bytes"
"""


def test_a_pool_a_test_left_is_judged_by_what_its_threads_did_in_all(tmp_path):
    # Review 58c: a pool a measured test started and left idle took every
    # limit from every later test (a thread left running tainted them all,
    # whatever it did); and a pool's 16 threads at 8 ms each hid 0.13 s of a
    # test's work under a bound of 10 ms a thread.  Left threads are judged
    # by what they did in the call, and the bound is on all of them.
    result = run_pytest(tmp_path, ALLOCATE_100 + """
        import concurrent.futures, threading, time
        import pytest

        pool = concurrent.futures.ThreadPoolExecutor(16)
        gate = threading.Barrier(17)

        def spin(sec):
            start = time.thread_time()
            while time.thread_time() - start < sec:
                pass

        def test_starts_a_pool():
            for _ in range(16):
                pool.submit(gate.wait)
            gate.wait()  # 16 threads started, idle again soon

        @pytest.mark.resmon_limit(rss_growth_mb=10)
        def test_grows_beside_the_idle_pool():
            time.sleep(0.2)  # the pool's threads settle idle
            block = allocate(100)

        @pytest.mark.resmon_limit(cpu_sec=0.05)
        def test_hands_work_to_the_pool():
            for _ in range(16):
                pool.submit(gate.wait)
            gate.wait()  # each of the 16 threads takes one task
            list(pool.map(spin, [0.008] * 16))
    """, "--resmon", "--resmon-json=report.json")
    assert outcomes(result) == {"test_starts_a_pool": "PASSED", "test_grows_beside_the_idle_pool": "FAILED",
                                "test_hands_work_to_the_pool": "PASSED"}, result.stdout
    assert "resmon_limit: rss_growth_mb" in result.stdout
    tests = report(tmp_path)["tests"]
    assert len(tests["test_generated.py::test_starts_a_pool"]["left_running"]) == 16
    assert "overlapped_by" not in tests["test_generated.py::test_grows_beside_the_idle_pool"]
    handed = tests["test_generated.py::test_hands_work_to_the_pool"]
    assert handed["beside_threads_cpu_sec"] > 0.1 and handed["cpu_sec_exact"] is False, handed
    assert all(w.endswith("(left by test_generated.py::test_starts_a_pool)") for w in handed["overlapped_by"])


def test_a_session_run_on_another_thread_keeps_its_tests_own_cpu(tmp_path):
    # Review 58b: pytest.main run on a thread other than the main one (a
    # harness, pytest-run-parallel) had the test's own thread counted as one
    # beside it and its CPU taken out: 0.5 s passed a limit of 0.2 as 0.01,
    # "exact".
    (tmp_path / "test_generated.py").write_text(textwrap.dedent("""
        import time
        import pytest

        @pytest.mark.resmon_limit(cpu_sec=0.1)
        def test_burns():
            start = time.thread_time()
            while time.thread_time() - start < 0.3:
                pass
    """))
    (tmp_path / "harness.py").write_text(textwrap.dedent("""
        import sys, threading
        import pytest
        status = []
        runner = threading.Thread(target=lambda: status.append(pytest.main(
            ["-p", "no:cacheprovider", "--resmon-json=report.json", "test_generated.py"])))
        runner.start()
        runner.join()
        sys.exit(int(status[0]))
    """))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
    result = subprocess.run([sys.executable, "harness.py"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=2 * SAFETY_SEC, env=env)
    assert result.returncode == 1, result.stdout + result.stderr
    record = report(tmp_path)["tests"]["test_generated.py::test_burns"]
    assert record["cpu_sec"] > 0.25 and "overlapped_by" not in record, record


def test_a_process_the_oom_killer_killed_in_a_tests_leaf_is_counted_in_its_record(tmp_path):
    # Attack 58: the plugin removed the test's leaf, whose count is on
    # cgroup v1 the only one (the victim's cgroup's), and its record said
    # nothing: under `resmon --memory-limit -- pytest --resmon` a test's
    # child killed for memory left no trace.  The leaf's count is read
    # before its removal.  The test bounds its own leaf (root may) and
    # starts a child that takes more.
    if os.environ.get("RESMON_TEST_SANITIZED"):
        # ASan in pytest and the child charges its shadow to the bounded
        # leaf: the OOM killer took pytest itself (CI56's ASan stage)
        pytest.skip("the OOM killer's choice in a 64 MiB leaf is a sanitizer's shadow's to make")
    result = run_pytest(tmp_path, OWN_MEMORY_CGROUP + """
        import subprocess, sys

        def test_child_killed():
            where, bound = own_memory_cgroup()
            with open(os.path.join(where, bound), "w") as f:
                f.write(str(64 << 20))
            child = subprocess.run([sys.executable, "-c",
                                    "x = bytearray(300 << 20)\\nfor i in range(0, len(x), 4096): x[i] = 1"])
            assert child.returncode == -9
    """, "--resmon", "--resmon-json=report.json")
    record = report(tmp_path)["tests"].get("test_generated.py::test_child_killed", {})
    if "cgroup_peak_mb" not in record:
        pytest.skip(f"no leaf cgroup for the test here: {record.get('cgroup_error')}")
    assert outcomes(result) == {"test_child_killed": "PASSED"}, result.stdout
    assert record["oom_kills"] == 1, record
    assert "the OOM killer killed 1 process(es) of the test" in result.stdout


def test_a_process_a_test_leaves_in_a_cgroup_below_its_leaf_is_left_by_that_test(tmp_path):
    # Attack 58: the leaf's "left" processes were its own cgroup.procs: a
    # child the test moved into a cgroup it made below (a job's) was named
    # by the next test "running when the test began", by no test as left.
    result = run_pytest(tmp_path, OWN_MEMORY_CGROUP + """
        import subprocess

        go_r, go_w = os.pipe()

        def test_leaves_a_job():
            job = os.path.join(own_memory_cgroup()[0], "job")
            os.mkdir(job)
            child = subprocess.Popen(["sh", "-c", "read x"], stdin=go_r)
            with open(os.path.join(job, "cgroup.procs"), "w") as f:
                f.write(str(child.pid))

        def test_next():
            os.write(go_w, b"\\n")
    """, "--resmon", "--resmon-json=report.json")
    tests = report(tmp_path)["tests"]
    first = tests.get("test_generated.py::test_leaves_a_job", {})
    if "cgroup_peak_mb" not in first:
        pytest.skip(f"no leaf cgroup for the test here: {first.get('cgroup_error')}")
    assert outcomes(result) == {"test_leaves_a_job": "PASSED", "test_next": "PASSED"}, result.stdout
    left = first["left_running"]
    assert len(left) == 1 and left[0].startswith("process ") and "(sh)" in left[0], first
    assert tests["test_generated.py::test_next"]["overlapped_by"] == [
        f"{left[0]} (left by test_generated.py::test_leaves_a_job)"], tests


def test_cgroups_a_test_nests_in_its_leaf_are_removed_or_said(tmp_path):
    # Attacks 73, 74: 20 levels (a .hidden one among them) and 22 of
    # 200-byte names (past PATH_MAX) are removed with the leaf; past 64
    # levels the leaf is left, and said in those words.
    result = run_pytest(tmp_path, OWN_MEMORY_CGROUP + """
        def nest(levels, length):
            fd = os.open(own_memory_cgroup()[0], os.O_RDONLY | os.O_DIRECTORY)
            for i in range(levels):
                name = ".hidden" if i == 3 else str(i % 10) * length
                os.mkdir(name, dir_fd=fd)
                fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)

        def test_twenty_levels():
            nest(20, 1)

        def test_past_path_max():
            nest(22, 200)

        def test_seventy_levels():
            nest(70, 1)
    """, "--resmon", "--resmon-json=report.json")
    tests = report(tmp_path)["tests"]
    if "cgroup_peak_mb" not in tests.get("test_generated.py::test_twenty_levels", {}):
        pytest.skip("no leaf cgroup for the test here")
    assert outcomes(result) == {"test_twenty_levels": "PASSED", "test_past_path_max": "PASSED",
                                "test_seventy_levels": "PASSED"}, result.stdout
    said = re.findall(r"PytestWarning: resmon: the cgroup (\S+) (.*)", result.stdout)
    assert [why for _, why in said] == ["is left: the cgroups the test made in it nest more than 64 levels deep, "
                                        "past what resmon follows; what runs there is not seen, and any limit "
                                        "still binds it (remove them, deepest first, with rmdir, once nothing "
                                        "runs there)"], \
        result.stdout
    leaf = said[0][0]
    parent = os.open(os.path.dirname(leaf), os.O_RDONLY | os.O_DIRECTORY)
    try:
        _remove_cgroup_tree(parent, os.path.basename(leaf))
    finally:
        os.close(parent)


def _remove_cgroup_tree(parent_fd, name):
    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=parent_fd)
    try:
        for entry in os.listdir(fd):
            if stat.S_ISDIR(os.stat(entry, dir_fd=fd, follow_symlinks=False).st_mode):
                _remove_cgroup_tree(fd, entry)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent_fd)


def test_pytest_a_test_put_under_a_limit_below_its_leaf_leaves_it(tmp_path):
    # Attack 59: a test moved the pytest process into a cgroup it made below
    # its leaf with a limit of its own; the limit kept every process there,
    # pytest too, so the rest of the session ran under the test's bound (the
    # next test's leaf was made below it, and the OOM killer took pytest),
    # and the plugin said the test left processes running.  Only the
    # plugin's own process leaves a cgroup a limit keeps.
    result = run_pytest(tmp_path, OWN_MEMORY_CGROUP + """
        def test_moves_pytest_under_a_limit():
            where, bound = own_memory_cgroup()
            job = os.path.join(where, "job")
            os.mkdir(job)
            with open(os.path.join(job, bound), "w") as f:
                f.write(str(1 << 30))
            with open(os.path.join(job, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
            assert own_memory_cgroup()[0] == job

        def test_next():
            assert "/job" not in own_memory_cgroup()[0]
    """, "--resmon", "--resmon-json=report.json")
    tests = report(tmp_path)["tests"]
    first = tests.get("test_generated.py::test_moves_pytest_under_a_limit", {})
    if "cgroup_peak_mb" not in first:
        pytest.skip(f"no leaf cgroup for the test here: {first.get('cgroup_error')}")
    assert outcomes(result) == {"test_moves_pytest_under_a_limit": "PASSED", "test_next": "PASSED"}, result.stdout
    assert "left_running" not in first, first
    assert "still holds processes" not in result.stdout


LEAVES_THE_LEAF = OWN_MEMORY_CGROUP + """
        import subprocess, sys, time
        import pytest

        def outside():
            # v1: the leaf's parent; v2 keeps no process beside a child
            # cgroup (the parent has the leaf): its root
            where, bound = own_memory_cgroup()
            return os.path.dirname(where) if bound == "memory.limit_in_bytes" else "/sys/fs/cgroup"

        def move(pid, to):
            with open(os.path.join(to, "cgroup.procs"), "w") as f:
                f.write(str(pid))

        TOUCH = ("import time\\nx = bytearray(200 << 20)\\nfor i in range(0, len(x), 4096): x[i] = 1\\n"
                 "time.sleep(0.5)")
        children = []

        @pytest.mark.resmon_limit(rss_growth_mb=100)
        def test_out_and_back():
            leaf = own_memory_cgroup()[0]
            move(os.getpid(), outside())
            subprocess.run([sys.executable, "-c", TOUCH], check=True)
            move(os.getpid(), leaf)

        @pytest.mark.resmon_limit(rss_growth_mb=100)
        def test_child_moves_itself_out():
            subprocess.run([sys.executable, "-c", f"import os\\nopen({outside()!r} + '/cgroup.procs', 'w')"
                            f".write(str(os.getpid()))\\n{TOUCH}"], check=True)

        @pytest.mark.resmon_limit(rss_growth_mb=100)
        def test_pytest_stays_out():
            move(os.getpid(), outside())
            subprocess.run([sys.executable, "-c", TOUCH], check=True)

        def test_child_left_running_outside():
            burn = "t = time.process_time()\\nwhile time.process_time() - t < 0.5: pass\\n"
            children.append(subprocess.Popen([sys.executable, "-c", f"import os, time\\n"
                                              f"open({outside()!r} + '/cgroup.procs', 'w').write(str(os.getpid()))"
                                              f"\\n{burn}print(flush=True)\\ntime.sleep(30)"],
                                             stdout=subprocess.PIPE))
            children[0].stdout.readline()  # it burned its 0.5 s and sleeps, outside the leaf

        def test_next():
            children[0].kill()
            children[0].wait()

        @pytest.mark.resmon_limit(rss_growth_mb=100)
        def test_stays_in():
            subprocess.run([sys.executable, "-c", TOUCH.replace("200 <<", "20 <<")], check=True)
"""


def test_a_test_whose_processes_leave_its_leaf_is_judged_on_what_they_used(tmp_path):
    # Finding F2: a test that ran its child from outside its leaf (pytest
    # moved to the parent cgroup and back) passed a limit of 50 MiB with
    # rss_growth_mb 0.25, "exact", its child's 200 MiB charged elsewhere.
    # The leaf is not the test's whole figure when its processes left it:
    # the pytest process outside it at the end, a child running outside it
    # then, or page faults of pytest and its reaped children that the leaf
    # did not count; the sampled tree's rise is judged then, not exact.  A
    # child left running outside it is named left, its CPU in cpu_sec.
    result = run_pytest(tmp_path, LEAVES_THE_LEAF, "--resmon-json=report.json")
    tests = report(tmp_path)["tests"]
    if "cgroup_peak_mb" not in tests.get("test_generated.py::test_stays_in", {}):
        pytest.skip(f"no leaf cgroup for the test here: {tests.get('test_generated.py::test_stays_in')}")
    assert outcomes(result) == {"test_out_and_back": "FAILED", "test_child_moves_itself_out": "FAILED",
                                "test_pytest_stays_out": "FAILED", "test_child_left_running_outside": "PASSED",
                                "test_next": "PASSED", "test_stays_in": "PASSED"}, result.stdout + result.stderr
    for name in ("test_out_and_back", "test_child_moves_itself_out", "test_pytest_stays_out"):
        record = tests[f"test_generated.py::{name}"]
        assert record["cgroup_peak_mb"] < 50 and record["rss_growth_mb"] > 150, (name, record)
        assert record["exact"] is False and record["left_leaf"], (name, record)
        assert record["peak_rss_mb"] == record["rss_start_mb"] + record["rss_growth_mb"], record
        assert f"resmon: test_generated.py::{name}: processes of the test left its leaf cgroup" in result.stdout
        # its child's CPU is pytest's reaped children's, wherever it ran
        assert record["cpu_sec"] >= 0.05, record
    assert "the pytest process (outside the leaf at the end)" in \
        tests["test_generated.py::test_pytest_stays_out"]["left_leaf"]
    assert "page faults" in tests["test_generated.py::test_out_and_back"]["left_leaf"][0]
    left = tests["test_generated.py::test_child_left_running_outside"]
    assert len(left["left_running"]) == 1 and "(python" in left["left_running"][0], left
    assert left["left_leaf"] == [f"{left['left_running'][0]} (outside the leaf at the end)"], left
    assert left["cpu_sec"] >= 0.45 and left["cpu_sec_exact"] is False and left["exact"] is False, left
    assert tests["test_generated.py::test_next"]["overlapped_by"] == [
        f"{left['left_running'][0]} (left by test_generated.py::test_child_left_running_outside)"], tests
    assert "left_leaf" not in tests["test_generated.py::test_next"], tests
    within = tests["test_generated.py::test_stays_in"]
    assert "left_leaf" not in within and within["exact"] is True, within


def test_a_zombie_is_left_running_by_no_test(tmp_path):
    # Stop 54's attack: without a leaf, test_one's child, ended but not yet
    # reaped, was named "left running" by test_two (a zombie's key differs).
    result = run_pytest(tmp_path, """
        import os, subprocess

        go_r, go_w = os.pipe()
        children = []

        def test_one():
            children.append(subprocess.Popen(["sh", "-c", "read x"], stdin=go_r))  # dash takes one-digit fds only

        def test_two():
            os.write(go_w, b"\\n")
            os.waitid(os.P_PID, children[0].pid, os.WEXITED | os.WNOWAIT)  # ended, not reaped: a zombie
    """, "--resmon-json=report.json", ini="resmon_cgroup = no\n")
    assert outcomes(result) == {"test_one": "PASSED", "test_two": "PASSED"}, result.stdout
    tests = report(tmp_path)["tests"]
    assert "left_running" in tests["test_generated.py::test_one"], tests
    assert "left_running" not in tests["test_generated.py::test_two"], tests
    assert "test_two left running" not in result.stdout


# A child that burns 0.5 s of CPU once it reads a byte from stdin; the test
# that starts it waits for its end without reaping it (a zombie).
BURNS_WHEN_TOLD = """
        import os, subprocess, sys, pytest

        BURN = ("import os, time\\n"
                "os.read(0, 1)\\n"
                "start = time.process_time()\\n"
                "while time.process_time() - start < 0.5:\\n"
                "    pass\\n")
        children = []

        def start_child():
            go_r, go_w = os.pipe()
            children.append((subprocess.Popen([sys.executable, "-c", BURN], stdin=go_r), go_w))
            os.close(go_r)

        def let_it_burn_and_end():
            child, go_w = children[0]
            os.write(go_w, b"x")
            os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # ended, not reaped: a zombie
"""


@pytest.mark.parametrize("cgroup", ["auto", "no"])
def test_a_zombie_is_charged_to_the_test_it_ran_in_not_the_one_that_reaps_it(tmp_path, cgroup):
    # Stop 56's attack: test_a's child ended unreaped; test_b reaped it and
    # its CPU joined RUSAGE_CHILDREN there: test_b, 0.05 s of wall time,
    # failed a cpu_sec limit of 0.3 with 0.84 s, and test_a said 0.03.
    result = run_pytest(tmp_path, BURNS_WHEN_TOLD + """

        def test_a():
            start_child()
            let_it_burn_and_end()

        @pytest.mark.resmon_limit(cpu_sec=0.3)
        def test_b():
            assert children[0][0].wait() == 0
    """, "--resmon-json=report.json", ini=f"resmon_cgroup = {cgroup}\n")
    assert outcomes(result) == {"test_a": "PASSED", "test_b": "PASSED"}, result.stdout
    tests = report(tmp_path)["tests"]
    a, b = tests["test_generated.py::test_a"], tests["test_generated.py::test_b"]
    # 0.5 s, read to the clock tick: within one tick, and said so
    assert a["cpu_sec"] >= 0.46 and a["cpu_sec_exact"] is False and a["cpu_sec_error_sec"] > 0, a
    assert b["cpu_sec"] < 0.3 and b["cpu_sec_exact"] is False and b["cpu_sec_error_sec"] > 0, b
    for record in (a, b):
        assert "left_running" not in record and "overlapped_by" not in record, record


def test_a_child_left_running_that_ends_in_a_later_test_is_charged_to_no_later_test(tmp_path):
    # test_leaves leaves its child running: test_ends runs beside it (no
    # limit on cpu_sec) and it ends there unreaped; test_reaps reaps it and
    # is charged none of it.
    result = run_pytest(tmp_path, BURNS_WHEN_TOLD + """

        def test_leaves():
            start_child()

        def test_ends():
            let_it_burn_and_end()

        @pytest.mark.resmon_limit(cpu_sec=0.3)
        def test_reaps():
            assert children[0][0].wait() == 0
    """, "--resmon-json=report.json")
    assert outcomes(result) == {"test_leaves": "PASSED", "test_ends": "PASSED", "test_reaps": "PASSED"}, \
        result.stdout
    tests = report(tmp_path)["tests"]
    assert "left_running" in tests["test_generated.py::test_leaves"], tests
    assert "overlapped_by" in tests["test_generated.py::test_ends"], tests
    reaps = tests["test_generated.py::test_reaps"]
    assert reaps["cpu_sec"] < 0.3 and reaps["cpu_sec_exact"] is False, reaps  # taken out, to the tick
    assert "overlapped_by" not in reaps, reaps


def test_a_test_that_reaps_many_zombies_is_not_failed_by_their_rounding(tmp_path):
    # Stop 56's last attack: the zombies' CPU is read to the clock tick and
    # the kernel adds the exact time at the reap, so the test that reaped
    # 100 of an earlier test's was charged their rounded-off remainders
    # (0.98 s for 0.016 s, over its limit, "exact").  Each zombie's tick is
    # the figure's error, said, and the limit judges the figure less it.
    result = run_pytest(tmp_path, """
        import os, subprocess, sys, pytest
        children = []

        def test_a():
            for _ in range(40):
                children.append(subprocess.Popen([sys.executable, "-c", "pass"]))
            for child in children:
                os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # ended, not reaped

        @pytest.mark.resmon_limit(cpu_sec=0.1)
        def test_b():
            for child in children:
                assert child.wait() == 0
    """, "--resmon-json=report.json")
    assert outcomes(result) == {"test_a": "PASSED", "test_b": "PASSED"}, result.stdout
    tests = report(tmp_path)["tests"]
    b = tests["test_generated.py::test_b"]
    assert b["cpu_sec_exact"] is False and abs(b["cpu_sec_error_sec"] - 0.4) < 1e-9, b


def test_zombies_a_test_leaves_give_its_own_cpu_no_slack(tmp_path):
    # The final attack of stop 56: the zombies a test leaves are charged to
    # it rounded down (its figure low, not high), yet their ticks were taken
    # off before its limit was judged: 0.8 s of its own CPU and 100 zombies
    # passed a limit of 0.3.
    result = run_pytest(tmp_path, """
        import os, subprocess, time, pytest
        children = []

        @pytest.mark.resmon_limit(cpu_sec=0.3)
        def test_a():
            start = time.process_time()
            while time.process_time() - start < 0.5:
                pass
            for _ in range(40):
                children.append(subprocess.Popen(["true"]))
            for child in children:
                os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # ended, not reaped
    """, "--resmon-json=report.json")
    assert outcomes(result) == {"test_a": "FAILED"}, result.stdout
    a = report(tmp_path)["tests"]["test_generated.py::test_a"]
    assert a["cpu_sec"] >= 0.5 and a["cpu_sec_exact"] is False, a


def test_a_zombie_reaped_as_the_calls_cpu_is_read_makes_cpu_sec_unsure(tmp_path):
    # Whether a child reaped between the plugin's look at the zombies and
    # its read of the CPU clock is in the call's CPU, no one can say: a
    # conftest reaps test_a's child right after the plugin's look at the
    # call's end.  cpu_sec says it is not exact, and its limit is lifted.
    (tmp_path / "conftest.py").write_text(textwrap.dedent("""
        import os
        import resmon.pytest_plugin as plugin

        look = plugin._zombie_children
        armed = []

        def look_then_reap():
            found = look()
            for pid, _ in found:
                if pid in armed:
                    armed.remove(pid)
                    os.waitpid(pid, 0)
            return found

        plugin._zombie_children = look_then_reap
    """))
    result = run_pytest(tmp_path, BURNS_WHEN_TOLD + """
        import conftest

        @pytest.mark.resmon_limit(cpu_sec=0.1)
        def test_a():
            start_child()
            conftest.armed.append(children[0][0].pid)
            let_it_burn_and_end()
    """, "--resmon-json=report.json")
    assert outcomes(result) == {"test_a": "PASSED"}, result.stdout
    a = report(tmp_path)["tests"]["test_generated.py::test_a"]
    assert a["cpu_sec_exact"] is False, a
    assert re.fullmatch(r"process \d+ \(ended in the test, reaped as it ended\)", a["cpu_sec_unsure"][0]), a
    assert "its cpu_sec may be off by that child's CPU, so no limit on it is applied" in result.stdout


def test_a_test_that_writes_a_big_file_is_not_charged_with_its_page_cache(tmp_path):
    # The leaf is charged with the page cache of a file the test writes; no
    # RSS ever holds it: 200 MiB written through an 1 MiB buffer failed a
    # limit of 50 as rss_growth_mb 206.8 (retained 206.7).
    result = run_pytest(tmp_path, """
        import os, pytest

        @pytest.mark.resmon_limit(rss_growth_mb=50, retained_mb=50)
        def test_write(tmp_path):
            chunk = b"x" * (1 << 20)
            with open(tmp_path / "big", "wb") as f:
                for _ in range(200):
                    f.write(chunk)
    """, "--resmon-json=report.json")
    record = cgroup_records(tmp_path, result)["test_generated.py::test_write"]
    assert outcomes(result) == {"test_write": "PASSED"}, result.stdout
    assert record["rss_growth_mb"] < 50 and record["retained_mb"] < 50, record
    assert record["cgroup_peak_mb"] >= record["rss_growth_mb"], record
    if record["cgroup_file_mb"] >= 1:  # the kernel kept some of it cached
        assert record["exact"] is False, record


def test_a_test_that_writes_and_deletes_a_big_file_is_not_exact(tmp_path):
    # Stop 56's attack: the page cache of a file written and deleted stayed
    # in the leaf's peak, and nothing was cached at the end to take out:
    # rss_growth_mb 206.5 with exact true, where RSS never rose above 33.
    # 3 MiB is below what the peak may hold unseen: the pages dirtied
    # (file_io_mb) tell.  An allocation that raises pytest's peak mark, and
    # no file, stays exact.
    result = run_pytest(tmp_path, ALLOCATE_100 + """
        import os, pytest

        def test_allocate():
            allocate(100)

        @pytest.mark.parametrize("mib", [200, 3])
        def test_write_and_delete(tmp_path, mib):
            chunk = b"x" * (1 << 20)
            with open(tmp_path / "big", "wb") as f:
                for _ in range(mib):
                    f.write(chunk)
            os.unlink(tmp_path / "big")
    """, "--resmon-json=report.json")
    tests = cgroup_records(tmp_path, result)
    assert outcomes(result) == {"test_allocate": "PASSED", "test_write_and_delete[200]": "PASSED",
                                "test_write_and_delete[3]": "PASSED"}, result.stdout
    allocated = tests["test_generated.py::test_allocate"]
    assert allocated["exact"] is True and allocated["rss_growth_mb"] >= 100, allocated
    for mib in (200, 3):
        record = tests[f"test_generated.py::test_write_and_delete[{mib}]"]
        assert record["exact"] is False, record
        if "file_io_mb" in record:  # the kernel counts the pages it dirtied
            assert record["file_io_mb"] >= mib - 0.1, record


def test_a_grandchild_that_writes_and_deletes_a_big_file_is_not_exact(tmp_path):
    # /proc/self/io does not count a double-forked grandchild's file pages:
    # its page cache, freed before the end, is what no RSS was seen to hold
    # (cgroup_unseen_mb).
    if os.environ.get("RESMON_TEST_SANITIZED"):
        # The forked copies' RSS counts in the tree's sampled growth, and
        # under ASan their shadow memory is as large as the cache: the rule
        # cannot see it there (the same limit the last attack of stop 56
        # found with forks: said in the closing note, not solved).
        pytest.skip("under ASan the forked copies' shadow memory hides the unseen page cache")
    result = run_pytest(tmp_path, """
        import os

        def test_grandchild(tmp_path):
            done_r, done_w = os.pipe()
            child = os.fork()
            if child == 0:
                if os.fork() == 0:
                    chunk = b"x" * (1 << 20)
                    with open(tmp_path / "big", "wb") as f:
                        for _ in range(100):
                            f.write(chunk)
                    os.unlink(tmp_path / "big")
                    os.write(done_w, b"x")
                os._exit(0)
            os.close(done_w)
            os.waitpid(child, 0)
            assert os.read(done_r, 1) == b"x"
    """, "--resmon-json=report.json")
    record = cgroup_records(tmp_path, result)["test_generated.py::test_grandchild"]
    assert outcomes(result) == {"test_grandchild": "PASSED"}, result.stdout
    assert record["exact"] is False, record
    assert record["cgroup_unseen_mb"] > 50, record
    assert record.get("file_io_mb", 0) < 1, record
# ---- --resmon-compare: the session against a baseline, by resmon compare's engine

COMPARED = """
        def allocate(mib):
            block = bytearray(mib << 20)
            block[::4096] = b"x" * len(range(0, len(block), 4096))
            return block

        def test_light():
            pass

        def test_heavy():
            allocate(MIB)
"""


def compared_source(mib):
    return COMPARED.replace("MIB", str(mib))


def test_a_session_within_its_baselines_limits_passes_and_one_that_allocates_twice_fails(tmp_path):
    result = run_pytest(tmp_path, compared_source(64), "--resmon-json=base.json")
    assert result.returncode == 0, result.stdout + result.stderr
    limit = "--resmon-compare-fail=rss_growth_mb=50%,8"
    result = run_pytest(tmp_path, compared_source(64), "--resmon-compare=base.json", limit)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"-+ resmon compare: base\.json vs this session -+", result.stdout)
    assert re.search(r"^(\u2713|ok:) 1 limit holds in 2 keys", result.stdout, re.M), result.stdout
    assert "test_generated.py::test_heavy::rss_growth_mb" in result.stdout  # the rows a limit names

    result = run_pytest(tmp_path, compared_source(128), "--resmon-compare=base.json", limit)
    assert result.returncode == 1, result.stdout + result.stderr
    assert outcomes(result) == {"test_light": "PASSED", "test_heavy": "PASSED"}  # the session fails, no test
    assert re.search(r"^(\u2717|FAIL:) 1 of 1 limit exceeded, in 1 of 2 keys", result.stdout, re.M), result.stdout
    # The engine's reason line, as `resmon compare` writes it on stderr.
    assert re.search(r"^resmon compare: test_generated\.py::test_heavy::rss_growth_mb rose from [\d.]+ to [\d.]+ "
                     r"\(\+\d+\.\d%\), above the limit of \+50% and \+8$", result.stdout, re.M), result.stdout


def test_compare_limits_come_from_the_ini_and_the_command_line_replaces_a_keys(tmp_path):
    result = run_pytest(tmp_path, compared_source(32), "--resmon-json=base.json")
    assert result.returncode == 0, result.stdout + result.stderr
    ini = "resmon_compare_fail = rss_growth_mb=10%,4 cpu_sec=1000%,5\n"
    result = run_pytest(tmp_path, compared_source(64), "--resmon-compare=base.json", ini=ini)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "test_heavy::rss_growth_mb rose from" in result.stdout
    # The command line's limit comes last: it is the key's limit (as the
    # last --max-increase naming a key is, in resmon compare).
    result = run_pytest(tmp_path, compared_source(64), "--resmon-compare=base.json",
                        "--resmon-compare-fail=rss_growth_mb=200%,4", ini=ini)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"^(\u2713|ok:) 2 limits hold in 4 keys", result.stdout, re.M), result.stdout


def test_a_bad_compare_limit_is_a_usage_error_in_resmon_compares_words(tmp_path):
    from resmon import _resmon
    from resmon.pytest_plugin import _in_pytest_words
    (tmp_path / "base.json").write_text(json.dumps({"resmon_version": "0.4.0",
                                                    "tests": {"t.py::test_x": {"rss_growth_mb": 1.0}}}))
    (tmp_path / "new.json").write_text(json.dumps({"resmon_version": "0.4.0", "created": "another run",
                                                   "tests": {"t.py::test_x": {"rss_growth_mb": 1.0}}}))
    base, new = str(tmp_path / "base.json"), str(tmp_path / "new.json")
    for limit in ("rss_growth_mb=ten%", "rss_growth_mb=-5%,1", "rss_growth_mb", "no_such_key=10%",
                  "exit_status=1"):
        # What `resmon compare --max-increase LIMIT` says, from the same engine.
        status, _, words = _resmon.compare(["--max-increase", limit, base, new])
        assert status == 125 and words.startswith("resmon compare: --max-increase "), words
        # ... in the plugin's words: its option, never a command it lacks
        words = _in_pytest_words(words, "/nonexistent/this-session.json")
        assert words.startswith("resmon: --resmon-compare-fail ") and "without limits" not in words, words
        for args, ini in (([f"--resmon-compare-fail={limit}"], None), ([], f"resmon_compare_fail = {limit}\n")):
            result = run_pytest(tmp_path, "def test_x():\n    pass\n", "--resmon-compare=base.json", *args, ini=ini)
            assert result.returncode == 4, result.stdout + result.stderr
            assert "test_x" not in outcomes(result)  # refused before any test ran
            assert f"ERROR: {words.strip()}" in result.stderr, (words, result.stderr)
    result = run_pytest(tmp_path, "def test_x():\n    pass\n", "--resmon-compare=base.json",
                        "--resmon-compare-fail=rss_growth_mb=ten%")
    assert ("ERROR: resmon: --resmon-compare-fail 'rss_growth_mb=ten%': expected KEY=N%, KEY=N or "
            "KEY=N%,M, N and M numbers >= 0 (see resmon compare --help)") in result.stderr
    result = run_pytest(tmp_path, "def test_x():\n    pass\n", "--resmon-compare=base.json",
                        "--resmon-compare-fail=no_such_key=10%")
    assert ("ERROR: resmon: --resmon-compare-fail no_such_key=10%: no_such_key is not a numeric key of BASELINE's "
            "tests") in result.stderr, result.stderr
    result = run_pytest(tmp_path, "def test_x():\n    pass\n", "--resmon-compare-fail=rss_growth_mb=10%")
    assert result.returncode == 4
    assert "--resmon-compare-fail needs --resmon-compare BASELINE" in result.stderr


def test_an_option_given_twice_with_different_values_is_a_usage_error(tmp_path):
    # review: pytest's parser kept the last value: "--resmon-compare-fail=
    # rss_growth_mb=10% --resmon-compare-fail=rss_growth_mb=900%" judged at
    # 900%, "--resmon-json=b --resmon-json=c" wrote c alone.
    (tmp_path / "base.json").write_text(json.dumps({"resmon_version": "0.4.0",
                                                    "tests": {"test_generated.py::test_x": {"rss_growth_mb": 1.0}}}))
    test = "def test_x():\n    pass\n"
    for args, words in (
            (["--resmon-compare=base.json", "--resmon-compare-fail=rss_growth_mb=10%",
              "--resmon-compare-fail=rss_growth_mb=900%"],
             "ERROR: resmon: --resmon-compare-fail 'rss_growth_mb=900%': its KEY was given an other limit before: "
             "give it one (see resmon compare --help)\n"),
            (["--resmon-json=b.json", "--resmon-json=c.json"],
             "ERROR: resmon: --resmon-json given twice ('c.json' after 'b.json'): give it once\n"),
            (["--resmon-compare=base.json", "--resmon-compare", "other.json"],
             "ERROR: resmon: --resmon-compare given twice ('other.json' after 'base.json'): give it once\n")):
        result = run_pytest(tmp_path, test, *args)
        assert result.returncode == 4, result.stdout + result.stderr
        assert "test_x" not in outcomes(result)  # refused before any test ran
        assert result.stderr.strip() == words.strip(), result.stderr  # one line
        assert not (tmp_path / "b.json").exists() and not (tmp_path / "c.json").exists()
    # The same value twice says one thing; a command-line limit replaces the ini's.
    result = run_pytest(tmp_path, test, "--resmon-compare=base.json", "--resmon-compare=base.json",
                        "--resmon-json=c.json", "--resmon-json=c.json", "--resmon-compare-fail=rss_growth_mb=10%",
                        "--resmon-compare-fail=rss_growth_mb=10.0%", "--resmon-compare-fail=rss_growth_mb=900%,50",
                        ini="resmon_compare_fail = rss_growth_mb=1%\n")
    assert result.returncode == 4 and "its KEY was given an other limit" in result.stderr, result.stderr
    result = run_pytest(tmp_path, test, "--resmon-compare=base.json", "--resmon-compare=base.json",
                        "--resmon-json=c.json", "--resmon-json=c.json", "--resmon-compare-fail=rss_growth_mb=900%,50",
                        "--resmon-compare-fail=rss_growth_mb=900.0%,50", ini="resmon_compare_fail = rss_growth_mb=1%\n")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "test_x" in outcomes(result) and (tmp_path / "c.json").exists()


def test_a_missing_or_invalid_baseline_is_a_usage_error_before_any_test_runs(tmp_path):
    (tmp_path / "notjson.json").write_text("{not json")
    (tmp_path / "other.json").write_text(json.dumps({"tests": "no"}))
    (tmp_path / "empty").mkdir()
    for baseline, words in (("missing.json", "ERROR: resmon: --resmon-compare: missing.json: no such file or directory"),
                            ("notjson.json", "ERROR: resmon: --resmon-compare: notjson.json: not JSON (line 1:"),
                            ("other.json", "ERROR: resmon: --resmon-compare: other.json: not a resmon summary"),
                            ("empty", "ERROR: resmon: --resmon-compare: empty: "),
                            ("-", "resmon: --resmon-compare needs a BASELINE file or directory (not standard input)"),
                            ("", "resmon: --resmon-compare needs a BASELINE file or directory (it was empty)")):
        result = run_pytest(tmp_path, "def test_x():\n    pass\n", f"--resmon-compare={baseline}")
        assert result.returncode == 4, (baseline, result.stdout + result.stderr)
        assert "test_x" not in outcomes(result)
        assert words in result.stderr, (baseline, result.stderr)
        assert "resmon compare: " not in result.stderr, result.stderr  # one name for the refusal, the option's
    # An empty --resmon-json (OUT unset in "--resmon-json=$OUT") wrote no
    # report, exit 0: a gate then read a stale one (stop 54's attack).
    result = run_pytest(tmp_path, "def test_x():\n    pass\n", "--resmon-json=")
    assert result.returncode == 4, result.stdout + result.stderr
    assert "resmon: --resmon-json needs a PATH (it was empty)" in result.stderr, result.stderr
    # "-" is the command's standard output; here it made a file named "-"
    # (stop 54's attack): refused, with where to write instead.
    result = run_pytest(tmp_path, "def test_x():\n    pass\n", "--resmon-json=-")
    assert result.returncode == 4, result.stdout + result.stderr
    assert "give /dev/stdout to write it there anyway" in result.stderr, result.stderr
    assert not (tmp_path / "-").exists()
    # --resmon-json is written before the comparison: into BASELINE it would
    # be compared with itself (a file) or join its runs (a directory).
    result = run_pytest(tmp_path, "def test_x():\n    pass\n", "--resmon-json=base.json")
    assert result.returncode == 0, result.stdout + result.stderr
    (tmp_path / "runs").mkdir()
    os.rename(tmp_path / "base.json", tmp_path / "runs" / "1.json")
    for baseline, output in (("runs/1.json", "./runs/1.json"), ("runs", "runs/2.json")):
        result = run_pytest(tmp_path, "def test_x():\n    pass\n", f"--resmon-compare={baseline}",
                            f"--resmon-json={output}")
        assert result.returncode == 4, (baseline, result.stdout + result.stderr)
        assert "test_x" not in outcomes(result)
        assert "an output never replaces an input" in result.stderr
        assert sorted(os.listdir(tmp_path / "runs")) == ["1.json"]


def test_a_report_into_baseline_through_a_bind_mount_is_refused(tmp_path, request):
    # Attack 56a, B2: the plugin compared os.path.realpath strings, and a
    # bind mount gives BASELINE's directory a second name: the report
    # replaced BASELINE (or joined its directory), and the gate judged the
    # session against itself, exit 0.  Files are told by (st_dev, st_ino).
    base, alias = tmp_path / "base", tmp_path / "alias"
    base.mkdir()
    alias.mkdir()
    result = run_pytest(tmp_path, "def test_x():\n    pass\n", "--resmon-json=base/base.json")
    assert result.returncode == 0, result.stdout + result.stderr
    before = (base / "base.json").read_bytes()
    bind_mount(request, base, alias)
    for baseline, output in (("base/base.json", "alias/base.json"), ("base", "alias/new.json"),
                             ("base", "alias/base.json"), ("alias", "base/new.json")):
        result = run_pytest(tmp_path, "def test_x():\n    pass\n", f"--resmon-compare={baseline}",
                            f"--resmon-json={output}")
        assert result.returncode == 4, (baseline, output, result.stdout + result.stderr)
        assert "test_x" not in outcomes(result)
        assert "an output never replaces an input" in result.stderr
        assert os.listdir(base) == ["base.json"]
        assert (base / "base.json").read_bytes() == before
    # A file of another directory is still written, under either name of BASELINE.
    for baseline in ("base", "alias/base.json"):
        result = run_pytest(tmp_path, "def test_x():\n    pass\n", f"--resmon-compare={baseline}",
                            "--resmon-json=elsewhere.json")
        assert result.returncode == 0, (baseline, result.stdout + result.stderr)
        assert (tmp_path / "elsewhere.json").exists()
        os.unlink(tmp_path / "elsewhere.json")


def test_a_session_sharing_no_measured_test_with_its_baseline_says_nothing_was_judged(tmp_path):
    # Review of issue 30 (item 3), finding 1: each of these exited 4 after the
    # run, naming "resmon compare without limits", a command pytest lacks.
    result = run_pytest(tmp_path, compared_source(8), "--resmon-json=base.json")
    assert result.returncode == 0, result.stdout + result.stderr
    limit = "--resmon-compare-fail=rss_growth_mb=50%,8"
    result = run_pytest(tmp_path, compared_source(8), "--resmon-compare=base.json", limit, "--co")
    assert result.returncode == 0, result.stdout + result.stderr  # no test ran: nothing to judge
    assert "resmon compare" not in result.stdout + result.stderr
    nothing = "resmon compare: no measured test in common with BASELINE: nothing judged"
    result = run_pytest(tmp_path, compared_source(8), "--resmon-compare=base.json", limit, "-k", "no_such_test")
    assert result.returncode == 5, result.stdout + result.stderr  # pytest's own "no tests ran"
    assert nothing in result.stdout
    skipped = compared_source(8).replace("def test_", "@pytest.mark.skip\n        def test_")
    skipped = "import pytest\n" + textwrap.dedent(skipped)
    result = run_pytest(tmp_path, skipped, "--resmon-compare=base.json", limit)
    assert result.returncode == 1, result.stdout + result.stderr  # a gate that judged nothing is no pass
    assert nothing in result.stdout and "without limits" not in result.stdout
    result = run_pytest(tmp_path, skipped, "--resmon-compare=base.json")
    assert result.returncode == 0, result.stdout + result.stderr  # no limit: said, not failed
    assert nothing in result.stdout
    # A limit on one test not run here is named and left out; the rest judge.
    heavy = "--resmon-compare-fail=test_generated.py::test_heavy::rss_growth_mb=50%,8"
    not_here = ("resmon compare: test_generated.py::test_heavy::rss_growth_mb=50%,8 names no test measured in this "
                "session (deselected, skipped or not collected): not judged here, never a failure")
    result = run_pytest(tmp_path, compared_source(8), "--resmon-compare=base.json", limit, heavy, "-k", "light")
    assert result.returncode == 0, result.stdout + result.stderr
    assert not_here in result.stdout
    assert re.search(r"^(\u2713|ok:) 1 limit holds", result.stdout, re.M), result.stdout
    # Review 4 of issue 30, finding 3: alone, the same limit failed the
    # session (exit 1, under "no limits, a report"); one rule now: a limit
    # on a test this session did not run (a shard) is a warning, whatever
    # the other limits.
    result = run_pytest(tmp_path, compared_source(8), "--resmon-compare=base.json", heavy, "-k", "light")
    assert result.returncode == 0, result.stdout + result.stderr
    assert not_here in result.stdout
    assert re.search(r"^no limit judged \(1 given: below\), a report$", result.stdout, re.M), result.stdout
    assert "no limits" not in result.stdout and "limits judge the medians alone" not in result.stdout


def test_a_limit_on_a_test_skipped_in_its_body_here_is_a_warning_not_the_engines_usage_error(tmp_path):
    # Review 57d: d5112e2 left a skipped test's record out of the engine's
    # NEW and of BASELINE's rows, but the session's own "measured" still
    # held it: a limit naming it went to the engine, which refused it (125,
    # "not a numeric key of BASELINE's tests") and the session exited 4.
    result = run_pytest(tmp_path, compared_source(8), "--resmon-json=base.json")
    assert result.returncode == 0, result.stdout + result.stderr
    skipping = "import pytest\n" + textwrap.dedent(compared_source(8)).replace(
        "def test_heavy():\n", "def test_heavy():\n    pytest.skip('not here')\n")
    heavy = "--resmon-compare-fail=test_generated.py::test_heavy::rss_growth_mb=50%,8"
    result = run_pytest(tmp_path, skipping, "--resmon-compare=base.json", heavy)
    assert result.returncode == 0, result.stdout + result.stderr
    assert ("resmon compare: test_generated.py::test_heavy::rss_growth_mb=50%,8 names no test measured in this "
            "session (deselected, skipped or not collected): not judged here, never a failure") in result.stdout
    assert "not a numeric key" not in result.stdout + result.stderr


def test_the_baseline_is_checked_once_as_a_pytest_report_never_against_itself(tmp_path):
    # Finding 2: BASELINE was compared with itself at start-up.
    from resmon import _resmon
    result = run_pytest(tmp_path, compared_source(8), "--resmon-json=base.json")
    assert result.returncode == 0, result.stdout + result.stderr
    # (a) a baseline within the engine's memory bound beside a session, but
    # not twice over, was refused before any test ran.
    tests = report(tmp_path, "base.json")["tests"]
    filler = {k: 1.5 for k in ("rss_growth_mb", "peak_rss_mb", "retained_mb", "tree_peak_rss_mb", "cpu_sec",
                               "wall_sec")}
    tests.update({f"test_other.py::test_{i}": filler for i in range(60000)})
    (tmp_path / "big.json").write_text(json.dumps({"resmon_version": "0.4.0", "tests": tests}))
    big = str(tmp_path / "big.json")
    assert _resmon.compare(["--", big, big])[0] == 125  # the premise: BASELINE twice is over the bound
    # The engine's next run in this process starts with its budget whole: a
    # file that is not JSON was blamed on the memory bound the last run hit.
    (tmp_path / "broken.json").write_text("{")
    status, _, err = _resmon.compare(["--", str(tmp_path / "broken.json"), big])
    assert status == 125 and ": not JSON (line 1:" in err and "memory" not in err, err
    result = run_pytest(tmp_path, compared_source(8), "--resmon-compare=big.json",
                        "--resmon-compare-fail=rss_growth_mb=50%,8", timeout=5 * SAFETY_SEC)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"^(\u2713|ok:) 1 limit holds in 2 keys", result.stdout, re.M), result.stdout
    # (b) a command's summary judged nothing (exit 0 without limits).
    summary = {"resmon_version": "0.4.0", "peak_rss_mb": 10.0, "num_samples": 3, "cpu_sec": 0.1}
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    for limits in ([], ["--resmon-compare-fail=cpu_sec=10%"]):
        result = run_pytest(tmp_path, compared_source(8), "--resmon-compare=summary.json", *limits)
        assert result.returncode == 4, result.stdout + result.stderr
        assert outcomes(result) == {}  # refused before any test ran
        assert ("resmon: --resmon-compare 'summary.json' is not a pytest report (no \"tests\" object): the "
                "baseline of a session is a --resmon-json report") in result.stderr


def test_a_failed_gate_says_why_without_pytests_summary(tmp_path):
    # Finding 4: under --no-summary (or -p no:terminal) the gate failed the
    # session (exit 1) with no reason anywhere.
    result = run_pytest(tmp_path, compared_source(8), "--resmon-json=base.json")
    assert result.returncode == 0, result.stdout + result.stderr
    base = report(tmp_path, "base.json")  # a BASELINE of other tests: the limit judges nothing here
    base["tests"] = {"test_old.py::test_gone": base["tests"]["test_generated.py::test_heavy"]}
    (tmp_path / "base.json").write_text(json.dumps(base))
    for quiet in ("--no-summary",):
        result = run_pytest(tmp_path, compared_source(8), "--resmon-compare=base.json", quiet,
                            "--resmon-compare-fail=rss_growth_mb=1")
        assert result.returncode == 1, result.stdout + result.stderr
        assert ("rss_growth_mb=1 judged nothing: BASELINE has no number for it in test_generated.py::test_heavy, "
                "test_generated.py::test_light, measured here, - this fails the session") in result.stderr, \
            (quiet, result.stderr)


def test_the_verdict_speaks_of_this_session_and_the_plugins_options(tmp_path):
    # Finding 5: the header named the deleted temporary report, hints named
    # resmon compare's flags, and "ok, limit +0%" sat beside a +24 % rise.
    result = run_pytest(tmp_path, compared_source(8), "--resmon-json=base.json")
    assert result.returncode == 0, result.stdout + result.stderr
    base = report(tmp_path, "base.json")
    base["tests"]["test_generated.py::test_light"]["cpu_sec"] = 1e-6  # any rise is over +0%, and under 0.01 s
    (tmp_path / "base.json").write_text(json.dumps(base))
    result = run_pytest(tmp_path, compared_source(8), "--resmon-compare=base.json",
                        "--resmon-compare-fail=cpu_sec=0%")
    out = result.stdout + result.stderr
    assert "resmon-compare-" not in out and "this-session.json" not in out, out
    assert re.search(r"^base base\.json \(1 run\), new this session \(1 run\)", result.stdout, re.M), out
    assert "one session is one run, and telling a change from noise at alpha 0.05 needs 4 a side" in out
    assert ": --all shows them" not in out and "`resmon compare --all BASELINE REPORT` shows them" in out
    light = next(line for line in result.stdout.splitlines() if "test_light::cpu_sec" in line)
    rise = float(light.split()[2]) - 1e-6
    if rise <= 0.01:
        assert light.endswith("ok, limit +0%, under its floor of +0.01"), light
    else:  # a machine so slow that pytest's own work in the test took 10 ms of CPU
        assert "EXCEEDED limit +0%" in light, light


def test_a_test_whose_baseline_has_no_number_for_a_limited_key_is_named_unjudged(tmp_path):
    # Finding 6: a BASELINE test whose limited key is a string or missing was
    # silently left out ("1 limit holds").
    result = run_pytest(tmp_path, compared_source(8), "--resmon-json=base.json")
    assert result.returncode == 0, result.stdout + result.stderr
    base = report(tmp_path, "base.json")
    base["tests"]["test_generated.py::test_light"]["rss_growth_mb"] = "n/a"
    (tmp_path / "base.json").write_text(json.dumps(base))
    result = run_pytest(tmp_path, compared_source(8), "--resmon-compare=base.json",
                        "--resmon-compare-fail=rss_growth_mb=50%,8")
    assert result.returncode == 0, result.stdout + result.stderr
    assert ("resmon compare: rss_growth_mb=50%,8 not judged in 1 test where BASELINE has no number for it: "
            "test_generated.py::test_light") in result.stdout, result.stdout
    assert re.search(r"^(\u2713|ok:) 1 limit holds", result.stdout, re.M), result.stdout
    del base["tests"]["test_generated.py::test_light"]["rss_growth_mb"]
    (tmp_path / "base.json").write_text(json.dumps(base))
    result = run_pytest(tmp_path, compared_source(8), "--resmon-compare=base.json",
                        "--resmon-compare-fail=rss_growth_mb=50%,8")
    assert "not judged in 1 test where BASELINE has no number for it: test_generated.py::test_light" in result.stdout


def test_an_unwritable_temporary_directory_is_one_line_and_exit_4(tmp_path):
    # Finding 3: a full TMPDIR while writing the session's report was a raw
    # OSError traceback (exit 1).  The report is written at the session's
    # end; a conftest that points tempfile at a missing directory just
    # before stands in for the full disk.
    result = run_pytest(tmp_path, compared_source(8), "--resmon-json=base.json")
    assert result.returncode == 0, result.stdout + result.stderr
    (tmp_path / "conftest.py").write_text(textwrap.dedent("""\
        import pytest, tempfile

        @pytest.hookimpl(tryfirst=True)
        def pytest_sessionfinish(session):
            tempfile.tempdir = "/nonexistent/resmon-tmp"
        """))
    result = run_pytest(tmp_path, compared_source(8), "--resmon-compare=base.json",
                        "--resmon-compare-fail=rss_growth_mb=50%,8")
    assert result.returncode == 4, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert ("resmon: --resmon-compare cannot write this session's report in '/nonexistent/resmon-tmp': No such "
            "file or directory") in result.stdout, result.stdout


@pytest.mark.parametrize("when", ["pytest_configure", "pytest_sessionfinish"])
def test_no_usable_temporary_directory_is_one_line_and_exit_4(tmp_path, when):
    # Review of issue 30: where no temporary directory is usable at all
    # (TMPDIR, /tmp, /var/tmp and the working directory each refused), the
    # one line's tempfile.gettempdir() raised again: a traceback.  Checked at
    # start-up (BASELINE's check) and at the end (the session's report); the
    # conftest stands in for such a machine.
    result = run_pytest(tmp_path, compared_source(8), "--resmon-json=base.json")
    assert result.returncode == 0, result.stdout + result.stderr
    (tmp_path / "conftest.py").write_text(textwrap.dedent(f"""\
        import pytest, tempfile

        @pytest.hookimpl(tryfirst=True)
        def {when}():
            tempfile.tempdir = None
            tempfile._candidate_tempdir_list = lambda: ["/nonexistent/resmon-tmp"]
        """))
    result = run_pytest(tmp_path, compared_source(8), "--resmon-compare=base.json",
                        "--resmon-compare-fail=rss_growth_mb=50%,8")
    assert result.returncode == 4, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    what = "its check of BASELINE" if when == "pytest_configure" else "this session's report"
    assert re.search(rf"resmon: --resmon-compare cannot write {what}: No usable temporary directory found in "
                     r"\['/nonexistent/resmon-tmp'\]", result.stdout + result.stderr), result.stdout + result.stderr


def test_ctrl_c_in_the_compare_ends_the_session_interrupted_with_one_line(tmp_path):
    # Review of issue 30: Ctrl-C waited for the engine (it held the GIL);
    # now it stops the engine (test_module), and the session ends as pytest
    # ends an interrupted one (exit 2), nothing judged, not in a traceback.
    # The conftest's engine raises as Ctrl-C in it does.
    result = run_pytest(tmp_path, compared_source(8), "--resmon-json=base.json")
    assert result.returncode == 0, result.stdout + result.stderr
    (tmp_path / "conftest.py").write_text(textwrap.dedent("""\
        import pytest
        from resmon import _resmon

        def interrupted(args, utf8=True):
            raise KeyboardInterrupt

        @pytest.hookimpl(tryfirst=True)
        def pytest_sessionfinish():
            _resmon.compare = interrupted
        """))
    result = run_pytest(tmp_path, compared_source(8), "--resmon-compare=base.json",
                        "--resmon-compare-fail=rss_growth_mb=50%,8")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert "resmon: --resmon-compare interrupted: nothing judged" in result.stdout, result.stdout


def test_a_session_pytest_exit_stopped_is_interrupted_whatever_its_status(tmp_path, monkeypatch):
    # Attack 59: pytest.exit("...", returncode=0) after one test of three
    # wrote a report with "interrupted": false and status 0 -- a whole
    # session to `resmon compare`, which passed it -- and --resmon-compare
    # judged the part as the whole.
    source = """
        import os
        import pytest

        def test_a():
            x = bytearray(5 << 20)

        def test_b():
            if os.environ.get("EXIT0"):
                pytest.exit("stop here", returncode=0)

        def test_c():
            pass
    """
    result = run_pytest(tmp_path, source, "--resmon-json=base.json")
    assert result.returncode == 0, result.stdout + result.stderr
    assert report(tmp_path, "base.json")["interrupted"] is False
    monkeypatch.setenv("EXIT0", "1")
    result = run_pytest(tmp_path, source, "--resmon-json=new.json")
    assert result.returncode == 0, result.stdout + result.stderr
    new = report(tmp_path, "new.json")
    assert (new["exit_status"], new["interrupted"], list(new["tests"])) == (
        0, True, ["test_generated.py::test_a"]), new
    # ... and the gate fails it, whatever status pytest.exit chose (review
    # 60: "nothing judged", exit 0) -- also stopped in a conftest's
    # pytest_sessionstart, where pytest runs no sessionfinish
    result = run_pytest(tmp_path, source, "--resmon-compare=base.json", "--resmon-compare-fail=rss_growth_mb=50%,8")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "resmon: --resmon-compare: the session was stopped short (pytest.exit): nothing judged" in \
        result.stdout, result.stdout
    for hook in ("pytest_sessionstart(session)", "pytest_configure(config)"):  # the second: review 61
        (tmp_path / "conftest.py").write_text(f"import pytest\n\ndef {hook}:\n"
                                              "    pytest.exit('no GPU here', returncode=0)\n")
        result = run_pytest(tmp_path, source, "--resmon-compare=base.json",
                            "--resmon-compare-fail=rss_growth_mb=50%,8")
        assert result.returncode == 1, (hook, result.stdout + result.stderr)
        assert "resmon: --resmon-compare: the session was stopped short (pytest.exit)" in result.stderr and \
            "nothing judged" in result.stderr, (hook, result.stdout + result.stderr)
    # Ctrl-C there is no pytest.exit: pytest's exit 2, and no such line (review 62)
    (tmp_path / "conftest.py").write_text("import pytest\n\n@pytest.hookimpl(trylast=True)\n"
                                          "def pytest_configure(config):\n    raise KeyboardInterrupt\n")
    result = run_pytest(tmp_path, source, "--resmon-compare=base.json", "--resmon-compare-fail=rss_growth_mb=50%,8")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "pytest.exit" not in result.stdout + result.stderr, result.stdout + result.stderr


@pytest.mark.parametrize("option", ["--collect-only", "--fixtures", "--fixtures-per-test", "--setup-plan",
                                    "--setup-only"])
def test_options_that_run_no_test_judge_nothing_and_fail_nothing(tmp_path, option):
    # Review 62: --setup-plan failed the session ("judged nothing ... this
    # fails the session"), and --fixtures printed that and exited 0.
    result = run_pytest(tmp_path, compared_source(8), "--resmon-json=base.json")
    assert result.returncode == 0, result.stdout + result.stderr
    result = run_pytest(tmp_path, compared_source(8), option, "--resmon-compare=base.json",
                        "--resmon-compare-fail=rss_growth_mb=50%,8")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "fails the session" not in result.stdout + result.stderr, result.stdout + result.stderr


@pytest.mark.parametrize("encoding, locale, mark", [("ascii", "C.UTF-8", "ok:"), ("utf-8", "C", "\u2713")])
def test_the_check_mark_is_chosen_by_the_output_streams_encoding_not_the_locale(tmp_path, encoding, locale, mark):
    # Review of issue 30: the engine chose its check marks from the locale;
    # pytest writes to a Python stream whose encoding may differ
    # (PYTHONIOENCODING): a check mark on an ASCII stream, "ok:" on UTF-8.
    result = run_pytest(tmp_path, compared_source(8), "--resmon-json=base.json")
    assert result.returncode == 0, result.stdout + result.stderr
    env = dict(os.environ, PYTHONIOENCODING=encoding, LC_ALL=locale)
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_PLUGINS", None)
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--resmon-compare=base.json",
                             "--resmon-compare-fail=rss_growth_mb=50%,8"], cwd=tmp_path, capture_output=True,
                            timeout=2 * SAFETY_SEC, env=env)
    stdout = result.stdout.decode(encoding)
    assert result.returncode == 0, stdout + result.stderr.decode(errors="replace")
    assert re.search(rf"^{mark} 1 limit holds in 2 keys", stdout, re.M), stdout


def test_a_partial_report_in_a_baseline_directory_never_ungates_its_missing_tests(tmp_path):
    # Review 4 of issue 30, finding 1: a BASELINE directory holding one
    # report of a `-k` session: its missing test was "only in NEW", a 2x
    # rise of it passed, and a limit naming it was refused (exit 4).
    result = run_pytest(tmp_path, compared_source(16), "--resmon-json=base.json")
    assert result.returncode == 0, result.stdout + result.stderr
    (tmp_path / "runs").mkdir()
    full = report(tmp_path, "base.json")
    (tmp_path / "runs" / "r1.json").write_text(json.dumps(full))
    del full["tests"]["test_generated.py::test_heavy"]
    (tmp_path / "runs" / "r2.json").write_text(json.dumps(full))
    for limit in ("rss_growth_mb=50%,8", "test_generated.py::test_heavy::rss_growth_mb=50%,8",
                  "test_heavy::rss_growth_mb=50%,8"):  # finding 6: the engine's tail match, accepted
        result = run_pytest(tmp_path, compared_source(64), "--resmon-compare=runs", f"--resmon-compare-fail={limit}")
        assert result.returncode == 1, (limit, result.stdout + result.stderr)
        assert "test_generated.py::test_heavy::rss_growth_mb rose from" in result.stdout, result.stdout
        assert "BASE has 1 of 2 runs" in result.stdout and "only in" not in result.stdout, result.stdout


def test_a_baseline_directory_s_reports_are_its_json_files_in_any_case_as_the_engine_reads_them(tmp_path):
    # Attack 57a: the engine reads runs/R1.JSON (a name's ending in any
    # case), the plugin listed only *.json: "rss_growth_mb is not a numeric
    # key of BASELINE's tests", exit 4, for a BASELINE the engine judges.
    result = run_pytest(tmp_path, compared_source(16), "--resmon-json=base.json")
    assert result.returncode == 0, result.stdout + result.stderr
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "R1.JSON").write_text(json.dumps(report(tmp_path, "base.json")))
    result = run_pytest(tmp_path, compared_source(64), "--resmon-compare=runs",
                        "--resmon-compare-fail=rss_growth_mb=50%,8")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "test_generated.py::test_heavy::rss_growth_mb rose from" in result.stdout, result.stdout


def test_a_baseline_changed_during_the_session_is_judged_as_the_engine_reads_it_at_the_end(tmp_path):
    # Review 4 of issue 30, finding 2: a test removed test_heavy from
    # BASELINE; the plugin's start-up read still listed it: "1 limit holds"
    # and nothing said test_heavy went unjudged.
    result = run_pytest(tmp_path, compared_source(8), "--resmon-json=base.json")
    assert result.returncode == 0, result.stdout + result.stderr
    edit = compared_source(8) + """
        def test_zz_edit():
            import json
            with open("base.json") as f:
                base = json.load(f)
            del base["tests"]["test_generated.py::test_heavy"]
            with open("base.json", "w") as f:
                json.dump(base, f)
    """
    result = run_pytest(tmp_path, edit, "--resmon-compare=base.json", "--resmon-compare-fail=rss_growth_mb=50%,8")
    assert result.returncode == 0, result.stdout + result.stderr
    assert ("resmon compare: rss_growth_mb=50%,8 not judged in 2 tests that BASELINE lacks (new, or not in its "
            "reports): test_generated.py::test_heavy, test_generated.py::test_zz_edit") in result.stdout, result.stdout


def test_a_baseline_from_resmon_0_3_or_too_deep_is_a_usage_error_that_says_so(tmp_path):
    # Review 4 of issue 30, findings 4 and 5: a 0.3 BASELINE (cpu_time_sec)
    # gave "named no test" (exit 1) or "not a numeric key"; valid JSON
    # nested 1200 deep was an INTERNALERROR (RecursionError, exit 3).
    old = {"resmon_version": "0.3.0", "tests": {"test_generated.py::test_light": {"rss_growth_mb": 0.1,
                                                                                  "cpu_time_sec": 0.01}}}
    (tmp_path / "old.json").write_text(json.dumps(old))
    for limit, words in (("cpu_sec=10%", "cpu_sec was cpu_time_sec in the records of resmon 0.3"),
                         ("cpu_time_sec=10%", "cpu_time_sec is now cpu_sec (the kernel's CPU seconds)")):
        result = run_pytest(tmp_path, compared_source(8), "--resmon-compare=old.json",
                            f"--resmon-compare-fail={limit}")
        assert result.returncode == 4, result.stdout + result.stderr
        assert outcomes(result) == {}
        assert f"ERROR: resmon: --resmon-compare-fail {limit}: {words}; BASELINE 'old.json' is from resmon 0.3: " \
               "record a new one (pytest --resmon-json) and limit cpu_sec" in result.stderr, result.stderr
    (tmp_path / "deep.json").write_text('{"resmon_version": "0.4.0", "tests": {}, "deep": ' + "[" * 1200 +
                                        "]" * 1200 + "}")
    result = run_pytest(tmp_path, compared_source(8), "--resmon-compare=deep.json")
    assert result.returncode == 4, result.stdout + result.stderr
    assert "INTERNALERROR" not in result.stdout + result.stderr
    assert "deep.json" in result.stderr and outcomes(result) == {}, result.stderr


# The child returns into pytest and allocates at once, forked as the test
# began -- just as the plugin's sampler thread set itself up, inside
# malloc.  GCC 12's AddressSanitizer does not hold its allocator's locks
# across fork() (see test_lifecycle.py): under ASan 26 of 60 such children
# hung in their first free at exit (stop 53's landing timed out here);
# glibc's malloc is fork-safe: the plain build runs this test.
@pytest.mark.skipif("ASAN_OPTIONS" in os.environ, reason="ASan's allocator is not fork-safe with other threads")
def test_a_forked_child_returning_into_pytest_neither_measures_nor_writes_the_report(tmp_path):
    # Stop 53's attack on issue 28: a test's fork whose child returned into
    # pytest ran the rest of the session in the child, where the plugin's
    # monitor (forked while sampling) failed every later test and the
    # child's empty report replaced the session's.  Here the child returns
    # only once the parent has ended (its report written); run() waits for
    # the child too (it holds the output pipes).
    result = run_pytest(tmp_path, """
        import os, time

        def test_fork():
            parent = os.getpid()
            if os.fork() == 0:
                while os.getppid() == parent:  # until the session's process has ended
                    time.sleep(0.01)
                return

        def test_after():
            pass
    """, "--resmon", "--resmon-json=report.json")
    assert result.returncode == 0, result.stdout + result.stderr
    tests = report(tmp_path)["tests"]
    assert sorted(name.split("::")[-1] for name in tests) == ["test_after", "test_fork"], tests
    # The child ran test_after again, unmeasured: no plugin error in it.
    assert "when it forked" not in result.stdout + result.stderr


def test_the_report_says_how_each_test_and_the_session_ended(tmp_path):
    # Stop 53's attack on issue 28: the report said nothing of outcomes, so
    # `resmon compare` passed a test that failed early (quick and lean) and
    # a session interrupted halfway as improvements.
    run_pytest(tmp_path, """
        import pytest

        @pytest.fixture
        def broken():
            yield
            raise RuntimeError("in teardown")

        def test_pass():
            pass

        def test_fail():
            assert False

        def test_teardown(broken):
            pass
    """, "--resmon-json=report.json")
    written = report(tmp_path)
    ended = {node.split("::")[-1]: record["outcome"] for node, record in written["tests"].items()}
    assert ended == {"test_pass": "passed", "test_fail": "failed", "test_teardown": "error"}, written
    assert (written["exit_status"], written["interrupted"]) == (1, False)
    run_pytest(tmp_path, """
        def test_pass():
            pass

        def test_stop():
            raise KeyboardInterrupt

        def test_never():
            pass
    """, "--resmon-json=report.json")
    written = report(tmp_path)
    assert (written["exit_status"], written["interrupted"]) == (2, True), written
    assert not any(node.endswith("test_never") for node in written["tests"])


@pytest.mark.parametrize("verbosity", ["-q", "-v", None])
def test_a_report_that_cannot_be_written_says_so_on_a_line_of_its_own(tmp_path, verbosity):
    # Stop 54's attack: "....  [100%]resmon: cannot write --resmon-json
    # '/dev/full': ..." -- glued to pytest's progress line under -q.
    args = [verbosity] if verbosity else []
    (tmp_path / "test_generated.py").write_text("def test_x():\n    pass\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args,
                             "--resmon-json=/dev/full"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, timeout=2 * SAFETY_SEC, env=env)
    assert result.returncode == 4, result.stdout  # stdout and stderr, as a terminal shows them
    assert "\nresmon: cannot write --resmon-json '/dev/full': No space left on device\n" in result.stdout, \
        result.stdout


def test_a_fifo_put_among_the_baseline_reports_during_the_session_is_refused_not_waited_on(tmp_path):
    # Stop 55's third attack: BASELINE was read again at the session's end
    # with a plain open(), so a FIFO another user put among its reports
    # while the tests ran hung pytest for ever.  It is refused, by name.
    result = run_pytest(tmp_path, "def test_x():\n    pass\n", "--resmon-json=base.json")
    assert result.returncode == 0, result.stdout + result.stderr
    runs = tmp_path / "runs"
    runs.mkdir()
    os.rename(tmp_path / "base.json", runs / "a.json")
    source = f"import os\n\ndef test_x():\n    os.mkfifo({os.fspath(runs / 'zz.json')!r})\n"
    result = run_pytest(tmp_path, source, f"--resmon-compare={runs}")
    assert result.returncode != 0, result.stdout + result.stderr
    assert "a FIFO, not a regular file" in result.stdout + result.stderr, result.stdout + result.stderr
