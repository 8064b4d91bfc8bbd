"""Reports drawn with PyMuPDF, a page per list of paragraphs, each page headed by the title and
its number: the acronym tests' documents (`test_definitions`, `test_review37_answers`)."""

from __future__ import annotations

from pathlib import Path

import pymupdf


def write_report(path: Path, title: str, pages: list[list[str]]) -> Path:
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
