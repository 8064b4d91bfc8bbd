"""Files: where localqa keeps its caches, and writing a file so that a reader never sees half of
one (the one way localqa does it)."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


def cache_dir() -> Path:
    """Where built and assembled models are kept: `$LOCALQA_CACHE`, else
    `$XDG_CACHE_HOME/localqa`, else `~/.cache/localqa`."""
    explicit = os.environ.get("LOCALQA_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "localqa"


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write `data` to a temporary file beside `path`, then move it over `path`. A full disk or a
    kill mid-write leaves the previous file as it was (and at most a hidden `.tmp` file). The file
    gets the mode a plain `open()` would give it (mkstemp's own 0600 would surprise a user), or the
    mode of the file it replaces. Any failure is reported as an `OSError` naming `path`, the file
    the caller asked for, never the temporary one."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=_temporary_prefix(path), suffix=".tmp")
    except OSError as error:  # e.g. a read-only folder, or /proc
        raise OSError(error.errno, f"cannot be written ({error.strerror})", str(path)) from None
    try:
        os.fchmod(fd, _mode_for(path))
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise OSError(error.errno, error.strerror, str(path)) from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _temporary_prefix(path: Path) -> str:
    """`.<name>.`, the name cut so that the temporary file's name (plus mkstemp's eight random
    characters and `.tmp`) stays within the 255 bytes a file name may have."""
    return f".{os.fsdecode(os.fsencode(path.name)[:200])}."


def sha256_file(path: Path | str) -> str:
    """The file's SHA-256, hex, read in blocks (OSError if it cannot be read)."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _mode_for(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mask = os.umask(0)  # the only way to read the umask is to set it
        os.umask(mask)
        return 0o666 & ~mask
