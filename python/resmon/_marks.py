"""Marks from a program monitored by the resmon command: ``resmon.mark``."""

from __future__ import annotations

import errno
import fcntl
import os
import select
import socket
import stat
import sys
import threading

_ENV = "RESMON_MARK_SOCKET"
_DROPPED_ENV = "RESMON_MARK_DROPPED"  # the drop counter, dropped-<secret>
_NAME_MAX_BYTES = 63
_said: set[str] = set()  # the kinds of refusal printed


# common/utf8.h's list: Unicode's Default_Ignorable_Code_Points (bidirectional
# controls, characters that show nothing), the line and paragraph separators
# and the interlinear annotation marks.
_HIDDEN = ((0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
           (0x180B, 0x180F), (0x200B, 0x200F), (0x2028, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
           (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFFB), (0x1BCA0, 0x1BCA3),
           (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF))


def _is_control(c: str) -> bool:
    """common/utf8.h's rm__utf8_is_control: C0, DEL, C1, and the characters
    that reorder a line or show nothing (_HIDDEN)."""
    cp = ord(c)
    return cp < 0x20 or 0x7F <= cp <= 0x9F or any(low <= cp <= high for low, high in _HIDDEN)


def check_name(name: object) -> bytes:
    """The name's UTF-8 bytes; ValueError when it is no phase name (1 to 63
    bytes of UTF-8 without control characters, nor the bidirectional ones
    that reorder a line on a terminal or those that show nothing:
    _is_control)."""
    if not isinstance(name, str):
        raise ValueError(f"a phase name must be a str, got {name!r}")
    try:
        data = name.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"a phase name must be valid UTF-8, got {name!r}") from None
    if not 1 <= len(data) <= _NAME_MAX_BYTES:
        raise ValueError(f"a phase name is 1 to {_NAME_MAX_BYTES} bytes of UTF-8, got {len(data)}")
    if any(_is_control(c) for c in name):
        raise ValueError(f"a phase name has no control characters (bidirectional and invisible ones included), "
                         f"got {ascii(name)}")  # ascii(): what it refuses shown as escapes
    return data


def _say_without_blocking(line):
    """Writes line to sys.stderr only if it takes it now: a mark never
    blocks, and a stderr pipe whose reader stalled held the workload for
    ever (attack 67 F7).  A stream without a descriptor (pytest's capture, a
    StringIO) cannot block.  Else lost: the drop count is the record."""
    if len(line) > 1000:  # a name of any length: the line stays one short write
        line = line[:996] + "...\n"
    try:
        if sys.stderr is None:
            return
        try:
            fd = sys.stderr.fileno()
        except (AttributeError, OSError, ValueError):  # no descriptor: cannot block
            sys.stderr.write(line)
            return
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        if any(events & select.POLLOUT for _, events in poller.poll(0)):
            sys.stderr.write(line)  # one line, under PIPE_BUF: one write that a pipe with room takes
    except Exception:  # stderr closed, gone or replaced: the count is the record
        pass


def mark(name: str) -> bool:
    """Start the phase ``name`` of the ``resmon -- COMMAND`` run this program is in.

    The same as ``resmon mark NAME`` in a shell: a datagram to the channel
    that resmon names in RESMON_MARK_SOCKET.  Never blocks and never raises
    for the channel: outside resmon it does nothing, and a full channel, or
    one this user may not send to (the program dropped privileges), drops
    the mark (resmon counts it in the summary's marks_dropped).

    A name resmon refuses (not 1 to 63 bytes of UTF-8, or a control
    character) never fails the program either: as ``resmon mark`` does, it
    is one line on standard error and, under resmon, counted dropped.

    Returns:
        True when the mark was sent, False when not running under resmon or
        the mark was dropped.
    """
    path = os.environ.get(_ENV)
    try:
        data = check_name(name)
    except ValueError as e:
        # One line on stderr, as `resmon mark` says it: a warning (as it was)
        # is raised by a program run with warnings as errors (-W error,
        # pytest's filterwarnings = error), which then failed (stop 53's
        # attack on issue 28).
        if path:
            with _fork_guard:
                counter = _open_counter(os.environ.get(_DROPPED_ENV))
                _count_dropped(counter)
                _close_counter(counter)
        line = f"resmon.mark: {e}; the mark is dropped\n"
        kind = str(e).partition(", got")[0]
        if kind not in _said:  # each kind once, as a warning was: a loop's refusals are counted, not printed
            _said.add(kind)
            _say_without_blocking(line)
        return False
    if not path:
        return False
    # The counter is held, shared-locked, from before the send until the
    # drop is counted: resmon's last read of the count waits for it (the
    # command's marks.c, stop 56's attack: an orphan's drops counted after
    # that read were in no summary).
    with _fork_guard:
        counter = _open_counter(os.environ.get(_DROPPED_ENV))
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
                s.sendto(data, socket.MSG_DONTWAIT, path)
            return True
        except OSError as e:
            # Full (EAGAIN, ENOBUFS), or this user may not send (EACCES,
            # EPERM: the program dropped privileges): counted.  A channel
            # that is gone has no count to add to -- unless the counter was
            # locked before resmon's seal removed the socket: the seal waits
            # for the lock before its last read (a mark that opened the
            # counter just before the seal and sent just after it returned
            # False and was in neither the phases nor the count).
            if counter in _locked or e.errno not in (errno.ENOENT, errno.ECONNREFUSED, errno.ENOTDIR):
                _count_dropped(counter)
            return False
        finally:
            _close_counter(counter)


# Counters held by a mark in progress.  A child forked meanwhile by another
# thread would hold the lock resmon's end waits for as long as it lives
# (stop 56's last attack: a daemon forked beside a mark cost every run the
# whole wait): os.fork waits for the mark in progress (_fork_guard, held
# from the counter's open to its close -- the open and the close release
# the GIL, so a set of open descriptors alone left 31 of 199 children
# holding one), and a fork from inside a mark (the same thread) closes the
# child's copies.
_held: set[int] = set()
_locked: set[int] = set()  # those of _held this process holds shared-locked
_fork_guard = threading.RLock()


def _before_fork() -> None:
    _fork_guard.acquire()


def _after_fork_in_parent() -> None:
    _fork_guard.release()


def _after_fork_in_child() -> None:
    global _fork_guard
    for fd in list(_held):
        try:
            os.close(fd)
        except OSError:
            pass
    _held.clear()
    _locked.clear()
    _fork_guard = threading.RLock()  # the parent's, copied held: a new one


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)


