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
replaced.  A device or FIFO must still be what was checked once opened.
A directory is refused.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from typing import Union

PathArg = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]


def check_writable(path: PathArg) -> None:
    """Raises OSError (with the path) when write_file would refuse path for
    what it is now: a directory, a read-only file, a missing directory."""
    path = os.fspath(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        directory = os.path.dirname(path) or (b"." if isinstance(path, bytes) else ".")
        if not os.path.isdir(directory):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path) from None
        return
    _refuse(path, st)


def _refuse(path: str | bytes, st: os.stat_result) -> None:
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if stat.S_ISREG(st.st_mode) and (not st.st_mode & stat.S_IWUSR or not os.access(path, os.W_OK)):
        # A read-only file stays read-only, for root too (access(2) lets root write any file).
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)


def write_file(path: PathArg, data: str | bytes) -> None:
    """Writes data (str is encoded as UTF-8) to path by the rules above.
    Raises OSError naming the path; on error nothing at path has changed
    (a device or FIFO may have taken part of the data)."""
    path = os.fspath(path)
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
        if os.path.islink(path):  # a dangling symbolic link: its target is created, in place
            _write_in_place(path, payload, os.O_CREAT, is_fifo=False, checked=None)
            return
    if st is not None:
        _refuse(path, st)
        if not stat.S_ISREG(st.st_mode):
            _write_in_place(path, payload, 0, is_fifo=stat.S_ISFIFO(st.st_mode), checked=st)
            return
    _write_replacing(os.path.realpath(path) if st is not None else path, payload, st)


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view):]


def _opened_as_checked(fd: int, checked: os.stat_result | None) -> bool:
    """The path was checked, then opened by name: another user may have
    swapped it in between (a link now pointing at a regular file), and writing
    in place, untruncated, would put the data over the start of that file.
    With checked, what was opened must be that file; without (a dangling
    link's target, created by the open), it must be an empty regular file."""
    now = os.fstat(fd)
    if checked is None:
        return stat.S_ISREG(now.st_mode) and now.st_size == 0
    return (stat.S_IFMT(now.st_mode) == stat.S_IFMT(checked.st_mode)
            and (now.st_dev, now.st_ino) == (checked.st_dev, checked.st_ino))


def _write_in_place(path: str | bytes, payload: bytes, create: int, is_fifo: bool,
                    checked: os.stat_result | None) -> None:
    flags = os.O_WRONLY | os.O_CLOEXEC | os.O_NOCTTY | create
    try:
        # A FIFO without a reader would block open() with no word of why.
        fd = os.open(path, flags | (os.O_NONBLOCK if is_fifo else 0), 0o666)
    except OSError as error:
        if not (is_fifo and error.errno == errno.ENXIO):
            raise
        print(f"resmon: waiting for a reader on FIFO {os.fsdecode(path)!r}", file=sys.stderr, flush=True)
        fd = os.open(path, flags)
    try:
        if not _opened_as_checked(fd, checked):
            raise BlockingIOError(errno.EAGAIN, "it changed while it was being opened; nothing was written",
                                  path)
        if is_fifo:
            os.set_blocking(fd, True)  # later writes wait for the reader
        _write_all(fd, payload)
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


def _write_replacing(final: str | bytes, payload: bytes, existing: os.stat_result | None) -> None:
    directory, base = os.path.split(final)
    text = isinstance(final, str)
    # The name is cut so that a target near NAME_MAX still gets a temporary file.
    prefix = (("." if text else b".") + base[:200] + (".resmon-" if text else b".resmon-"))
    # The directory is held open from here to the rename, and everything is
    # done relative to it: a directory on the path swapped for a link by
    # another user who can write its parent would otherwise send the file,
    # with the checked file's owner and mode, into a directory of that
    # user's choosing.  Where the file exists, the entry there must be the
    # file os.stat() saw.
    try:
        dir_fd = os.open(directory or ("." if text else b"."), os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as error:
        raise type(error)(error.errno, os.strerror(error.errno), final) from None
    try:
        if existing is not None:
            try:
                again = os.stat(base, dir_fd=dir_fd, follow_symlinks=False)
            except OSError:
                again = None
            if again is None or (again.st_dev, again.st_ino) != (existing.st_dev, existing.st_ino):
                raise BlockingIOError(errno.EAGAIN, "it changed while it was being opened; nothing was written",
                                      final)
        try:
            fd, temporary = _create_temporary(dir_fd, prefix)
        except OSError as error:  # named by the path given, not by the temporary's
            reason = os.strerror(error.errno) if error.errno in (errno.ENOENT, errno.ENOTDIR) else \
                f"cannot create a temporary file beside it: {os.strerror(error.errno)}"
            raise type(error)(error.errno, reason, final) from None
        try:
            try:
                if existing is not None:
                    try:
                        os.fchown(fd, existing.st_uid, existing.st_gid)
                    except OSError:
                        pass  # not root: the new file is the caller's, as any editor's is
                    os.fchmod(fd, stat.S_IMODE(existing.st_mode))
                else:
                    umask = os.umask(0)  # the only way to read it; set back at once
                    os.umask(umask)
                    os.fchmod(fd, 0o666 & ~umask)
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
            if isinstance(error, OSError) and error.filename is None:
                error.filename = final
            raise
    finally:
        os.close(dir_fd)
