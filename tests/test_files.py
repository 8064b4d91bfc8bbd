"""write_atomic: the one way localqa writes a file a reader must never see half of; cache_dir: where
localqa keeps built models."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from localqa.indexing.files import cache_dir, write_atomic


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_gets_the_mode_open_would_give_it(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        write_atomic(tmp_path / "run.json", "{}")
    finally:
        os.umask(previous)
    assert mode(tmp_path / "run.json") == 0o644
    assert (tmp_path / "run.json").read_text(encoding="utf-8") == "{}"


def test_a_replaced_file_keeps_its_mode_and_nothing_is_left_beside_it(tmp_path: Path) -> None:
    target = tmp_path / "report.md"
    target.write_text("old", encoding="utf-8")
    target.chmod(0o600)
    write_atomic(target, b"new")
    assert mode(target) == 0o600 and target.read_bytes() == b"new"
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]


def test_a_failed_write_leaves_the_previous_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "run.json"
    target.write_text("previous", encoding="utf-8")

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(target, "next")
    assert target.read_text(encoding="utf-8") == "previous"
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_cache_dir_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("LOCALQA_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert cache_dir() == tmp_path / "home" / ".cache" / "localqa"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "localqa"
    monkeypatch.setenv("LOCALQA_CACHE", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"
