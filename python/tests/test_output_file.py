"""Every file resmon's Python writes keeps the command's rules (README,
"Guarantees: Your files"): resmon._output.write_file, and the pytest
plugin's --resmon-json through it."""

import errno
import json
import os
import stat
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from resmon import _output
from helpers import SAFETY_SEC, bind_mount, reachable_tempdir
from test_pytest_plugin import run_pytest

NOBODY = 65534


def become_nobody():
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


@pytest.fixture
def shared_dir():
    """A directory another user can write (mode 0777, not sticky), under the
    system's temporary directory (pytest's own tmp_path is 0700) -- or, as
    root, where nobody can reach it (reachable_tempdir: elsewhere where
    TMPDIR is closed to nobody; skipped where nowhere is)."""
    if os.getuid() == 0:
        directory = reachable_tempdir(NOBODY, prefix="resmon-output-")
    else:
        directory = tempfile.TemporaryDirectory(prefix="resmon-output-")
    with directory as name:
        os.chmod(name, 0o777)
        yield name


def nobody_runs(argv, **kwargs):
    """Runs argv as the unprivileged user nobody."""
    if os.getuid() != 0:
        pytest.skip("becoming a second user (nobody) needs root")
    kwargs.setdefault("cwd", "/")
    return subprocess.run(argv, preexec_fn=become_nobody, capture_output=True, text=True, timeout=2 * SAFETY_SEC, **kwargs)


def require_nobody_reaches(argv):
    """Skips, saying why, unless nobody can run argv (a probe)."""
    try:
        result = nobody_runs(argv)
    except PermissionError as error:
        result = subprocess.CompletedProcess(argv, 126, "", str(error))
    if result.returncode != 0:
        pytest.skip(f"nobody cannot run {argv}: {result.stderr.strip()[-200:]} "
                    "(a parent directory not searchable by other users?)")


def listing(directory):
    return sorted(os.listdir(directory))


@pytest.mark.parametrize("moment", ["after the walk", "after the directory's lookup"])
def test_a_directory_swapped_by_another_user_after_the_check_sends_nothing_elsewhere(shared_dir, monkeypatch, moment):
    # Review of issue 28: write_file checked the path (os.stat), resolved it
    # and wrote by name: nobody, swapping a directory of the path for a link
    # to one of root's in between, had root's 0600 file replaced by one owned
    # by nobody, 0666 (4 writes of a swapping loop); stop 54's attack won the
    # same race between the checked walk and the directory's open (2415
    # tries).  The swap is made here at the worst moments, by nobody: after
    # the whole walk, and right after the walk looked the directory up.  The
    # report goes where the walk was (the directory now named race.old), and
    # root's file is untouched.
    if os.getuid() != 0:
        pytest.skip("becoming a second user (nobody) needs root")
    race = os.path.join(shared_dir, "race")
    victim = tempfile.mkdtemp(prefix="resmon-victim-")
    try:
        os.mkdir(race)
        os.chown(race, NOBODY, -1)
        theirs = os.path.join(race, "out.json")
        with open(theirs, "w") as f:
            f.write("theirs\n")
        os.chown(theirs, NOBODY, -1)
        os.chmod(theirs, 0o666)
        secret = os.path.join(victim, "out.json")
        with open(secret, "w") as f:
            f.write("secret\n")
        os.chmod(secret, 0o600)
        swapped = []

        def swap():
            result = nobody_runs(["/bin/sh", "-c", 'mv "$1" "$1.old" && ln -s "$2" "$1"', "swap", race, victim])
            assert result.returncode == 0, result.stderr
            swapped.append(True)

        if moment == "after the walk":
            walk = _output._walk_checked

            def walk_then_swap(path):
                walked = walk(path)
                swap()
                return walked

            monkeypatch.setattr(_output, "_walk_checked", walk_then_swap)
        else:
            open_component = _output._open_component

            def open_then_swap(name, dir_fd, directory=False):
                fd = open_component(name, dir_fd, directory)
                if name == "race" and not swapped:
                    swap()
                return fd

            monkeypatch.setattr(_output, "_open_component", open_then_swap)
        _output.write_file(theirs, "new\n")
        monkeypatch.undo()
        assert swapped
        st = os.stat(secret)
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o600)
        with open(secret) as f:
            assert f.read() == "secret\n"
        assert listing(victim) == ["out.json"]
        with open(os.path.join(race + ".old", "out.json")) as f:
            assert f.read() == "new\n"
        assert [n for n in listing(race + ".old") if ".resmon-" in n] == []
    finally:
        subprocess.run(["rm", "-rf", victim])


def test_a_link_planted_at_the_old_temporary_name_by_another_user_is_not_followed(shared_dir):
    # The plugin wrote PATH.tmp<pid> with open(..., "w"): nobody, who may
    # write the directory, plants that name as a link to root's file.
    victim = os.path.join(shared_dir, "victim.txt")
    with open(victim, "w") as f:
        f.write("root's data\n")
    os.chmod(victim, 0o600)
    plant = f"""
        import os, subprocess

        def become_nobody():
            os.setgroups([]); os.setgid({NOBODY}); os.setuid({NOBODY})

        def test_planted():
            subprocess.run(["ln", "-s", {victim!r}, f"{shared_dir}/report.json.tmp{{os.getpid()}}"],
                           preexec_fn=become_nobody, check=True, cwd="/")
    """
    require_nobody_reaches(["ln", "-s", "/nonexistent", os.path.join(shared_dir, "probe")])
    os.unlink(os.path.join(shared_dir, "probe"))
    from pathlib import Path
    result = run_pytest(Path(shared_dir), plant, f"--resmon-json={shared_dir}/report.json")
    assert result.returncode == 0, result.stdout + result.stderr
    with open(victim) as f:
        assert f.read() == "root's data\n"
    report = os.path.join(shared_dir, "report.json")
    assert not os.path.islink(report) and stat.S_ISREG(os.lstat(report).st_mode)
    with open(report) as f:
        assert list(json.load(f)["tests"]) == ["test_generated.py::test_planted"]
    assert not [n for n in listing(shared_dir) if ".resmon-" in n]  # no temporary left


