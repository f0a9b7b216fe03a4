"""Marks from a program monitored by the resmon command: ``resmon.mark``."""

from __future__ import annotations

import errno
import os
import socket

_ENV = "RESMON_MARK_SOCKET"
_NAME_MAX_BYTES = 63


def check_name(name: object) -> bytes:
    """The name's UTF-8 bytes; ValueError when it is no phase name (1 to 63
    bytes of UTF-8 without control characters)."""
    if not isinstance(name, str):
        raise ValueError(f"a phase name must be a str, got {name!r}")
    try:
        data = name.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"a phase name must be valid UTF-8, got {name!r}") from None
    if not 1 <= len(data) <= _NAME_MAX_BYTES:
        raise ValueError(f"a phase name is 1 to {_NAME_MAX_BYTES} bytes of UTF-8, got {len(data)}")
    if any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in name):
        raise ValueError(f"a phase name has no control characters, got {name!r}")
    return data


def mark(name: str) -> bool:
    """Start the phase ``name`` of the ``resmon -- COMMAND`` run this program is in.

    The same as ``resmon mark NAME`` in a shell: a datagram to the channel
    that resmon names in RESMON_MARK_SOCKET.  Never blocks and never raises
    for the channel: outside resmon it does nothing, and a full channel
    drops the mark (resmon counts it in the summary's marks_dropped).

    Returns:
        True when the mark was sent, False when not running under resmon or
        the mark was dropped.

    Raises:
        ValueError: A bad name (1 to 63 bytes of UTF-8, no control characters).
    """
    data = check_name(name)
    path = os.environ.get(_ENV)
    if not path:
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
            s.sendto(data, socket.MSG_DONTWAIT, path)
        return True
    except OSError as e:
        if e.errno in (errno.EAGAIN, errno.EWOULDBLOCK, errno.ENOBUFS):
            try:  # resmon is there, its queue full: say so beside the socket
                fd = os.open(os.path.join(os.path.dirname(path), "dropped"),
                             os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
                try:
                    os.write(fd, b"x")
                finally:
                    os.close(fd)
            except OSError:
                pass
        return False