def _open_counter(path: str | None) -> int | None:
    """The drop counter resmon names in RESMON_MARK_DROPPED (dropped-<secret>
    beside the socket, a name others cannot list), which resmon made for every
    user to append to, opened and shared-locked: None when there is none to
    count into.  A lock another holds (resmon sealing, or anyone who has the
    name) is not waited for: the mark goes on unlocked -- after resmon's seal
    its socket is gone, so it is neither sent nor counted.  Through the
    directory, opened without following a link, and only a regular file of one
    link owned by the directory's owner (never created here)."""
    base = os.path.basename(path) if path else ""
    if not base.startswith("dropped-"):
        return None
    try:
        dfd = os.open(os.path.dirname(path), os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        owner = os.fstat(dfd).st_uid
        fd = os.open(base, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
    except OSError:
        return None
    finally:
        os.close(dfd)
    try:
        st = os.fstat(fd)
    except OSError:
        st = None
    if st is None or not (stat.S_ISREG(st.st_mode) and st.st_nlink == 1 and st.st_uid == owner):
        os.close(fd)
        return None
    _held.add(fd)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        _locked.add(fd)
    except OSError:
        pass  # held by another, or no locks here: counted unlocked
    return fd


def _count_dropped(counter: int | None) -> None:
    """One byte appended to the counter _open_counter gave."""
    if counter is None or counter < 0:
        return
    try:
        os.write(counter, b"x")
    except OSError:
        pass


def _close_counter(counter: int | None) -> None:
    if counter is not None and counter >= 0:
        _held.discard(counter)
        _locked.discard(counter)
        os.close(counter)