def test_the_report_goes_where_its_path_led_when_the_session_started(shared_dir):
    # Sixth review of issue 28: the path was checked when pytest started and
    # written by name when it ended: a test session later, another user who
    # can write a directory on the path swapped it for a link to theirs,
    # where a link to root's file waited, and root's 0640 file got the
    # report.  The place is resolved and held at the start; a link put at
    # the report's own entry meanwhile is refused, never followed.
    if os.getuid() != 0:
        pytest.skip("becoming a second user (nobody) needs root")
    require_nobody_reaches(["ln", "-s", "/nonexistent", os.path.join(shared_dir, "probe")])
    os.unlink(os.path.join(shared_dir, "probe"))
    victim = os.path.join(shared_dir, "victim.txt")
    with open(victim, "w") as f:
        f.write("root's data\n")
    os.chmod(victim, 0o640)
    race, evil = os.path.join(shared_dir, "race"), os.path.join(shared_dir, "evil")
    os.mkdir(race)
    os.mkdir(evil)
    os.chown(evil, NOBODY, -1)
    os.symlink(victim, os.path.join(evil, "report.json"))
    session = f"""
        import os, subprocess

        def become_nobody():
            os.setgroups([]); os.setgid({NOBODY}); os.setuid({NOBODY})

        def test_swapped():
            subprocess.run(["/bin/sh", "-c", 'mv "$1" "$1.old" && ln -s "$2" "$1"', "swap", {race!r}, {evil!r}],
                           preexec_fn=become_nobody, check=True, cwd="/")
    """
    from pathlib import Path
    result = run_pytest(Path(shared_dir), session, f"--resmon-json={race}/report.json")
    assert result.returncode == 0, result.stdout + result.stderr
    with open(victim) as f:
        assert f.read() == "root's data\n"
    with open(os.path.join(race + ".old", "report.json")) as f:
        assert list(json.load(f)["tests"]) == ["test_generated.py::test_swapped"]
    # A link put at the report's entry, in a directory of the other user's.
    theirs = os.path.join(shared_dir, "theirs")
    os.mkdir(theirs)
    os.chown(theirs, NOBODY, -1)
    report = os.path.join(theirs, "report.json")
    session = f"""
        import os, subprocess

        def become_nobody():
            os.setgroups([]); os.setgid({NOBODY}); os.setuid({NOBODY})

        def test_planted():
            subprocess.run(["ln", "-s", {victim!r}, {report!r}], preexec_fn=become_nobody, check=True, cwd="/")
    """
    result = run_pytest(Path(shared_dir), session, f"--resmon-json={report}")
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, result.stdout + result.stderr
    assert "a symbolic link was put in its place since it was checked; not replaced" in result.stderr
    with open(victim) as f:
        assert f.read() == "root's data\n"
    assert stat.S_IMODE(os.stat(victim).st_mode) == 0o640


def test_a_dangling_link_as_the_report_is_resolved_when_the_session_starts(shared_dir):
    # Review: a dangling link was followed again by name at the end; a
    # directory on the path swapped mid-session sent root's report to a
    # name another user chose (created in root's private directory).
    if os.getuid() != 0:
        pytest.skip("becoming a second user (nobody) needs root")
    require_nobody_reaches(["ln", "-s", "/nonexistent", os.path.join(shared_dir, "probe")])
    os.unlink(os.path.join(shared_dir, "probe"))
    mine = tempfile.mkdtemp(prefix="resmon-mine-")
    try:
        race, evil = os.path.join(shared_dir, "race"), os.path.join(shared_dir, "evil")
        os.mkdir(race)
        os.symlink(os.path.join(mine, "out.json"), os.path.join(race, "r.json"))  # dangling
        os.mkdir(evil)
        os.chown(evil, NOBODY, -1)
        os.symlink(os.path.join(mine, "planted.json"), os.path.join(evil, "r.json"))
        session = f"""
            import os, subprocess

            def become_nobody():
                os.setgroups([]); os.setgid({NOBODY}); os.setuid({NOBODY})

            def test_swapped():
                subprocess.run(["/bin/sh", "-c", 'mv "$1" "$1.old" && ln -s "$2" "$1"', "swap", {race!r}, {evil!r}],
                               preexec_fn=become_nobody, check=True, cwd="/")
        """
        from pathlib import Path
        result = run_pytest(Path(shared_dir), session, f"--resmon-json={race}/r.json")
        assert result.returncode == 0, result.stdout + result.stderr
        assert listing(mine) == ["out.json"]  # the link's target when pytest started; nothing planted
        with open(os.path.join(mine, "out.json")) as f:
            assert list(json.load(f)["tests"]) == ["test_generated.py::test_swapped"]
        assert os.path.islink(os.path.join(race + ".old", "r.json"))
    finally:
        subprocess.run(["rm", "-rf", mine])


def test_a_null_device_as_the_report_stays_a_character_device(tmp_path):
    # A node of its own (major 1, minor 3: what /dev/null is), so that a
    # failure of this test cannot turn the system's /dev/null into a file.
    null = tmp_path / "null"
    try:
        os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        with open(null, "w") as f:
            f.write("probe")
    except OSError as error:
        pytest.skip(f"cannot make and open a device node in {tmp_path} ({error}): needs root, no nodev mount")
    result = run_pytest(tmp_path, "def test_one():\n    pass\n", f"--resmon-json={null}")
    assert result.returncode == 0, result.stdout + result.stderr
    assert stat.S_ISCHR(os.lstat(null).st_mode)
    link = tmp_path / "null.json"
    os.symlink(null, link)
    result = run_pytest(tmp_path, "def test_one():\n    pass\n", f"--resmon-json={link}")
    assert result.returncode == 0, result.stdout + result.stderr
    assert os.path.islink(link) and stat.S_ISCHR(os.lstat(null).st_mode)
    assert not [n for n in listing(tmp_path) if ".resmon-" in n]


