"""Every file resmon's Python writes, written by the command's rules.

The README's "Guarantees: Your files", as tools/resmon/output_file.c applies
them, in one place for the Python package: a regular file (or a path that
does not exist yet) is written to a temporary file beside it
(``.NAME.resmon-XXXXXXXX``, made with O_EXCL|O_NOFOLLOW, so a link planted
under any name is never followed, in the directory held open from the
check to the rename, so a directory on the path swapped meanwhile sends
nothing elsewhere; created with the replaced
file's mode and, where allowed, owner, or 0666 minus the umask) and renamed
over the path only when complete; on any error the temporary file is
removed and the old file is exactly as it was.  A symbolic link is followed
and kept (the file it points to is replaced).  A device or FIFO
(``/dev/null``, a named pipe) is written in place and never removed.  A
read-only file (no write bit for its owner, root too) is refused, not
replaced, as is one the rename could not replace (append-only or immutable,
mounted over, another user's in a sticky directory) and a directory that
cannot take the temporary file.  A device or FIFO must still be what was checked once opened.
A directory is refused.
"""

from __future__ import annotations

import errno
import fcntl
import os
import select
import stat
import struct
import sys
import time
from typing import Union

PathArg = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]


class Place:
    """Where write_held will write, resolved when checked (hold): a report
    written at the end of a session goes where the path led at its start.
    Written once a whole pytest session later, a path resolved again by
    name let another user who can write a directory on it (swapped for a
    link) or the report's own directory (a link put at its entry) send
    root's report over a file of their choosing.  Close it (or use it as a
    context manager) to let the directory go."""

    def __init__(self, path: str | bytes) -> None:
        self.path = path
        self.in_place: os.stat_result | None = None  # a device or FIFO, as it was checked
        self.dir_fd = -1       # the directory of the file replaced (or of the device), held open (O_PATH)
        self.name: str | bytes = ""  # the entry in it (never a link: followed when checked)
        self.proc_link = False  # the entry is a /proc link to a pipe or socket: opened following it
        self.final: str | bytes = path  # the file replaced (links resolved)
        self.existing: os.stat_result | None = None  # the regular file there when checked
        self.stream_fd = -1    # 1 or 2: the regular file behind stdout or stderr, written where that stream stands
        # What dir_fd and stream_fd were when held, (st_dev, st_ino): a
        # descriptor is a number, and the process's own code may close it
        # (os.closerange in a test) and open another file under it -- the
        # report went into whatever directory a test opened next (finding
        # F6).  Checked before every use, and before dir_fd is closed.
        self.dir_id: tuple[int, int] | None = None
        self.stream_id: tuple[int, int] | None = None

    def close(self) -> None:
        if self.dir_fd >= 0:
            if _still(self.dir_fd, self.dir_id):
                os.close(self.dir_fd)
            self.dir_fd = -1  # else its number is another's now: not closed

    def __enter__(self) -> "Place":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()


