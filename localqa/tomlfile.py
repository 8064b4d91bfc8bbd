"""Reading the TOML files people write (`catalog.toml`, the users file, `cases.toml`).

Each is read only if it is a regular file: opening a FIFO (or a device) for reading waits for a
writer that may never come, and `localqa index` would wait holding the writer lock. The check is
made on the opened file itself, so nothing can swap the file between the check and the read.
A document nested thousands of levels deep exhausts the parser's recursion; that is bad input
too, reported like any other.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any


class TomlFileError(Exception):
    """Why a TOML file cannot be used, without its path (the caller names the file and the fix)."""


def read_toml(path: Path) -> dict[str, Any]:
    """The parsed contents of the regular file at `path` (links followed)."""
    import tomllib  # here, not above: a command that reads no TOML file (a search) never loads it

    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise TomlFileError(f"cannot be read ({error.strerror or error})") from None
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        raise TomlFileError(f"not a regular file ({_kind(mode)})")
    with os.fdopen(descriptor, "rb") as handle:
        try:
            data = handle.read()
        except OSError as error:
            raise TomlFileError(f"cannot be read ({error.strerror or error})") from None
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise TomlFileError(f"not valid TOML ({error})") from None
    except RecursionError:
        raise TomlFileError("not valid TOML (nested too deeply)") from None


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"