def test_a_fifo_is_written_in_place_for_its_reader(tmp_path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    _output.write_file(fifo, '{"x": 1}\n')
    reader.join(timeout=SAFETY_SEC)
    assert received == [b'{"x": 1}\n']
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert listing(tmp_path) == ["pipe.json"]


def test_a_symbolic_link_is_followed_and_kept(tmp_path):
    (tmp_path / "target.json").write_text("old\n")
    os.chmod(tmp_path / "target.json", 0o640)
    os.symlink("target.json", tmp_path / "link.json")
    _output.write_file(str(tmp_path / "link.json"), "new\n")
    assert os.path.islink(tmp_path / "link.json")
    assert (tmp_path / "target.json").read_text() == "new\n"
    assert stat.S_IMODE(os.stat(tmp_path / "target.json").st_mode) == 0o640  # the replaced file's mode
    assert listing(tmp_path) == ["link.json", "target.json"]


def test_writing_never_changes_the_process_umask(tmp_path, monkeypatch):
    # Attack 57a: the umask was read by setting it to 0 and back; a file
    # another thread made in between (3000 reports beside a thread making
    # files, sys.setswitchinterval(1e-6)) was 0666.  Read, never set.
    old = os.umask(0o027)
    set_to = []
    real = os.umask

    def watched(mask):
        set_to.append(mask)
        return real(mask)
    monkeypatch.setattr(os, "umask", watched)
    try:
        _output.write_file(str(tmp_path / "new.json"), "data\n")
    finally:
        real(old)
    assert set_to == []
    assert stat.S_IMODE(os.stat(tmp_path / "new.json").st_mode) == 0o640


def test_a_new_file_gets_0666_minus_the_umask_and_bytes_paths_work(tmp_path):
    old = os.umask(0o027)
    try:
        _output.write_file(os.fsencode(tmp_path / "new\xff.json"), b"data\n")
    finally:
        os.umask(old)
    path = os.path.join(os.fsencode(tmp_path), os.fsencode("new\xff.json"))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    with open(path, "rb") as f:
        assert f.read() == b"data\n"


def test_a_directory_and_a_missing_directory_are_refused_by_name(tmp_path):
    with pytest.raises(IsADirectoryError) as error:
        _output.write_file(tmp_path, "x")
    assert error.value.filename == str(tmp_path)
    with pytest.raises(FileNotFoundError) as error:
        _output.write_file(tmp_path / "no" / "r.json", "x")
    assert error.value.filename == str(tmp_path / "no" / "r.json")


def test_a_read_only_report_is_refused_with_one_line_and_kept(shared_dir):
    # As nobody, for whom access(2) itself refuses (root: see the owner-write-bit test below).
    target = os.path.join(shared_dir, "r.json")
    with open(target, "w") as f:
        f.write("old\n")
    os.chmod(target, 0o444)
    with open(os.path.join(shared_dir, "test_one.py"), "w") as f:
        f.write("def test_one():\n    pass\n")
    require_nobody_reaches([sys.executable, "-c", "import resmon._output, pytest"])
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
    result = nobody_runs([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--resmon-json={target}",
                          "test_one.py"], cwd=shared_dir, env=env)
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, result.stdout + result.stderr
    assert f"resmon: cannot write --resmon-json '{target}': Permission denied" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    with open(target) as f:
        assert f.read() == "old\n"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o444
    # And write_file itself, when the check before the run passed and the file changed since.
    code = f"from resmon import _output\ntry:\n    _output.write_file({target!r}, 'new')\n" \
           "except PermissionError as e:\n    print(e.filename)\n"
    result = nobody_runs([sys.executable, "-c", code])
    assert result.stdout.strip() == target, result.stderr
    assert listing(shared_dir) == ["r.json", "test_one.py"]


def test_a_failed_write_leaves_the_old_file_exactly_as_it_was(tmp_path):
    # A file-size limit makes the write fail half-way (EFBIG), as a full disk would.
    target = tmp_path / "r.json"
    target.write_text("old report\n")
    os.chmod(target, 0o640)
    before = os.stat(target)
    code = f"""
import resource, signal
from resmon import _output
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
try:
    _output.write_file({str(target)!r}, "x" * 100000)
except OSError as e:
    print(e.errno, e.filename)
"""
    result = subprocess.run([sys.executable, "-c", code], cwd="/", capture_output=True, text=True, timeout=SAFETY_SEC)
    import errno
    assert result.stdout.split() == [str(errno.EFBIG), str(target)], result.stderr
    assert target.read_text() == "old report\n"
    after = os.stat(target)
    assert (after.st_ino, after.st_mode, after.st_mtime_ns) == (before.st_ino, before.st_mode, before.st_mtime_ns)
    assert listing(tmp_path) == ["r.json"]  # the temporary file is gone


def _chattr(path, change, request=None):
    """chattr CHANGE PATH (+a, -a, +i, ...); skips where that cannot be done
    (not root, a file system without the flag, no chattr(1)).  With
    request (the test's), undone when the test ends."""
    try:
        done = subprocess.run(["chattr", change, str(path)], capture_output=True, text=True, timeout=SAFETY_SEC)
    except OSError as error:
        pytest.skip(f"cannot run chattr(1): {error}")
    if done.returncode != 0:
        pytest.skip(f"cannot chattr {change} here (needs root and a file system with the flag): "
                    f"{done.stderr.strip()[-200:]}")
    if request is not None:
        request.addfinalizer(lambda: subprocess.run(["chattr", "-" + change[1:], str(path)], capture_output=True,
                                                    timeout=SAFETY_SEC))


def test_a_failed_rename_names_the_path_given_not_the_removed_temporary(tmp_path, monkeypatch):
    # Attack 56a, B5: "resmon: cannot write --resmon-json
    # '.pa.json.resmon-a48ee8ad94': Operation not permitted" -- os.rename's
    # error named the temporary file, already removed; the path given (here
    # a link, kept) is named, and nothing is left beside it.
    target = tmp_path / "r.json"
    target.write_text("old\n")
    link = tmp_path / "link.json"
    os.symlink("r.json", link)
    real_rename = os.rename

    def failing_rename(src, dst, **kwargs):
        raise OSError(errno.EPERM, os.strerror(errno.EPERM), src, None, dst)  # as os.rename names both

    monkeypatch.setattr(os, "rename", failing_rename)
    for given in (str(link), os.fsencode(link)):
        with pytest.raises(PermissionError) as error:
            _output.write_file(given, "new")
        assert (error.value.filename, error.value.filename2) == (given, None)
        assert listing(tmp_path) == ["link.json", "r.json"]
    monkeypatch.setattr(os, "rename", real_rename)
    # The kernel's own refusal: made append-only after the check (when
    # checked, it is refused before anything runs).
    with _output.hold(link) as place:
        _chattr(target, "+a")
        try:
            with pytest.raises(PermissionError) as error:
                _output.write_held(place, "new")
        finally:
            _chattr(target, "-a")
    assert (error.value.filename, error.value.filename2) == (str(link), None)
    assert target.read_text() == "old\n"
    assert listing(tmp_path) == ["link.json", "r.json"]


def _refused_when_checked(path, error_type, reason):
    """write_file's check (hold) refuses path, naming it, for reason."""
    with pytest.raises(error_type) as error:
        _output.check_writable(path)
    assert (error.value.filename, error.value.strerror) == (str(path), reason)


def test_an_output_that_cannot_be_replaced_is_refused_when_checked(tmp_path, request):
    # Attack 56a, B4: os.access says whether a file may be written, not
    # whether the rename at the end may replace it: an append-only or
    # immutable file, an append-only directory, were found only at the
    # session's end (exit 4, the report lost).  As the command's check.
    for change, words in (("+a", "append-only (chattr +a)"), ("+i", "immutable (chattr +i)")):
        target = tmp_path / f"{change[1]}.json"
        target.write_text("old\n")
        _chattr(target, change, request)
        _refused_when_checked(target, PermissionError, f"it is {words}: it cannot be replaced")
        assert target.read_text() == "old\n"
    directory = tmp_path / "d"
    directory.mkdir()
    _chattr(directory, "+a", request)
    _refused_when_checked(directory / "new.json", PermissionError,
                          "its directory is append-only (chattr +a): no file in it can be replaced")
    # pytest: a usage error before any test runs.
    target = tmp_path / "a.json"
    result = run_pytest(tmp_path, f"def test_x():\n    open({str(tmp_path / 'ran')!r}, 'w').close()\n",
                        f"--resmon-json={target}")
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, result.stdout + result.stderr
    assert f"resmon: cannot write --resmon-json '{target}': it is append-only (chattr +a): it cannot be replaced" \
        in result.stderr
    assert not (tmp_path / "ran").exists()
    assert target.read_text() == "old\n"
    assert not [name for name in os.listdir(tmp_path) if ".resmon-" in name]


def test_a_file_mounted_over_the_output_or_a_read_only_directory_is_refused_when_checked(tmp_path, request):
    # Attack 56a, B4: a single file bind-mounted over the output (a
    # container's -v FILE:FILE) cannot be renamed over (EBUSY), told by the
    # mount ids of the file and its directory; a directory that cannot take
    # the temporary file (a read-only mount) was found only at the end.
    source, target = tmp_path / "src.json", tmp_path / "r.json"
    source.write_text("source\n")
    target.write_text("old\n")
    bind_mount(request, source, target)
    with pytest.raises(OSError) as error:
        _output.check_writable(target)
    assert (error.value.errno, error.value.filename) == (errno.EBUSY, str(target))
    assert error.value.strerror == "it is a mount point (a file mounted over it, as a container's single-file " \
        "volume): it cannot be replaced"
    assert source.read_text() == "source\n"
    read_only = tmp_path / "ro"
    read_only.mkdir()
    bind_mount(request, read_only, read_only)
    done = subprocess.run(["mount", "-o", "remount,bind,ro", str(read_only)], capture_output=True, text=True,
                          timeout=SAFETY_SEC)
    if done.returncode != 0:
        pytest.skip(f"cannot make a read-only bind mount here: {done.stderr.strip()[-200:]}")
    _refused_when_checked(read_only / "new.json", OSError,
                          f"cannot create a temporary file beside it: {os.strerror(errno.EROFS)}")


def test_a_directory_without_o_tmpfile_that_takes_no_file_is_refused_when_checked():
    # Stop 56's last attack: where O_TMPFILE is not supported (sysfs, NFS,
    # FUSE) the check fell back to access(2), which says yes to root:
    # --resmon-json under /sys ran the whole session, then failed.  A named
    # probe, made and removed at once, tells.
    if not os.path.isdir("/sys/kernel") or os.statvfs("/sys/kernel").f_flag & os.ST_RDONLY:
        pytest.skip("no writable sysfs here")
    try:
        os.close(os.open("/sys/kernel", os.O_TMPFILE | os.O_WRONLY, 0o600))
        pytest.skip("this sysfs takes O_TMPFILE")
    except OSError as error:
        if error.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
            pytest.skip(f"O_TMPFILE there fails otherwise: {error}")
    name = f"resmon-test-{os.getpid()}.json"
    with pytest.raises(OSError) as error:
        _output.check_writable(os.path.join("/sys/kernel", name))
    assert "cannot create a temporary file beside it" in error.value.strerror
    assert not [n for n in os.listdir("/sys/kernel") if n.startswith((".resmon-probe-", name))]


def test_another_users_file_in_a_sticky_directory_is_refused_before_any_test_runs(tmp_path):
    # Attack 56a, B4: pytest as nobody, root's 0666 file in a sticky
    # /tmp-like directory: writable, but rename(2) over it is refused (only
    # its owner or the directory's may): the session ran, then exit 4.
    if os.getuid() != 0:
        pytest.skip("becoming a second user (nobody) needs root")
    with reachable_tempdir(NOBODY, prefix="resmon-sticky-") as sticky:  # where nobody can reach it
        os.chmod(sticky, 0o1777)
        target = os.path.join(sticky, "r.json")
        with open(target, "w") as f:
            f.write("root's\n")
        os.chmod(target, 0o666)
        with open(os.path.join(sticky, "test_one.py"), "w") as f:
            f.write(f"def test_one():\n    open({os.path.join(sticky, 'ran')!r}, 'w').close()\n")
        require_nobody_reaches([sys.executable, "-c", "import resmon._output, pytest"])
        env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
        result = nobody_runs([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--resmon-json={target}",
                              "test_one.py"], cwd=sticky, env=env)
        assert result.returncode == pytest.ExitCode.USAGE_ERROR, result.stdout + result.stderr
        assert f"resmon: cannot write --resmon-json '{target}': another user's file in a sticky directory: only " \
            "its owner or the directory's can replace it" in result.stderr
        assert not os.path.exists(os.path.join(sticky, "ran"))
        with open(target) as f:
            assert f.read() == "root's\n"
        # Root (CAP_FOWNER) replaces it.
        _output.write_file(target, "new\n")
        with open(target) as f:
            assert f.read() == "new\n"


def test_a_read_only_file_is_refused_for_root_too(tmp_path):
    # os.access lets root write any file: the owner's write bit decides (review, issue 28).
    if os.getuid() != 0:
        pytest.skip("needs root: os.access already refuses a read-only file for anyone else")
    target = tmp_path / "ro"
    target.write_text("old\n")
    os.chmod(target, 0o444)
    with pytest.raises(PermissionError) as error:
        _output.write_file(target, "new")
    assert error.value.filename == str(target)
    with pytest.raises(PermissionError):
        _output.check_writable(target)
    assert target.read_text() == "old\n"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o444
    assert os.listdir(tmp_path) == ["ro"]


def test_a_fifo_swapped_for_a_regular_file_before_the_open_is_not_written_over(tmp_path):
    # write_file checks the path, then opens its entry to write in place: a FIFO (or device)
    # swapped in between for a regular file would get the data over its start, old tail kept.
    # The writer is called as write_held calls it, with the FIFO's stat, on the entry now regular.
    target = tmp_path / "out"
    os.mkfifo(target)
    checked = os.stat(target)
    os.unlink(target)
    target.write_text("old text, longer than the new\n")
    dir_fd = os.open(tmp_path, os.O_PATH | os.O_DIRECTORY)
    try:
        with pytest.raises(BlockingIOError, match="changed while it was being opened") as error:
            _output._write_in_place(dir_fd, "out", os.fspath(target), b"new", checked=checked)
        assert error.value.filename == os.fspath(target)
        assert target.read_text() == "old text, longer than the new\n"
        # A link put at the entry since: refused, not followed.
        os.unlink(target)
        os.symlink("/dev/null", target)
        with pytest.raises(FileExistsError, match="symbolic link"):
            _output._write_in_place(dir_fd, "out", os.fspath(target), b"new", checked=os.stat("/dev/null"))
    finally:
        os.close(dir_fd)
    # And what was checked is still written in place: a FIFO with a reader.
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    _output.write_file(fifo, "data")
    reader.join(timeout=SAFETY_SEC)
    assert got == [b"data"]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root, to give the link to a second user (nobody)")
def _sticky_with_links(sticky, links):
    """A directory every user may write (1777, as /tmp) holding nobody's
    links (name -> target): another user's, which the protected_symlinks
    rule refuses to follow."""
    os.mkdir(sticky)
    os.chmod(sticky, 0o1777)
    for name, target in links.items():
        os.symlink(target, os.path.join(sticky, name))
        os.lchown(os.path.join(sticky, name), NOBODY, NOBODY)
    return sticky


def test_another_users_dangling_link_in_a_sticky_directory_is_not_followed():
    # Eighth review of issue 28: a dangling link's target is resolved by
    # realpath(), not by the kernel's open, so the kernel's
    # fs.protected_symlinks rule is kept here, as the command keeps it.
    with tempfile.TemporaryDirectory() as top:
        victim = os.path.join(top, "victim.json")
        link = os.path.join(_sticky_with_links(os.path.join(top, "sticky"), {"r.json": victim}), "r.json")
        with pytest.raises(PermissionError):
            _output.write_file(link, "report")
        assert not os.path.exists(victim)
        os.lchown(link, 0, 0)  # root's own link: followed, the link kept
        _output.write_file(link, "report")
        assert os.path.islink(link)
        with open(victim) as f:
            assert f.read() == "report"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root, to give the link to a second user (nobody)")
def test_another_users_link_to_an_existing_file_in_a_sticky_directory_is_not_followed():
    # Stop 54's attack on issue 28: the rule above held for dangling links
    # only; os.stat() and realpath() followed a link to an existing file
    # (with fs.protected_symlinks=0, the kernel's default), and root's report
    # replaced the victim.  Also a link as a directory on the way (to an
    # existing file or a new one), and one to a device; bytes paths too.
    with tempfile.TemporaryDirectory() as top:
        victim = os.path.join(top, "victim.json")
        with open(victim, "w") as f:
            f.write("ORIGINAL")
        sticky = _sticky_with_links(os.path.join(top, "sticky"), {"r.json": victim, "dir": top,
                                                                   "null.json": "/dev/null"})
        for path in (os.path.join(sticky, "r.json"), os.path.join(sticky, "dir", "victim.json"),
                     os.path.join(sticky, "dir", "new.json"), os.path.join(sticky, "null.json"),
                     os.fsencode(os.path.join(sticky, "r.json"))):
            with pytest.raises(PermissionError, match="another user's symbolic link"):
                _output.write_file(path, "report")
            with open(victim) as f:
                assert f.read() == "ORIGINAL", path
            assert not os.path.exists(os.path.join(top, "new.json"))
        # Root's dangling link reached through nobody's link to its directory
        # (stop 54's second attack: the report was made where it led).
        os.symlink(os.path.join(top, "made.json"), os.path.join(top, "dangling.json"))
        with pytest.raises(PermissionError, match="another user's symbolic link"):
            _output.write_file(os.path.join(sticky, "dir", "dangling.json"), "report")
        assert not os.path.exists(os.path.join(top, "made.json"))
        os.lchown(os.path.join(sticky, "r.json"), 0, 0)  # root's own link: followed, the link kept
        _output.write_file(os.path.join(sticky, "r.json"), "report")
        assert os.path.islink(os.path.join(sticky, "r.json"))
        with open(victim) as f:
            assert f.read() == "report"


def test_a_fifo_whose_reader_stops_reading_is_given_up(tmp_path):
    # Eighth review of issue 28: a report larger than the pipe's buffer, to a
    # FIFO whose reader opened it and stopped reading, hung pytest for ever;
    # it is given up after the command's 5 s without progress.
    fifo = tmp_path / "r.json"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # there, never reading
    try:
        done = []
        writer = threading.Thread(target=lambda: done.append(_write_or_error(fifo, "x" * 400_000)))
        writer.start()
        writer.join(timeout=SAFETY_SEC)
        assert not writer.is_alive(), "the write to a FIFO nobody reads hung"
        assert isinstance(done[0], TimeoutError), done
        assert "the reader stopped reading" in str(done[0])
        assert done[0].filename == os.fspath(fifo)
    finally:
        os.close(reader)


def _write_or_error(path, text):
    try:
        _output.write_file(path, text)
    except OSError as error:
        return error
    return None


def test_a_link_planted_at_the_end_of_a_checked_dangling_chain_is_not_followed(tmp_path, monkeypatch):
    # Ninth review of issue 28: the chain was checked, then resolved again
    # by realpath(); a link another user planted at its end in between (in
    # /tmp, 1 run in ~8000) was followed, and root's report went where it
    # pointed.  The race is made certain here: the link is planted as soon
    # as the check found the chain's end missing.  The name the checked
    # chain led to is the one used: a link found there at the write is
    # refused, its target untouched.
    end = tmp_path / "new.json"
    victim = tmp_path / "victim.json"
    link = tmp_path / "out.json"
    os.symlink(end, link)
    open_component = _output._open_component

    def open_then_plant(name, dir_fd, directory=False):
        try:
            return open_component(name, dir_fd, directory)
        except FileNotFoundError:
            if name == end.name:
                os.symlink(victim, end)
            raise

    monkeypatch.setattr(_output, "_open_component", open_then_plant)
    try:
        with pytest.raises(FileExistsError):
            _output.write_file(link, "report")
    finally:
        monkeypatch.undo()
    assert not os.path.exists(victim)
    assert os.readlink(end) == os.fspath(victim)
    assert os.path.islink(link)


def test_a_dangling_chain_is_resolved_as_the_kernel_resolves_it(tmp_path):
    # Ninth review of issue 28: realpath() resolved the chain as text, so a
    # link to "missing/../t.json" made t.json (the kernel, and the command,
    # say ENOENT) and one to "nodir/" made a file named nodir; a chain of
    # exactly 40 links, which the kernel follows, was accepted (the command
    # refused it: fixed there).
    os.symlink("missing/../t.json", tmp_path / "d.json")
    with pytest.raises(FileNotFoundError):
        _output.write_file(tmp_path / "d.json", "x")
    assert not os.path.exists(tmp_path / "t.json")
    os.symlink("nodir/", tmp_path / "slash.json")
    with pytest.raises(OSError):
        _output.write_file(tmp_path / "slash.json", "x")
    assert not os.path.exists(tmp_path / "nodir")
    previous = "end.json"
    for i in range(40):
        os.symlink(previous, tmp_path / f"c{i}")
        previous = f"c{i}"
    _output.write_file(tmp_path / "c39", "forty")  # 40 links: followed
    assert (tmp_path / "end.json").read_text() == "forty"
    os.unlink(tmp_path / "end.json")
    os.symlink("c39", tmp_path / "c40")  # 41: refused, as the kernel does
    with pytest.raises(OSError) as caught:
        _output.write_file(tmp_path / "c40", "x")
    assert caught.value.errno == errno.ELOOP
    assert not os.path.exists(tmp_path / "end.json")


def test_a_terminal_whose_reader_stops_reading_is_given_up():
    # Ninth review of issue 28: only a FIFO's write was bounded; a terminal
    # nobody reads (Ctrl-S, a stalled ssh) hung pytest --resmon-json
    # /dev/stdout for ever.  Every in-place write gives up after 5 s.
    import pty
    master, slave = pty.openpty()
    try:
        done = []
        name = os.ttyname(slave)
        writer = threading.Thread(target=lambda: done.append(_write_or_error(name, "y" * 1_000_000)))
        writer.start()
        writer.join(timeout=SAFETY_SEC)
        assert not writer.is_alive(), "the write to a terminal nobody reads hung"
        assert isinstance(done[0], TimeoutError), done
        assert "the reader stopped reading" in str(done[0])
    finally:
        os.close(master)
        os.close(slave)


def test_a_file_another_user_made_at_the_name_since_the_check_does_not_get_the_report(shared_dir):
    if os.geteuid() != 0:
        pytest.skip("giving a file to a second user (nobody) needs root")
    # Tenth review of issue 28: a name free at the session's start, made by
    # another user before its end (0666, theirs), had its owner and mode
    # copied onto root's report: theirs to rewrite.  Only the file there
    # when checked keeps its owner and mode.
    target = os.path.join(shared_dir, "r.json")
    place = _output.hold(target)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        os.fchmod(fd, 0o666)
        os.fchown(fd, NOBODY, NOBODY)
        os.close(fd)
        _output.write_held(place, "report")
    finally:
        place.close()
    st = os.stat(target)
    assert (st.st_uid, st.st_gid) == (os.geteuid(), os.getegid())
    assert stat.S_IMODE(st.st_mode) == 0o666 & ~_umask()
    with open(target) as f:
        assert f.read() == "report"
    # The file that was there when checked keeps its owner and mode.
    os.chown(target, NOBODY, NOBODY)
    os.chmod(target, 0o640)
    _output.write_file(target, "again")
    st = os.stat(target)
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (NOBODY, 0o640)
    # Eleventh review: removed after the check and made again by another
    # user (ext4 gave it the same inode number: the check by inode passed),
    # or replaced by an editor's save: the owner and mode taken at the
    # check, as the command takes them at its start.
    os.chown(target, 0, 0)
    os.chmod(target, 0o600)
    place = _output.hold(target)
    try:
        os.unlink(target)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        os.fchmod(fd, 0o666)
        os.fchown(fd, NOBODY, NOBODY)
        os.close(fd)
        _output.write_held(place, "third")
    finally:
        place.close()
    st = os.stat(target)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (0, 0, 0o600)


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_test_that_closes_descriptors_does_not_send_the_report_elsewhere(tmp_path):
    # Finding F6: the report's directory was held as a descriptor number
    # for the whole session; a test that closed descriptors it did not open
    # (os.closerange) and then opened another directory gave that number to
    # it, and the report was written there, silently -- the path given held
    # nothing.  The directory's identity is kept with it: a number that is
    # no longer it is walked again by the same checks, to that directory.
    (tmp_path / "out").mkdir()
    (tmp_path / "other").mkdir()
    result = run_pytest(tmp_path, f"""
        import os

        def test_closes_descriptors():
            os.closerange(3, 256)
            for _ in range(60):
                os.open({str(tmp_path / "other")!r}, os.O_RDONLY | os.O_DIRECTORY)

        def test_next():
            pass
    """, "-s", f"--resmon-json={tmp_path}/out/report.json")
    assert result.returncode == 0, result.stdout + result.stderr
    assert os.listdir(tmp_path / "other") == []
    with open(tmp_path / "out" / "report.json") as f:
        assert len(json.load(f)["tests"]) == 2


def test_a_held_directory_whose_descriptor_was_closed_is_found_again_or_refused(tmp_path):
    # The same, by the module: the number closed and taken by another
    # directory.  While the path leads to the directory held, the report
    # goes there; once it leads to another (the held one renamed away), it
    # is refused, never written where the path leads now.  The other
    # directory's descriptor is not closed by the Place (not its own).
    out, other = tmp_path / "out", tmp_path / "other"
    out.mkdir()
    other.mkdir()
    for moved in (False, True):
        place = _output.hold(str(out / "r.json"))
        number = place.dir_fd
        os.close(number)
        taken = os.open(other, os.O_RDONLY | os.O_DIRECTORY)
        os.dup2(taken, number)  # the number, another directory's now
        os.close(taken)
        try:
            if moved:
                os.rename(out, tmp_path / "away")
                out.mkdir()
                with pytest.raises(OSError) as caught:
                    _output.write_held(place, "report")
                assert caught.value.errno == errno.ESTALE and caught.value.filename == str(out / "r.json")
                assert "the path now leads elsewhere" in caught.value.strerror
                assert os.listdir(out) == [] and os.listdir(tmp_path / "away") == ["r.json"]
            else:
                _output.write_held(place, "report")
                assert (out / "r.json").read_text() == "report"
            place.close()
            assert os.listdir(other) == []
            os.fstat(number)  # still open: the other directory's
        finally:
            os.close(number)


def test_a_report_behind_a_stream_a_test_redirected_is_refused(tmp_path):
    # Standard output behind --resmon-json=/dev/stdout (a regular file)
    # that a test redirects (os.dup2) and leaves so is no longer the file
    # given: the report is refused in one line, not written into the
    # test's file.
    (tmp_path / "test_generated.py").write_text(
        "import os\n\n"
        "def test_redirects():\n"
        f"    fd = os.open({str(tmp_path / 'other.log')!r}, os.O_WRONLY | os.O_CREAT, 0o644)\n"
        "    os.dup2(fd, 1)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
    with open(tmp_path / "log", "w") as log:
        result = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-s",
                                 "--resmon-json=/dev/stdout", "test_generated.py"], cwd=tmp_path, stdout=log,
                                stderr=subprocess.PIPE, text=True, timeout=2 * SAFETY_SEC, env=env)
    assert result.returncode == 4, result.stderr
    assert "resmon: cannot write --resmon-json '/dev/stdout': standard output is no longer the file it was when " \
           "pytest started (a test closed or redirected it); nothing was written" in result.stderr, result.stderr
    assert "resmon_version" not in (tmp_path / "other.log").read_text()