def hold(path: PathArg) -> Place:
    """Checks path as write_file would and holds what it resolved to.
    Raises OSError (with the path) when it would be refused for what it is
    now: a directory, a read-only file, one the rename at the end could not
    replace, a missing directory or one that cannot take the temporary file,
    a link the protected_symlinks rule refuses, a path that changed while it
    was resolved."""
    path = os.fspath(path)
    place = Place(path)
    # Everything by the checked walk: the directory it reached is held and
    # every later step is relative to it, never the path again.  First,
    # before the streams below: looked up by os.stat(), another user's link
    # in /tmp to root's log led the report into the log behind pytest's
    # stdout (stop 55's attack).
    walked = _walk_checked(path)
    place.dir_fd, place.name, place.final, st, place.proc_link = walked
    held = os.fstat(place.dir_fd)
    place.dir_id = (held.st_dev, held.st_ino)
    # Only where the name is the user's: another user's hard link to root's
    # log in /tmp (fs.protected_hardlinks=0) would send the report into the
    # log; replaced by name instead, the log keeps its own (stop 55's second
    # attack).  A socket behind /dev/stdout (the journal's) is that stream
    # too: it cannot be opened again.  A pipe or terminal is opened again,
    # its own file whose writes give up when the reader stops reading.
    may_be_stream = st is not None and (
        (place.proc_link and stat.S_ISSOCK(st.st_mode)) or
        (stat.S_ISREG(st.st_mode) and (st.st_nlink <= 1 or _shared_directory_owner(place.dir_fd) is None)))
    stream = _standard_stream_of(st) if may_be_stream else -1
    if stream >= 0:
        # Standard output or error, by any name (/dev/stdout, /dev/stderr,
        # the file's own path), as the command's "-": replaced as a file,
        # everything the file held before was lost (tenth review of issue
        # 28; stop 53's attack: a report given /dev/stderr under "pytest >
        # log 2>&1" left the JSON alone).  Before the file's own checks, as
        # the command: its mode is not what writes it (stop 54's attack: a
        # 0444 file behind a writable stdout was refused).
        place.close()
        place.stream_fd = stream
        place.stream_id = (st.st_dev, st.st_ino)
        return place
    try:
        if st is not None and place.proc_link and stat.S_ISREG(st.st_mode):  # a deleted file behind /proc/PID/fd/N
            raise FileNotFoundError(errno.ENOENT, "the file it names was deleted; nothing was written", path)
        if st is not None and stat.S_ISSOCK(st.st_mode):
            # open(2) never opens a socket (ENXIO), by its name or its /proc
            # link: refused now, as the command refuses it before COMMAND
            # starts -- found at the end, the session had run for nothing
            # (attack 57a).  Standard output on one (the journal's) is a
            # stream, above.
            raise OSError(errno.ENXIO, os.strerror(errno.ENXIO), path)
        if st is not None and stat.S_ISCHR(st.st_mode) and os.major(st.st_rdev) == 5 and os.minor(st.st_rdev) <= 1:
            # /dev/tty (or /dev/console): the terminal behind it, none in a
            # session without one (CI, setsid) -- opened now as the command
            # opens it at its start, never making it this process's.
            flags = os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if place.proc_link else os.O_NOFOLLOW)
            try:
                os.close(os.open(place.name, flags, dir_fd=place.dir_fd))
            except OSError as error:
                raise type(error)(error.errno, os.strerror(error.errno), path) from None
        if (st is not None and not place.proc_link and (stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode))
                and st.st_uid != os.geteuid()
                and _shared_directory_owner(place.dir_fd) not in (None, st.st_uid)):
            # The kernel's fs.protected_regular and protected_fifos rules,
            # kept whatever the sysctls say (the command's too): another
            # user's FIFO at the name got the report; their file's owner
            # and mode were kept on it (stop 55's third attack).
            what = "FIFO" if stat.S_ISFIFO(st.st_mode) else "file"
            rule = "protected_fifos" if stat.S_ISFIFO(st.st_mode) else "protected_regular"
            raise PermissionError(errno.EACCES, f"another user's {what} in a sticky directory others can write "
                                  f"(as fs.{rule} refuses)", path)
        if st is None or stat.S_ISREG(st.st_mode):
            _refuse_unreplaceable(path, st, place.dir_fd, place.name)
        if st is not None:
            _refuse(path, st, place.dir_fd, place.name)
            if not stat.S_ISREG(st.st_mode):
                place.in_place = st
                return place
        place.existing = st
        if os.path.basename(place.final) != place.name:  # a resolved path cut short would name another entry
            raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG), path)
    except BaseException:
        place.close()
        raise
    return place


def _still(fd: int, identity: tuple[int, int] | None) -> bool:
    """Whether fd is still open on the file identity names."""
    try:
        st = os.fstat(fd)
    except OSError:
        return False
    return identity is not None and (st.st_dev, st.st_ino) == identity


def _reheld(place: Place) -> None:
    """Makes sure place.dir_fd is still the directory held: where its
    number was closed meanwhile (and maybe reused for another file, not
    ours to close), the path is walked again by the same checked walk, and
    taken only when it leads to that same directory and entry -- never
    elsewhere: a report is refused rather than written where the path leads
    now."""
    if _still(place.dir_fd, place.dir_id):
        return
    place.dir_fd = -1
    dir_fd, name, _, _, proc_link = _walk_checked(place.path)
    st = os.fstat(dir_fd)
    if (st.st_dev, st.st_ino) != place.dir_id or name != place.name or proc_link != place.proc_link:
        os.close(dir_fd)
        raise OSError(errno.ESTALE, "its directory's descriptor was closed during the session (a test closed "
                      "descriptors it did not open) and the path now leads elsewhere; nothing was written",
                      place.path)
    place.dir_fd = dir_fd


