"""Every argument of the binding, out of range however far, is a ValueError
naming it (never OverflowError or an internal traceback); every path
argument takes str, bytes and os.PathLike, so any name the file system has."""

import os
import pathlib

import pytest

import resmon
from resmon import _resmon
from test_pytest_plugin import outcomes, run_pytest

HUGE = 10**400  # beyond any double and any C integer


@pytest.mark.parametrize("kwargs, named", [
    ({"sample_interval_sec": HUGE}, "sample_interval_sec"),
    ({"sample_interval_sec": -HUGE}, "sample_interval_sec"),
    ({"pid": 2**31}, "pid"),
    ({"pid": HUGE}, "pid"),
    ({"max_samples": 2**63}, "max_samples"),
    ({"max_samples": HUGE}, "max_samples"),
])
def test_the_monitors_numbers_out_of_range_are_value_errors_naming_them(kwargs, named):
    with pytest.raises(ValueError, match=named):
        resmon.ResourceMonitor(**kwargs)


@pytest.mark.parametrize("flag", ["include_children", "reset_peak_mark", "cgroup_members"])
@pytest.mark.parametrize("value", ["no", "false", 0, 1, None])
def test_a_flag_that_is_not_true_or_false_is_a_value_error(flag, value):
    # include_children="no" was truthy: it turned on what the caller meant off.
    with pytest.raises(ValueError, match=f"{flag} must be True or False, got {value!r}"):
        resmon.ResourceMonitor(**{flag: value})


def test_a_gpu_or_metrics_of_the_wrong_kind_is_named_as_given():
    # Review of issue 28: gpu="\udcff" raised UnicodeEncodeError from inside;
    # metrics=b"all" named the groups [97, 108, 108].
    with pytest.raises(ValueError, match=r"gpu must be a string .*'\\udcff'") as raised:
        resmon.ResourceMonitor(gpu="\udcff")
    assert not isinstance(raised.value, UnicodeError)
    with pytest.raises(ValueError, match=r"metrics must be 'all' or an iterable .*b'all'"):
        resmon.ResourceMonitor(metrics=b"all")


@pytest.mark.parametrize("args, named", [
    ((HUGE,), "interval"),
    ((0.1, None, None, 2**31), "pid"),
    ((0.1, None, None, -1), "pid"),
    ((0.1, None, None, 0, False, 2**63), "max_samples"),
    ((0.1, None, None, 0, False, -1), "max_samples"),
    ((0.1, None, None, 0, False, 0, 2**32), "metrics"),
    ((0.1, None, None, 0, False, 0, HUGE), "metrics"),
])
def test_the_extensions_monitor_says_which_number_is_out_of_range(args, named):
    with pytest.raises(ValueError, match=named):
        _resmon.Monitor(*args)


def test_the_extensions_other_numbers_are_value_errors_too():
    with pytest.raises(ValueError, match="errno"):
        _resmon.strerror(2**70)
    for fields, named in (({"peak_rss_mb": HUGE}, "peak_rss_mb"), ({"num_samples": 2**64}, "num_samples"),
                          ({"num_samples": -1}, "num_samples")):
        with pytest.raises(ValueError, match=named):
            _resmon.summary_to_json(fields)
    with pytest.raises(TypeError, match="pid"):
        _resmon.Monitor(0.1, None, None, "12")


def test_a_cgroup_path_may_be_bytes_that_are_not_utf8_or_path_like(tmp_path):
    # Not a cgroup: the window still opens, and the error tells whether the
    # directory itself was reached (EOPNOTSUPP) or a mangled name (ENOENT).
    directory = os.path.join(os.fsencode(tmp_path), b"cg\xff")
    os.mkdir(directory)
    missing = os.path.join(os.fsencode(tmp_path), b"gone\xff")
    errors = []
    for path in (directory, os.fsdecode(directory), pathlib.Path(os.fsdecode(directory)), missing):
        with resmon.ResourceMonitor(0.01, cgroup_path=path) as mon:
            pass
        errors.append(mon.summary.cgroup_error)
    assert errors[0] == errors[1] == errors[2] != errors[3], errors
    assert errors[3] == -2  # ENOENT: the missing one is missing, the others were found
    with pytest.raises(ValueError, match=r"^cgroup_path must be a path \(str, bytes or os.PathLike\) or None, got 12$"):
        resmon.ResourceMonitor(0.01, cgroup_path=12)


def test_a_limit_beyond_any_number_fails_its_test_with_one_line(tmp_path):
    result = run_pytest(tmp_path, f"""
        import pytest

        @pytest.mark.resmon_limit(rss_growth_mb={HUGE})
        def test_huge():
            pass
    """)
    assert outcomes(result) == {"test_huge": "FAILED"}, result.stdout + result.stderr
    assert "is not a number >= 0" in result.stdout
    assert "INTERNALERROR" not in result.stdout + result.stderr and "OverflowError" not in result.stdout


def test_a_gpu_profiler_without_the_protocols_methods_is_refused():
    # It gave None in every sample, said nowhere (stop 54).
    class OnlyUtilization:
        def get_utilization(self):
            return 1.0

    class Profiler(OnlyUtilization):
        def get_memory_usage(self):
            return {"gpu_memory_used_mb": 1.0}

    resmon.ResourceMonitor(0.01, gpu_profiler=Profiler())  # an instance: taken
    for wrong in (5, "nvml:0", OnlyUtilization(), Profiler):  # Profiler: the class, not an instance
        with pytest.raises(ValueError, match=r"^gpu_profiler must have get_utilization\(\) and get_memory_usage\(\)"):
            resmon.ResourceMonitor(0.01, gpu_profiler=wrong)