def test_a_socket_is_refused_when_checked_not_after_the_session(tmp_path):
    # Attack 57a: a socket file at --resmon-json's name passed the check
    # at the start; the open at the end failed (ENXIO: a socket is never
    # opened), the whole session run for a report it could not write.  The
    # command refuses it before COMMAND starts; the plugin now before the
    # tests do.
    import socket
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as bound:
        bound.bind(str(tmp_path / "sock.json"))
        with pytest.raises(OSError) as refused:
            _output.check_writable(str(tmp_path / "sock.json"))
        assert refused.value.errno == errno.ENXIO
        result = run_pytest(tmp_path, """
            def test_runs():
                open("ran", "w").close()
        """, "--resmon-json=sock.json")
    assert result.returncode == 4, result.stdout + result.stderr
    assert "resmon: cannot write --resmon-json 'sock.json': No such device or address" in result.stderr, result.stderr
    assert not (tmp_path / "ran").exists()


def test_a_device_or_fifo_this_user_may_not_write_is_refused_when_checked(shared_dir):
    # Attack 57a: as a user who may not write it, --resmon-json /dev/vda
    # passed the check at the start and failed at the end ("Permission
    # denied", the whole session run); the command refuses it before
    # COMMAND starts.  A FIFO of root's, 0644, the same.
    fifo = os.path.join(shared_dir, "root.fifo")
    os.mkfifo(fifo, 0o644)
    require_nobody_reaches([sys.executable, "-c", "import resmon"])
    probe = "import sys\nfrom resmon import _output\ntry:\n    _output.check_writable(sys.argv[1])\n" \
            "except PermissionError as e:\n    print('refused', e.errno)\nelse:\n    print('accepted')\n"
    result = nobody_runs([sys.executable, "-c", probe, fifo])
    assert result.stdout.strip() == f"refused {errno.EACCES}", result.stdout + result.stderr