def _shared_directory_owner(dir_fd: int) -> int | None:
    """The owner of dir_fd when it is a sticky directory others (or a group:
    the rules' level 2) may write, such as /tmp; else None."""
    st = os.fstat(dir_fd)
    return st.st_uid if st.st_mode & stat.S_ISVTX and st.st_mode & (stat.S_IWOTH | stat.S_IWGRP) else None


def _standard_stream_of(st: os.stat_result) -> int:
    """1 or 2 when st is the file standard output or error is open on
    (stdout first: under "> log 2>&1" both are; but the one that can write
    it first: "1<log 2>log" is stderr's), else -1."""
    behind = -1
    for fd in (1, 2):
        try:
            if not os.path.samestat(st, os.fstat(fd)):
                continue
            writable = (fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE) != os.O_RDONLY
        except OSError:
            continue  # closed
        if behind < 0 or writable:
            behind = fd
        if writable:
            break
    return behind


_MAX_LINKS = 40  # the kernel follows 40 links in one lookup and refuses a 41st


_PROC_SUPER_MAGIC = 0x9FA0
_libc = None


def _is_proc(fd: int) -> bool:
    """Whether fd is in a procfs, any mount of it: by the file system's
    type (fstatfs), as the command tells it.  By st_dev against /proc's, a
    second procfs mount (/host/proc) was not one, and a link in it was
    walked as text to another file (stop 55's attack)."""
    global _libc
    try:
        import ctypes
    except ImportError:  # a Python built without it: the main mount at least
        try:
            return os.fstat(fd).st_dev == os.stat("/proc").st_dev
        except OSError:
            return False
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(512)  # struct statfs (120 bytes on 64-bit Linux); f_type is its first word
    if _libc.fstatfs(fd, buf) != 0:
        return False
    # f_type is a long (__fsword_t), but an unsigned int on s390x
    word = 4 if os.uname().machine == "s390x" else ctypes.sizeof(ctypes.c_long)
    return int.from_bytes(buf.raw[:word], sys.byteorder, signed=True) == _PROC_SUPER_MAGIC


def _is_proc_link(dir_fd: int, target: str | bytes) -> bool:
    """A link in /proc (/proc/PID/fd/N): an open file the kernel reaches
    whatever the text says ("pipe:[12]", "/tmp/x (deleted)"); /proc/self
    ("1234") is a name."""
    text = os.fsdecode(target)
    if text.isdigit() or not (text.startswith("/") or ":" in text):
        return False
    return _is_proc(dir_fd)


def _behind_standard_stream(st: os.stat_result) -> bool:
    for fd in (1, 2):
        try:
            if os.path.samestat(st, os.fstat(fd)):
                return True
        except OSError:
            continue
    return False


def _may_follow(dir_fd: int, link: os.stat_result) -> bool:
    """The kernel's fs.protected_symlinks rule: in a sticky directory others
    may write (/tmp), a link is followed only when it is this user's or the
    directory owner's."""
    parent = os.fstat(dir_fd)
    if not (parent.st_mode & stat.S_ISVTX and parent.st_mode & stat.S_IWOTH):
        return True
    return link.st_uid in (os.geteuid(), parent.st_uid)


def _open_component(name: str | bytes, dir_fd: int, directory: bool = False) -> int:
    """One component, from the directory held before it, never following."""
    return os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_DIRECTORY if directory else 0),
                   dir_fd=dir_fd)


