"""Placing a (possibly hand-corrected) OCR sidecar's words on tesseract's word boxes."""

from __future__ import annotations

from localqa.extract.ocr import OcrWord, align, with_word_boxes, words_in
from localqa.extract.plain import extract_plain
from localqa.types import Kind

PAGE = (0.0, 0.0, 600.0, 800.0)


def words(*lines: tuple[int, str]) -> list[OcrWord]:
    """Tesseract-like words: (paragraph number, line text), 20 points a line, 50 a word."""
    found = []
    for number, (paragraph, text) in enumerate(lines):
        for position, word in enumerate(text.split()):
            box = (50.0 * position, 20.0 * number, 50.0 * position + 40, 20.0 * number + 12)
            found.append(OcrWord(word, box, (paragraph, 1, number)))
    return found


def placed(sidecar: str, ocr: list[OcrWord]) -> list[tuple[str, tuple[tuple[float, ...], ...]]]:
    passages = extract_plain(sidecar, "scan.pdf", 1, Kind.OCR)
    return [(p.text, p.boxes) for p in with_word_boxes(passages, sidecar, ocr, PAGE)]


def test_every_word_found_gives_one_box_per_word() -> None:
    ocr = words((1, "Map Exchange"), (2, "The desk accepts maps"), (2, "from 12:00 to 15:00."))
    [(text, boxes)] = placed("Map Exchange\n\nThe desk accepts maps\nfrom 12:00 to 15:00.\n", ocr)
    assert text == "The desk accepts maps from 12:00 to 15:00."
    assert boxes == tuple(w.box for w in ocr[2:])


def test_a_word_corrected_in_place_keeps_the_misread_words_box() -> None:
    ocr = words((1, "The desk accepts rnaps from l2:00"))
    [(_, boxes)] = placed("The desk accepts maps from 12:00.\n", ocr)
    assert boxes == tuple(w.box for w in ocr)


def test_a_heavily_rewritten_paragraph_falls_back_to_its_tesseract_paragraph() -> None:
    ocr = words((1, "Opening hours"), (2, "0ur librry iz opn frm"), (2, "nine til six weekdys"))
    sidecar = "Opening hours\n\nOur library is open from 09:00 until 18:00 on weekdays.\n"
    [(_, boxes)] = placed(sidecar, ocr)  # no word matches one for one
    assert boxes == ((0.0, 20.0, 240.0, 32.0), (0.0, 40.0, 190.0, 52.0))  # the paragraph's two lines


def test_a_paragraph_tesseract_never_read_is_placed_on_the_page() -> None:
    ocr = words((1, "Donated maps are welcome."))
    result = placed("Donated maps are welcome.\n\nAdded by hand: ask at the desk.\n", ocr)
    assert result == [
        ("Donated maps are welcome.", tuple(w.box for w in ocr)),
        ("Added by hand: ask at the desk.", (PAGE,)),
    ]


def test_a_misread_stretch_counts_for_a_span_only_when_wholly_inside_it() -> None:
    ocr = words((1, "open 9-5 daily"))
    located = align(["open", "9", "to", "5", "daily"], ocr)
    assert words_in(located, range(0, 5), whole=True) == [0, 1, 2]
    assert words_in(located, range(1, 2), whole=True) == []  # "9" alone: part of "9-5"
    assert words_in(located, range(1, 2), whole=False) == [1]