def test_dev_tty_without_a_controlling_terminal_is_refused_when_checked():
    # Attack 57a: in a session with no controlling terminal (CI, setsid),
    # --resmon-json /dev/tty passed the check and failed at the end ("No
    # such device or address", after the whole session); the command's
    # open at its start refuses it.
    probe = "from resmon import _output\ntry:\n    _output.check_writable('/dev/tty')\n" \
            "except OSError as e:\n    print('refused', e.errno)\nelse:\n    print('accepted')\n"
    result = subprocess.run([sys.executable, "-c", probe], start_new_session=True, stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=2 * SAFETY_SEC)
    assert result.stdout.strip() == f"refused {errno.ENXIO}", result.stdout + result.stderr


def test_a_fifo_nobody_opens_is_given_up(tmp_path):
    # Tenth review of issue 28: with no reader, the open blocked for ever
    # (pytest hung at its end); it gives up after 5 s.
    fifo = tmp_path / "r.json"
    os.mkfifo(fifo)
    done = []
    writer = threading.Thread(target=lambda: done.append(_write_or_error(fifo, "x")))
    writer.start()
    writer.join(timeout=SAFETY_SEC)
    assert not writer.is_alive(), "the write to a FIFO nobody opens hung"
    assert isinstance(done[0], TimeoutError), done
    assert "no reader opened it" in str(done[0])


