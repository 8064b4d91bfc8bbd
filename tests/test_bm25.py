"""BM25 (localqa/retrieval/bm25.py), the one formula retrieval and the sentence scorer both score with."""

from __future__ import annotations

import math

import numpy as np
import pytest

from localqa.answers import sentences
from localqa.retrieval import bm25
from localqa.settings import AnswerSettings
from localqa.types import Candidate, Kind, Location


def test_idf_is_the_non_negative_plus_one_form() -> None:
    assert bm25.idf(10, 1) == pytest.approx(math.log(1 + 9.5 / 1.5), rel=1e-12)
    assert bm25.idf(10, 10) > 0  # a term every unit holds still counts a little


def test_a_gain_is_the_textbook_formula_and_the_same_floats_on_arrays() -> None:
    frequencies = np.array([1.0, 2.0, 5.0])
    lengths = np.array([10.0, 20.0, 7.0])
    arrays = bm25.gain(1.7, frequencies, lengths, 12.5, 1.2, 0.75)
    for i in range(3):
        f, length = float(frequencies[i]), float(lengths[i])
        textbook = 1.7 * f * 2.2 / (f + 1.2 * (1 - 0.75 + 0.75 * length / 12.5))
        assert arrays[i] == pytest.approx(textbook, rel=1e-12)
        assert bm25.gain(1.7, f, length, 12.5, 1.2, 0.75) == arrays[i]  # the very same float


def test_the_sentence_scorer_reads_its_k1_and_b_from_the_settings() -> None:
    text = "Loans last ten days. A loan of a loan of a loan is renewed at the loan desk on request."
    passage = Candidate(
        rank=1,
        score=1.0,
        location=Location(
            source="rules.md",
            page=1,
            kind=Kind.PROSE,
            section=None,
            table=None,
            row=None,
            paragraph=1,
            effective=None,
        ),
        text=text,
        doc_id="rules.md",
        tenant="default",
    )

    def lexical(**fields: float) -> list[float]:
        settings = AnswerSettings(unit_semantic_weight=0, **fields)  # type: ignore[arg-type]
        return [u.lexical for u in sentences.rank("How long do loans last?", [passage], settings).units]

    assert lexical() == lexical(unit_k1=1.2, unit_b=0.75)
    assert lexical(unit_b=0.0) != lexical()
    assert lexical(unit_k1=0.0) != lexical()