def _walk_checked(path: str | bytes) -> tuple[int, str | bytes, str | bytes, os.stat_result | None, bool]:
    """Where path leads, resolved as the kernel would but by resmon, one
    component at a time, each directory held (O_PATH) and each link read
    through its own descriptor, checked by the protected_symlinks rule
    (_may_follow) whatever the sysctl says, and followed from where it sits:
    nothing is looked up from the start twice, so another user who swaps a
    directory on the path for a link between two lookups (renameat2 in a
    loop: stop 54's attack won at the 2415th try) sends nothing elsewhere.
    A dangling link is followed to the name that does not exist yet.  The
    command's walk too (tools/resmon/path_checked.c).  Returns (dir_fd, the
    entry's name, the resolved path, the entry's stat or None when new,
    whether it is a /proc link to a pipe or socket); the caller closes
    dir_fd.  Raises OSError naming path."""
    text = isinstance(path, str)
    sep, dot, dotdot = ("/", ".", "..") if text else (b"/", b".", b"..")
    if not path:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
    if path.startswith(sep):
        done = sep
    else:
        try:
            done = os.getcwd() if text else os.getcwdb()
        except OSError:  # a working directory longer than PATH_MAX: named "." here, walked the same
            done = dot
    cur = os.open(sep if path.startswith(sep) else dot, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)

    def joined(base: str | bytes, name: str | bytes) -> str | bytes:
        return (base if base != sep else base[:0]) + sep + name

    def fail(err: int, reason: str | None = None) -> OSError:
        return OSError(err, reason or os.strerror(err), path) if err not in _ERRORS else \
            _ERRORS[err](err, reason or os.strerror(err), path)

    rest = [p for p in path.split(sep) if p]
    rest.reverse()  # a stack: the next component last
    trailing_slash = path.endswith(sep)
    links = 0
    expected: os.stat_result | None = None  # a /proc link's file: the walk of its text must reach it
    try:
        while True:
            if not rest:  # the path names a directory ("/", ".", "dir/")
                return cur, dot, done, os.fstat(cur), False
            name = rest.pop()
            last = not rest
            if name == dot:
                continue
            if name == dotdot:
                up = os.open(dotdot, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=cur)
                os.close(cur)
                cur = up
                done = done[:done.rfind(sep)] or sep if sep in done and done != sep else done
                continue
            try:
                fd = _open_component(name, cur)
            except FileNotFoundError:
                if not last:
                    raise fail(errno.ENOENT)
                if trailing_slash:  # "new/": open(O_CREAT) makes nothing there
                    raise fail(errno.EISDIR)
                if expected is not None:
                    raise fail(errno.EAGAIN, "it changed while it was being opened; nothing was written")
                return cur, name, joined(done, name), None, False
            except OSError as error:
                raise fail(error.errno)
            try:
                st = os.fstat(fd)
                if stat.S_ISLNK(st.st_mode):
                    links += 1
                    if links > _MAX_LINKS:
                        raise fail(errno.ELOOP)
                    if not _may_follow(cur, st):
                        raise fail(errno.EACCES, "another user's symbolic link in a sticky directory others can "
                                                 "write (as fs.protected_symlinks refuses)")
                    target = os.readlink(sep[:0], dir_fd=fd)  # the link's own descriptor: readlinkat(fd, "")
                    if not target:
                        raise fail(errno.ENOENT)
                    if _is_proc_link(cur, target):
                        obj = os.stat(name, dir_fd=cur)
                        if not last or trailing_slash:  # /proc/self/cwd/out.json: the kernel's jump
                            nxt = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=cur)
                            os.close(cur)
                            cur = nxt
                            done = target if target.startswith(sep) else joined(done, name)
                            continue
                        if (not target.startswith(sep) or not stat.S_ISREG(obj.st_mode) or obj.st_nlink == 0
                                or _behind_standard_stream(obj)):
                            # a pipe, a terminal, or the file stdout or stderr writes: there, or through the stream
                            return cur, name, joined(done, name), obj, True
                        expected = obj  # a regular file: replaced in the directory its text names
                    parts = [p for p in target.split(sep) if p]
                    rest.extend(reversed(parts))
                    if last:
                        trailing_slash = trailing_slash or target.endswith(sep)
                    if target.startswith(sep):
                        root = os.open(sep, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
                        os.close(cur)
                        cur = root
                        done = sep
                    continue
                if last and not trailing_slash:
                    if expected is not None and (st.st_dev, st.st_ino) != (expected.st_dev, expected.st_ino):
                        raise fail(errno.EAGAIN, "it changed while it was being opened; nothing was written")
                    return cur, name, joined(done, name), st, False
                if not stat.S_ISDIR(st.st_mode):
                    raise fail(errno.ENOTDIR)
                os.close(cur)
                cur, fd = fd, -1
                done = joined(done, name)
            finally:
                if fd >= 0:
                    os.close(fd)
    except BaseException:
        os.close(cur)  # the directory held when it failed (a success returns it to the caller)
        raise


_ERRORS = {errno.ENOENT: FileNotFoundError, errno.EACCES: PermissionError, errno.EISDIR: IsADirectoryError,
           errno.ENOTDIR: NotADirectoryError, errno.EAGAIN: BlockingIOError}


def open_input(path: PathArg, directory: bool = False) -> int:
    """A descriptor of path for reading -- a regular file, or a directory
    when directory -- found by the checked walk, as the command's inputs
    are (tools/resmon/input_file.c): another user's link in /tmp is refused
    by the protected_symlinks rule, and a FIFO is never opened blocking (a
    FIFO planted among BASELINE's reports hung pytest at its end for ever:
    stop 55's third attack).  Raises OSError naming path."""
    path = os.fspath(path)
    dir_fd, name, _, st, proc_link = _walk_checked(path)
    try:
        if st is None:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
        flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY | (0 if proc_link else os.O_NOFOLLOW)
        try:
            fd = os.open(name, flags, dir_fd=dir_fd)
        except OSError as error:
            raise type(error)(error.errno, os.strerror(error.errno), path) from None
    finally:
        os.close(dir_fd)
    mode = os.fstat(fd).st_mode
    if stat.S_ISDIR(mode) if directory else stat.S_ISREG(mode):
        return fd
    os.close(fd)
    if directory:
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path)
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
    raise OSError(errno.ESPIPE, f"{kind}, not a regular file", path)