def test_dev_stdout_on_a_regular_file_is_written_where_stdout_stands(tmp_path):
    # Tenth review of issue 28: /dev/stdout naming a regular file was
    # replaced as a file: what it held before the report was lost.
    out = tmp_path / "o.txt"
    code = ("import sys; from resmon import _output; print('before', flush=True); "
            "_output.write_file('/dev/stdout', 'REPORT\\n'); print('after')")
    with open(out, "w") as f:
        subprocess.run([sys.executable, "-c", code], stdout=f, check=True, timeout=SAFETY_SEC)
    assert out.read_text() == "before\nREPORT\nafter\n"
    # ... and through a link to it (eleventh review), as the command does.
    link = tmp_path / "link.json"
    os.symlink("/dev/stdout", link)
    code = code.replace("'/dev/stdout'", repr(os.fspath(link)))
    with open(out, "w") as f:
        subprocess.run([sys.executable, "-c", code], stdout=f, check=True, timeout=SAFETY_SEC)
    assert out.read_text() == "before\nREPORT\nafter\n"


def test_the_file_behind_stderr_or_stdout_by_any_name_is_written_where_it_stands(tmp_path):
    # Stop 53's attack on issue 28: "pytest --resmon-json=/dev/stderr > log
    # 2>&1" replaced log with the report alone (pytest's whole output gone);
    # so did the file behind stdout named by its own path.
    out = tmp_path / "o.txt"
    for name, streams in (("/dev/stderr", {"stderr": None}), ("/proc/self/fd/2", {"stderr": None}),
                          (os.fspath(out), {"stderr": None}), (os.fspath(out), {"stderr": subprocess.DEVNULL})):
        code = ("import sys; from resmon import _output; print('before', flush=True); "
                f"print('err', file=sys.stderr); _output.write_file({name!r}, 'REPORT\\n'); print('after')")
        with open(out, "w") as f:
            streams = dict(streams)
            if streams["stderr"] is None:
                streams["stderr"] = subprocess.STDOUT
            subprocess.run([sys.executable, "-c", code], stdout=f, check=True, timeout=SAFETY_SEC, **streams)
        text = out.read_text()
        expected = ["before", "REPORT", "after"] if streams["stderr"] == subprocess.DEVNULL else \
            ["before", "err", "REPORT", "after"]
        assert text.splitlines() == expected, (name, text)
    # On a line of its own, as the command starts its JSON (a review of stop
    # 53: glued to pytest's last "[100%]"), also where the file is open for
    # writing only (">> log").
    out.write_text("no newline")
    code = ("import sys; from resmon import _output; sys.stdout.write('cmd'); sys.stdout.flush(); "
            "_output.write_file('/dev/stdout', 'REPORT\\n')")
    with open(out, "a") as f:
        subprocess.run([sys.executable, "-c", code], stdout=f, check=True, timeout=SAFETY_SEC)
    assert out.read_text() == "no newlinecmd\nREPORT\n"
    # Behind both streams, read-only at stdout ("1<log 2>log"): stderr's
    # file (stop 54: the write went to stdout and failed with EBADF).
    for name in ("/dev/stderr", os.fspath(out)):
        out.write_text("before\n")
        code = f"from resmon import _output; _output.write_file({name!r}, 'REPORT\\n')"
        with open(out) as reading, open(out, "a") as f:
            subprocess.run([sys.executable, "-c", code], stdout=reading, stderr=f, check=True, timeout=SAFETY_SEC)
        assert out.read_text() == "before\nREPORT\n", name
    # A read-only file behind a stdout open for writing (root opened it):
    # the stream writes it, as the command's does (stop 54: refused, its
    # mode checked before the stream).
    if os.geteuid() == 0:
        out.write_text("before\n")
        os.chmod(out, 0o444)
        code = "from resmon import _output; _output.write_file('/dev/stdout', 'REPORT\\n')"
        with open(out, "a") as f:
            subprocess.run([sys.executable, "-c", code], stdout=f, check=True, timeout=SAFETY_SEC)
        assert out.read_text() == "before\nREPORT\n"


