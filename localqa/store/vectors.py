"""The SQLite index's vectors: a file of float32 rows beside the index, read memory-mapped.

A million passages' vectors are 1.5 GB. Kept as rows of the database they had to be read and
copied into one matrix before the first semantic search (8 s at a million passages); kept as a
file they are mapped, and a search reads them from the page cache that every process shares.

The file is `<index file name>.vectors-<token>`, a new random token for each file a writer
creates, so a file left by an abandoned write is never read by mistake. The meta row
`vectors:<model>` records the token (the name follows the index's: an index copied together with
its vector files under a new name keeps its vectors; one copied alone, or renamed without them,
has none and gets them again on its next refresh, never another index's), the width and how many
rows are committed; which passage each
row belongs to is in `vector_batches` (one row per committed batch). The file may hold more rows
than are committed (a write in progress, or one that died): readers read only the committed rows,
and the next writer cuts the file back to them.

A writer appends rows, syncs the file, and only then commits the transaction that counts them,
so a committed row is always on disk. A file is never rewritten in place: compacting (dropping
the rows of removed passages) writes a new file and commits its name, and the old one is unlinked
after the commit, while readers of the older snapshot keep it open.
"""

from __future__ import annotations

import glob
import json
import mmap
import os
import secrets
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

META_PREFIX = "vectors:"  # + model name: the meta row describing that model's file
Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True)
class VectorFile:
    token: str  # names the file beside the index; "" while the index has no vector file yet
    width: int
    rows: int  # rows committed (or, in a writer, written so far)

    def record(self) -> dict[str, Any]:
        return {"token": self.token, "width": self.width, "rows": self.rows}

    @classmethod
    def parse(cls, text: str) -> VectorFile:
        found = json.loads(text)
        return cls(str(found["token"]), int(found["width"]), int(found["rows"]))

    def path(self, index: Path) -> Path:
        return path_of(index, self.token)

    @property
    def size(self) -> int:
        return self.rows * self.width * 4


def path_of(index: Path, token: str) -> Path:
    return index.with_name(f"{index.name}.vectors-{token}")


def create(index: Path, width: int) -> VectorFile:
    """A new, empty vector file beside `index`."""
    token = secrets.token_hex(6)
    descriptor = os.open(path_of(index, token), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.close(descriptor)
    return VectorFile(token, width, 0)


def append(index: Path, state: VectorFile, matrix: Matrix) -> VectorFile:
    """Write `matrix` after the rows of `state`; returns the state counting them (not yet synced)."""
    if matrix.shape[1:] != (state.width,):
        raise ValueError(f"vectors are {state.width} wide, not {matrix.shape[1:]}")
    with state.path(index).open("r+b") as handle:
        handle.seek(state.size)
        handle.write(np.ascontiguousarray(matrix, dtype="<f4").tobytes())
    return replace(state, rows=state.rows + len(matrix))


def sync(index: Path, state: VectorFile) -> None:
    """Make the file's rows durable (before the transaction that counts them commits), and its
    name: a new file's directory entry is synced too."""
    descriptor = os.open(state.path(index), os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    directory = os.open(index.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def cut(index: Path, state: VectorFile) -> None:
    """Drop whatever lies beyond the rows of `state` (a write that died, or failed)."""
    if not state.token:
        return
    path = state.path(index)
    try:
        if path.stat().st_size > state.size:
            os.truncate(path, state.size)
    except FileNotFoundError:
        pass


def remove_others(index: Path, keep: set[str]) -> None:
    """Delete the vector files of `index` whose token is not in `keep` (with the writer lock
    held: no other writer is making one; a reader of an older snapshot keeps the file it has open)."""
    prefix = f"{index.name}.vectors-"
    for path in index.parent.glob(f"{glob.escape(prefix)}*"):
        if path.name.removeprefix(prefix) not in keep:
            path.unlink(missing_ok=True)


class MappedRows:
    """The committed rows of one vector file, open for the life of a reader (so that a file
    unlinked by a later write stays readable) and mapped on first use."""

    def __init__(self, index: Path, state: VectorFile) -> None:
        self.state = state
        self._descriptor: int | None = os.open(state.path(index), os.O_RDONLY)
        self._map: mmap.mmap | None = None

    def matrix(self) -> Matrix | None:
        """The rows as a read-only matrix; None when the file is shorter than the committed rows
        (it was copied without them, or damaged): such an index is read as having no vectors."""
        if self._descriptor is None:
            return None
        if self._map is None:
            if self.state.rows == 0:
                return np.zeros((0, self.state.width), dtype=np.float32)
            if os.fstat(self._descriptor).st_size < self.state.size:
                return None
            self._map = mmap.mmap(self._descriptor, self.state.size, access=mmap.ACCESS_READ)
        return np.frombuffer(self._map, dtype="<f4", count=self.state.rows * self.state.width).reshape(
            self.state.rows, self.state.width
        )

    def close(self) -> None:
        # The map itself is released with the last array that views it.
        if self._descriptor is not None:
            os.close(self._descriptor)
            self._descriptor = None
