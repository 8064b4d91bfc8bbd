"""Reports drawn with PyMuPDF and indexed, for the answer stage's end-to-end tests
(`test_definitions`, `test_numbered`, `test_review37_answers`): a report of paragraph pages, a
catalogue of public and staff-only files, and the folder indexed as it is."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pymupdf

from localqa.indexing.index import refresh_index


def write_report(path: Path, title: str, pages: list[list[str]]) -> Path:
    """A page per list of paragraphs, each page headed by the title and its number."""
    with pymupdf.open() as document:
        for number, paragraphs in enumerate(pages, start=1):
            page = document.new_page()
            page.insert_text((72, 72), f"{title} {number}", fontname="hebo", fontsize=16)
            y = 110.0
            for paragraph in paragraphs:
                box = pymupdf.Rect(72, y, 520, y + 60)
                page.insert_textbox(box, paragraph, fontname="helv", fontsize=10)
                y += 80
        document.set_metadata({"title": title})
        document.save(path)
    return path


def catalog(public: Sequence[str], staff: Sequence[str] = ()) -> str:
    """A `catalog.toml` labelling each file public or staff-only, its series its name."""
    entries = [(name, "public") for name in public] + [(name, "staff") for name in staff]
    return "\n".join(
        f'["{name}"]\nseries = "{name.rsplit(".", 1)[0]}"\naccess = "{access}"\n' for name, access in entries
    )


def indexed(folder: Path, catalogue: str) -> Path:
    """`folder` indexed with `catalogue` as its `catalog.toml`, with no problem reported."""
    (folder / "catalog.toml").write_text(catalogue, encoding="utf-8")
    db = folder / "index.sqlite3"
    report = refresh_index(folder, db, embed=False)
    assert not report.problems, report.problems
    return db