def test_a_steady_reader_slower_than_a_page_in_the_bound_is_not_given_up(tmp_path):
    # Tenth review of issue 28: a pipe frees room a page at a time, so a
    # reader taking 100 bytes every 0.2 s (a page in 8 s) let no write
    # through in 5 s and was given up as stopped.  What it takes counts.
    import fcntl
    import select as select_module
    fifo = tmp_path / "r.json"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    fcntl.fcntl(reader, 1031, 4096)  # F_SETPIPE_SZ: one page
    got = []

    def read_steadily_then_fast():
        slow_until = time.monotonic() + 9
        while True:
            select_module.select([reader], [], [])
            try:
                chunk = os.read(reader, 100 if time.monotonic() < slow_until else 65536)
            except BlockingIOError:
                continue
            if not chunk:
                return
            got.append(chunk)
            if time.monotonic() < slow_until:
                time.sleep(0.2)  # the reader's pace, not a synchronisation

    thread = threading.Thread(target=read_steadily_then_fast)
    thread.start()
    try:
        assert _write_or_error(fifo, "x" * 20_000) is None
    finally:
        thread.join(timeout=SAFETY_SEC)
        os.close(reader)
    assert b"".join(got) == b"x" * 20_000


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root, to give the link to a second user (nobody)")
def test_another_users_link_to_the_file_behind_stdout_is_not_followed(tmp_path):
    # Stop 55's attack: hold() looked for the file behind stdout or stderr
    # with os.stat() before the checked walk, so nobody's link in /tmp to
    # root's log (pytest's stdout appending to it) sent the report into it.
    log = tmp_path / "root.log"
    log.write_text("root's log\n")
    sticky = _sticky_with_links(os.fspath(tmp_path / "sticky"), {"r.json": os.fspath(log)})
    child = subprocess.run([sys.executable, "-c", "import sys\nfrom resmon import _output\n"
                            "try:\n    _output.write_file(sys.argv[1], 'REPORT')\nexcept PermissionError as e:\n"
                            "    sys.exit(str(e))\n", os.path.join(sticky, "r.json")],
                           stdout=open(log, "a"), stderr=subprocess.PIPE, text=True, timeout=SAFETY_SEC)
    assert "another user's symbolic link" in child.stderr, child.stderr
    assert log.read_text() == "root's log\n"
    # nobody's hard link to the log (fs.protected_hardlinks=0; made by root here): replaced by its name.
    hard = os.path.join(sticky, "hard.json")
    os.link(log, hard)
    child = subprocess.run([sys.executable, "-c", "import sys\nfrom resmon import _output\n"
                            "_output.write_file(sys.argv[1], 'REPORT')\n", hard],
                           stdout=open(log, "a"), stderr=subprocess.PIPE, text=True, timeout=SAFETY_SEC)
    assert child.returncode == 0, child.stderr
    assert log.read_text() == "root's log\n"
    with open(hard) as f:
        assert f.read() == "REPORT"