def check_writable(path: PathArg) -> None:
    """Raises OSError (with the path) when write_file would refuse path for
    what it is now: a directory, a read-only file, a missing directory."""
    hold(path).close()


def _refuse(path: str | bytes, st: os.stat_result, dir_fd: int, name: str | bytes) -> None:
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if stat.S_ISREG(st.st_mode) and (not st.st_mode & stat.S_IWUSR or not os.access(name, os.W_OK, dir_fd=dir_fd)):
        # A read-only file stays read-only, for root too (access(2) lets root write any file).
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
    if not stat.S_ISREG(st.st_mode) and not os.access(name, os.W_OK, dir_fd=dir_fd):
        # A device or FIFO this user may not open for writing, refused now
        # as the command refuses it (its open at the start): found at the
        # end, after the whole session (attack 57a: /dev/vda as a user).
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)


def _refuse_unreplaceable(path: str | bytes, st: os.stat_result | None, dir_fd: int, name: str | bytes) -> None:
    """Refuses, when checked, a regular file (st; None: a new one) that the
    rename at the end could not replace although it may be written, as the
    command does (tools/resmon/output_file.c, cannot_replace): access(2)
    asks whether a file may be written, not whether it may be replaced, and
    these were found only at the session's end, its report lost (attack
    56a, B4).  The directory first: it must take the temporary file, and
    let a file in it be renamed."""
    def refused(err: int, reason: str) -> OSError:
        return (PermissionError if err in (errno.EACCES, errno.EPERM) else OSError)(err, reason, path)

    flags = _inode_flags(".", dir_fd)
    if flags & _FS_IMMUTABLE_FL:
        raise refused(errno.EPERM, "its directory is immutable (chattr +i): no file can be made or replaced in it")
    if flags & _FS_APPEND_FL:
        raise refused(errno.EPERM, "its directory is append-only (chattr +a): no file in it can be replaced")
    try:  # the temporary file, made now without a name (nothing is left if this process is killed)
        os.close(os.open(".", os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o600, dir_fd=dir_fd))
    except OSError as error:
        if error.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):  # O_TMPFILE not supported there
            raise refused(error.errno, f"cannot create a temporary file beside it: {os.strerror(error.errno)}") \
                from None
        # No O_TMPFILE there (sysfs, NFS, FUSE): a named probe, made and
        # removed at once -- access(2) says yes to root where nothing can
        # be made (stop 56's last attack: --resmon-json under /sys ran the
        # whole session, then failed).
        probe = f".resmon-probe-{os.getpid()}-{os.urandom(4).hex()}"
        try:
            os.close(os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                             dir_fd=dir_fd))
        except OSError as probe_error:
            raise refused(probe_error.errno, "cannot create a temporary file beside it: "
                          f"{os.strerror(probe_error.errno)}") from None
        try:
            os.unlink(probe, dir_fd=dir_fd)
        except OSError:
            pass
    if st is None:
        return
    flags = _inode_flags(name, dir_fd)
    if flags & _FS_IMMUTABLE_FL:
        raise refused(errno.EPERM, "it is immutable (chattr +i): it cannot be replaced")
    if flags & _FS_APPEND_FL:
        raise refused(errno.EPERM, "it is append-only (chattr +a): it cannot be replaced")
    try:
        fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        fd = -1
    try:
        mount = _mount_id(fd) if fd >= 0 else None
    finally:
        if fd >= 0:
            os.close(fd)
    directory_mount = _mount_id(dir_fd)
    if mount is not None and directory_mount is not None and mount != directory_mount:
        raise refused(errno.EBUSY, "it is a mount point (a file mounted over it, as a container's single-file "
                      "volume): it cannot be replaced")
    # The sticky rule of rename(2) and unlink(2), in any sticky directory.
    directory = os.fstat(dir_fd)
    if (directory.st_mode & stat.S_ISVTX and st.st_uid != os.geteuid() and directory.st_uid != os.geteuid()
            and not _has_cap_fowner()):
        raise refused(errno.EPERM, "another user's file in a sticky directory: only its owner or the directory's "
                      "can replace it")