def test_a_name_of_long_characters_gets_its_temporary_file(tmp_path):
    # Stop 55's second attack: the temporary file's name was cut at 200
    # characters, not bytes: 120 "é" (240 bytes) and ".json" made a name
    # over NAME_MAX ("File name too long") that the command writes.
    target = tmp_path / ("é" * 120 + ".json")
    _output.write_file(target, "x")
    assert target.read_text() == "x"
    assert [n for n in os.listdir(tmp_path) if ".resmon-" in n] == []


def test_procfs_is_told_by_its_type_on_any_mount(tmp_path):
    # Stop 55's attack: a link in a second procfs mount (/host/proc) was not
    # taken for one (st_dev against /proc's), and its text was walked to
    # another file.  fstatfs's type tells any mount.
    fd = os.open("/proc/self", os.O_PATH | os.O_DIRECTORY)
    try:
        assert _output._is_proc(fd)
    finally:
        os.close(fd)
    fd = os.open(tmp_path, os.O_PATH | os.O_DIRECTORY)
    try:
        assert not _output._is_proc(fd)
    finally:
        os.close(fd)
    if os.geteuid() != 0:
        return
    second = tmp_path / "proc2"
    second.mkdir()
    if subprocess.run(["mount", "-t", "proc", "proc", os.fspath(second)], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a second procfs here")
    try:
        fd = os.open(second, os.O_PATH | os.O_DIRECTORY)
        try:
            assert _output._is_proc(fd)
        finally:
            os.close(fd)
    finally:
        subprocess.run(["umount", os.fspath(second)])


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root, to give the files to a second user (nobody)")
def test_another_users_fifo_or_file_in_a_sticky_directory_is_refused(tmp_path):
    # Stop 55's third attack: nobody's FIFO at the report's name in /tmp got
    # the report; nobody's 0666 file there had its owner and mode kept on it.
    sticky = _sticky_with_links(os.fspath(tmp_path / "sticky"), {})
    fifo, plain = os.path.join(sticky, "f.json"), os.path.join(sticky, "r.json")
    os.mkfifo(fifo)
    os.chown(fifo, NOBODY, NOBODY)
    with open(plain, "w"):
        pass
    os.chown(plain, NOBODY, NOBODY)
    for path, rule in ((fifo, "protected_fifos"), (plain, "protected_regular")):
        with pytest.raises(PermissionError, match=f"as fs.{rule} refuses"):
            _output.hold(path)
    assert os.stat(plain).st_size == 0
    os.chmod(sticky, 0o1770)  # only a group may write it (the rules' level 2): the same
    os.chown(sticky, 0, NOBODY)
    with pytest.raises(PermissionError, match="as fs.protected_regular refuses"):
        _output.hold(plain)


def test_the_compare_checks_temporary_files_go_nowhere_else_when_their_directory_is_swapped(shared_dir, monkeypatch):
    # Attack 58: --resmon-compare wrote its check files (empty.json,
    # limits.json, this-session.json) by name in a temporary directory; in
    # a TMPDIR others may write without the sticky bit, nobody renamed the
    # directory away and made one of the same name holding links to root's
    # 0600 file, which the session's probe then replaced (and the engine
    # read another's first word into its error).  The files now go through
    # the directory's descriptor; and such a TMPDIR is refused (review 58b:
    # another of root's own directories swapped in had its files removed by
    # the clean-up), as the marks channel refuses it.  Here nobody tries
    # the swap between the check's two writes.
    if os.getuid() != 0:
        pytest.skip("becoming a second user (nobody) needs root")
    require_nobody_reaches(["ls", shared_dir])
    import resmon.pytest_plugin as plugin
    victim = tempfile.mkdtemp(prefix="resmon-victim-")
    try:
        secret = os.path.join(victim, "secret")
        with open(secret, "w") as f:
            f.write("root secret\n")
        os.chmod(secret, 0o600)
        baseline = os.path.join(victim, "baseline.json")
        with open(baseline, "w") as f:
            json.dump({"resmon_version": "0.4.0", "tests": {"t.py::test_a": {"cpu_sec": 1.0}}}, f)
        monkeypatch.setattr(tempfile, "tempdir", shared_dir)
        real = plugin._compare_run
        swapped = []

        def swap_then_run(args, base, new, utf8=True):
            made = [n for n in os.listdir(shared_dir) if n.startswith("resmon-compare-")]
            if made and not swapped:
                links = " && ".join(f'ln -s "$2" "$1/{n}"' for n in ("empty.json", "limits.json", "this-session.json"))
                result = nobody_runs(["/bin/sh", "-c", f'mv "$1" "$1.moved" && mkdir "$1" && {links}', "swap",
                                      os.path.join(shared_dir, made[0]), secret])
                assert result.returncode == 0, result.stderr
                swapped.append(made[0])
            return real(args, base, new, utf8)

        monkeypatch.setattr(plugin, "_compare_run", swap_then_run)
        with pytest.raises(OSError) as refused:
            plugin._check_baseline(baseline, ["--max-increase=cpu_sec=10%"])
        monkeypatch.undo()
        assert "without the sticky bit" in str(refused.value)
        assert not swapped and listing(shared_dir) == []  # refused before anything was made
        st = os.stat(secret)
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o600)
        with open(secret) as f:
            assert f.read() == "root secret\n"
        # With the sticky bit the directory is the session's: checked, nothing left behind.
        os.chmod(shared_dir, 0o1777)
        monkeypatch.setattr(tempfile, "tempdir", shared_dir)
        _, rows, _ = plugin._check_baseline(baseline, ["--max-increase=cpu_sec=10%"])
        assert rows == frozenset({"t.py::test_a::cpu_sec"})
        assert listing(shared_dir) == []
    finally:
        subprocess.run(["rm", "-rf", victim])