_FS_IMMUTABLE_FL = 0x10
_FS_APPEND_FL = 0x20


def _fs_ioc_getflags() -> int:
    """FS_IOC_GETFLAGS, _IOR('f', 1, long), as this machine's kernel numbers it."""
    size = struct.calcsize("l")
    machine = os.uname().machine
    shift = 29 if machine.startswith(("ppc", "powerpc", "mips", "sparc", "alpha")) else 30
    return (2 << shift) | (size << 16) | (ord("f") << 8) | 1


def _inode_flags(name: str | bytes, dir_fd: int) -> int:
    """The entry's inode flags (chattr's: FS_IOC_GETFLAGS), never following
    it; 0 where they cannot be read (a file this user may not read, a file
    system without them)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_NOCTTY | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return 0
    try:
        got = fcntl.ioctl(fd, _fs_ioc_getflags(), bytes(8))  # the kernel writes an int there
        return int.from_bytes(got[:4], sys.byteorder)
    except OSError:
        return 0
    finally:
        os.close(fd)


def _mount_id(fd: int) -> int | None:
    """The id of the mount fd is on (/proc/self/fdinfo's mnt_id), or None."""
    try:
        with open(f"/proc/self/fdinfo/{fd}") as f:
            for line in f:
                if line.startswith("mnt_id:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def _has_cap_fowner() -> bool:
    """Whether this process may replace another user's file in another
    user's sticky directory: CAP_FOWNER (3) among its effective
    capabilities; root's euid where /proc cannot tell."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("CapEff:"):
                    return bool(int(line.split()[1], 16) >> 3 & 1)
    except (OSError, ValueError, IndexError):
        pass
    return os.geteuid() == 0


def write_held(place: Place, data: str | bytes) -> None:
    """Writes data (str is encoded as UTF-8) where place was resolved, by
    the rules above.  Raises OSError naming the path; on error nothing
    there has changed (a device or FIFO may have taken part of the data).
    The entry is read again, never followed: a link, a device or a FIFO put
    there since the check is refused, as is a file made read-only."""
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    if place.stream_fd >= 0 and not _still(place.stream_fd, place.stream_id):
        # A test closed standard output or error, or put another file
        # there (os.dup2) and left it: the file it was is not reachable
        # from here, and the stream's new file is not the report's.
        which = "output" if place.stream_fd == 1 else "error"
        raise OSError(errno.ESTALE, f"standard {which} is no longer the file it was when pytest started (a test "
                      "closed or redirected it); nothing was written", place.path)
    if place.stream_fd < 0:
        _reheld(place)
    if place.stream_fd >= 0:
        (sys.stdout if place.stream_fd == 1 else sys.stderr).flush()
        try:
            if not _ends_a_line(place.stream_fd):
                payload = b"\n" + payload  # on a line of its own, as the command's output_start_on_own_line
            _write_all(place.stream_fd, payload)
        except OSError as error:
            error.filename = place.path
            raise
        return
    if place.in_place is not None:
        _write_in_place(place.dir_fd, place.name, place.path, payload, checked=place.in_place,
                        follow=place.proc_link)
        return
    base = os.path.basename(place.final)
    try:
        st = os.stat(base, dir_fd=place.dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        st = None
    except OSError as error:
        raise type(error)(error.errno, os.strerror(error.errno), place.path) from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        what = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "something other than a regular file"
        raise FileExistsError(errno.EEXIST, f"{what} was put in its place since it was checked; not replaced",
                              place.path)
    if st is not None and not st.st_mode & stat.S_IWUSR:
        raise PermissionError(errno.EACCES, "it was made read-only since it was checked; it was not replaced",
                              place.path)
    # The owner and mode kept are those of the file there when checked, as
    # the command takes them at its start: a file that appeared since
    # (another user's, 0666, in /tmp, even under a reused inode number) got
    # root's report (tenth and eleventh reviews of issue 28); none there
    # then: a new file of this user's.
    _write_replacing(place.dir_fd, place.final, payload, place.existing, place.path)


def write_file(path: PathArg, data: str | bytes) -> None:
    """Writes data to path by the rules above, resolved now (hold, then
    write_held).  Raises OSError naming the path."""
    with hold(path) as place:
        write_held(place, data)


def _ends_a_line(fd: int) -> bool:
    """Whether what a regular file at fd holds before its offset ends a line
    (or is empty); False where that cannot be read."""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return True
        end = st.st_size if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_APPEND else os.lseek(fd, 0, os.SEEK_CUR)
        if end <= 0 or end > st.st_size:
            return True
        try:
            return os.pread(fd, 1, end - 1) == b"\n"
        except OSError:  # opened for writing only (">> log"): read through its own link
            with open(f"/proc/self/fd/{fd}", "rb") as f:
                f.seek(end - 1)
                return f.read(1) == b"\n"
    except OSError:
        return False  # not readable: a blank line is harmless to a reader of lines, a glued one is not


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view):]


def _opened_as_checked(fd: int, checked: os.stat_result) -> bool:
    """The entry was checked, then opened again at the end: what was opened
    must be that file (a regular file swapped in since would get the data
    over its start, untruncated)."""
    now = os.fstat(fd)
    return (stat.S_IFMT(now.st_mode) == stat.S_IFMT(checked.st_mode)
            and (now.st_dev, now.st_ino) == (checked.st_dev, checked.st_ino))


# A FIFO's or terminal's reader that stops reading gives the write up after
# this long without progress, as the command's outputs do (README, "the
# reader stopped reading"): blocking, pytest hung for ever at its end (a
# FIFO held open, a terminal stopped with Ctrl-S or a stalled ssh).
_READER_STUCK_SEC = 5.0


_QUEUE_LOOK_SEC = 0.2


def _queued(fd: int) -> int:
    """The bytes written to fd and not yet read (a pipe's FIONREAD, a
    socket's or terminal's TIOCOUTQ); -1 when not known (a device)."""
    import termios
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISFIFO(mode):
            request = termios.FIONREAD
        elif stat.S_ISSOCK(mode) or os.isatty(fd):
            request = termios.TIOCOUTQ  # SIOCOUTQ for a socket (FIONREAD: what it received)
        else:
            return -1
        return int.from_bytes(fcntl.ioctl(fd, request, b"\0\0\0\0"), sys.byteorder, signed=True)
    except OSError:
        return -1


def _write_to_reader(fd: int, payload: bytes) -> None:
    """Writes payload to a device or FIFO (opened here, so its own open
    file, made non-blocking) while its reader reads; raises TimeoutError
    after _READER_STUCK_SEC without progress."""
    os.set_blocking(fd, False)
    view = memoryview(payload)
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    deadline = time.monotonic() + _READER_STUCK_SEC
    before = _queued(fd)
    while view:
        try:
            view = view[os.write(fd, view):]
            deadline = time.monotonic() + _READER_STUCK_SEC
            before = _queued(fd)
            continue
        except BlockingIOError:
            pass
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(errno.ETIMEDOUT, f"the reader stopped reading; {len(view)} bytes not written")
        if not poller.poll(min(left, _QUEUE_LOOK_SEC) * 1000) and before >= 0:
            # A pipe frees room a page at a time: a steady reader slower
            # than a page in the bound let no write through and was given
            # up (tenth review of issue 28).  What it takes counts.
            now_queued = _queued(fd)
            if 0 <= now_queued < before:
                deadline = time.monotonic() + _READER_STUCK_SEC
            before = now_queued


def _open_when_read(dir_fd: int, name: str | bytes, flags: int, path: str | bytes) -> int:
    """Opens a FIFO for writing once a reader has it open, polled, for
    _READER_STUCK_SEC at most: a FIFO nobody opens hung pytest at its end
    for ever (tenth review of issue 28)."""
    deadline = time.monotonic() + _READER_STUCK_SEC
    while True:
        try:
            return os.open(name, flags, dir_fd=dir_fd)
        except OSError as error:
            if error.errno != errno.ENXIO:
                raise
        if time.monotonic() >= deadline:
            raise TimeoutError(errno.ETIMEDOUT, f"no reader opened it in {_READER_STUCK_SEC:g} s; nothing was written",
                               path)
        time.sleep(0.02)


def _write_in_place(dir_fd: int, name: str | bytes, path: str | bytes, payload: bytes, checked: os.stat_result,
                    follow: bool = False) -> None:
    """Writes a device or FIFO where the checked walk found it: its entry
    in the directory held, never followed (a link put there since is
    refused), but for a /proc link to a pipe (follow), which only the
    kernel can follow."""
    is_fifo = stat.S_ISFIFO(checked.st_mode)
    flags = os.O_WRONLY | os.O_CLOEXEC | os.O_NOCTTY | (0 if follow else os.O_NOFOLLOW)
    try:
        # A FIFO without a reader would block open() with no word of why;
        # without blocking whatever was checked: a FIFO swapped in since
        # (stop 55's attack) is refused below, not waited on for ever.
        fd = os.open(name, flags | os.O_NONBLOCK, dir_fd=dir_fd)
    except OSError as error:
        if is_fifo and error.errno == errno.ENXIO:
            print(f"resmon: waiting for a reader on FIFO {os.fsdecode(path)!r}", file=sys.stderr, flush=True)
            fd = _open_when_read(dir_fd, name, flags | os.O_NONBLOCK, path)
        elif error.errno == errno.ELOOP and not follow:
            raise FileExistsError(errno.EEXIST, "a symbolic link was put in its place since it was checked; "
                                  "not followed", path) from None
        else:
            raise type(error)(error.errno, os.strerror(error.errno), path) from None
    try:
        if not _opened_as_checked(fd, checked):
            raise BlockingIOError(errno.EAGAIN, "it changed while it was being opened; nothing was written",
                                  path)
        _write_to_reader(fd, payload)
    except OSError as error:
        error.filename = path
        raise
    finally:
        os.close(fd)


def _create_temporary(dir_fd: int, prefix: str | bytes) -> tuple[int, str | bytes]:
    """A new file, O_EXCL, in the directory held open: (fd, its name there)."""
    text = isinstance(prefix, str)
    for _ in range(100):
        suffix = os.urandom(5).hex()
        name = prefix + (suffix if text else os.fsencode(suffix))
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                           dir_fd=dir_fd), name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST))


def _current_umask() -> int:
    """The process's umask, read where it is shown (/proc/self/status,
    Linux 4.7 on), never set to read it: set to 0 for a moment, a file
    another thread made then (a test's, a library's) was 0666 (attack 57a:
    11 of them beside 3000 reports).  Set and set back only without /proc."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _write_replacing(dir_fd: int, final: str | bytes, payload: bytes, existing: os.stat_result | None,
                     path: str | bytes | None = None) -> None:
    """Writes a temporary file in the directory held open (dir_fd) and
    renames it over final's entry there: everything relative to it, so a
    directory on the path swapped for a link by another user who can write
    its parent sends nothing elsewhere.  Every OSError names path (the path
    given; final when None), never the temporary file: that one is removed
    by then."""
    if path is None:
        path = final
    base = os.path.basename(final)
    text = isinstance(final, str)
    # The name is cut so that a target near NAME_MAX still gets a temporary
    # file: at 200 bytes, not characters (120 "é" are 240 bytes).
    cut = os.fsencode(base)[:200]
    prefix = b"." + cut + b".resmon-"
    if text:
        prefix = os.fsdecode(prefix)
    try:
        fd, temporary = _create_temporary(dir_fd, prefix)
    except OSError as error:  # named by the path given, not by the temporary's
        reason = os.strerror(error.errno) if error.errno in (errno.ENOENT, errno.ENOTDIR) else \
            f"cannot create a temporary file beside it: {os.strerror(error.errno)}"
        raise type(error)(error.errno, reason, path) from None
    try:
        try:
            if existing is not None:
                try:
                    os.fchown(fd, existing.st_uid, existing.st_gid)
                except OSError:
                    pass  # not root: the new file is the caller's, as any editor's is
                os.fchmod(fd, stat.S_IMODE(existing.st_mode))
            else:
                os.fchmod(fd, 0o666 & ~_current_umask())
            _write_all(fd, payload)
            os.fsync(fd)  # the data must be on disk before the name points at it
        finally:
            os.close(fd)
        os.rename(temporary, base, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException as error:
        try:
            os.unlink(temporary, dir_fd=dir_fd)  # resmon's own temporary file, never the path given
        except OSError:
            pass
        if isinstance(error, OSError):
            # os.rename's names the temporary (and the entry, as filename2):
            # "cannot write --resmon-json '.r.json.resmon-1f2e3d4c5b'", a
            # file already removed (attack 56a, B5).
            error.filename = path
            error.filename2 = None
        raise
