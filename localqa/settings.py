"""Settings that change results, in one typed object that an evaluation run records whole.

`Settings` has two parts. `RetrievalSettings` decides which candidates come back: the retriever,
how many, BM25's constants, what is searchable with a passage, the semantic-neighbour threshold
and the fusion. `AnswerSettings` holds everything the answer stage decides with: how many
passages it ranks the sentences of, how the sentence scorer ranks them and how many the model
sees, the sampling and generation bounds, the embedded model's threads and context, and when
other documents are listed as other evidence. Changing any of them is a different experiment,
so a run stores them all (`--compare` then sees the change).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal, NamedTuple, get_args

from pydantic import BaseModel, ConfigDict, Field

from localqa.types import TERM_KINDS, RefusalKind, TermKind

# Where the index lives unless --db, $LOCALQA_DB or a caller says otherwise (relative to the
# working folder, beside pdfs/).
DEFAULT_DB = Path("index/library.sqlite3")


class Bounds(NamedTuple):
    least: int
    most: int


# Limits on one question, the same for the CLI, the JSON API and the web pages. Each part is
# retrieved on its own and, under `ask`, is one model call: a question of 300 parts would hold the
# model for 300 calls. 1,368 dev-set and suite questions split into at most 3 parts.
MAX_PARTS = 10
SEARCH_K = Bounds(1, 100)  # candidates per part (`search`, `eval`, POST /api/search)
ASK_K = Bounds(1, 20)  # passages a model sees per part (`ask`, POST /api/ask)
# A question's size (with its parts) as a server takes it: the JSON API, /v1 and `localqa mcp`.
MAX_QUESTION_BYTES = 4096
QUESTION_TOO_LONG = f"the question is over {MAX_QUESTION_BYTES // 1024} KB; ask something shorter"


def question_too_long(*texts: str) -> bool:
    """Whether a question with its earlier turns is over `MAX_QUESTION_BYTES` in UTF-8 (the bound
    the API, `/v1` and the MCP tools each hold a question to)."""
    return sum(len(t.encode("utf-8", "surrogatepass")) for t in texts) > MAX_QUESTION_BYTES


def machine_threads() -> int:
    """The cores this process may run on (its CPU affinity, else the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


Retriever = Literal["auto", "lexical", "semantic", "hybrid"]
RETRIEVERS: tuple[Retriever, ...] = get_args(Retriever)
Chunking = Literal["heading", "body"]
CHUNKINGS: tuple[Chunking, ...] = get_args(Chunking)
UnitOrder = Literal["scorer", "passage"]


class RetrievalSettings(BaseModel):
    """Everything that changes which candidates come back; stored with every evaluation run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # "auto": hybrid when the index has embeddings (and the embedding model is installed),
    # lexical otherwise. Searching resolves it; runs record what was used.
    retriever: Retriever = "auto"
    k: int = 5
    k1: float = 1.2
    b: float = 0.75
    # "heading": a passage's document title and heading path are searchable with its text;
    # "body": its text only.
    chunking: Chunking = "heading"
    # A semantic neighbour: a passage at least this close (cosine) to the question; with no
    # neighbour and no shared meaningful word, retrieval abstains (docs/measured.md#retrieval).
    neighbour: float = 0.2
    # At most this many candidates of one part from one page; 0: no cap (docs/measured.md#retrieval).
    per_page: int = Field(default=2, ge=0)
    # Hybrid: reciprocal rank fusion, score = sum of weight / (rrf_k + rank) over both rankings.
    rrf_k: int = 60
    lexical_weight: float = 1.0
    semantic_weight: float = 1.0
    semantic_depth: int = 100  # how many semantic ranks take part in the fusion


class AnswerSettings(BaseModel):
    """How one question part is answered. Defaults are the measured choices (docs/measured.md)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # Passages per part whose sentences are ranked (retrieval's k for answering; docs/measured.md#answers).
    k: int = Field(default=8, ge=1)

    # The sentence scorer (localqa.answers.sentences) ranks every quotable unit (a sentence; a table row
    # is one unit) of the `k` passages: BM25 over the units, the MiniLM cosine and retrieval's rank
    # of the unit's passage, fused by reciprocal rank, weight / (unit_rrf_k + rank) from each. The
    # model is shown the best `units` of them, in the scorer's order ("scorer") or passage by
    # passage ("passage"), and replies with one's label and number (docs/measured.md#answers).
    units: int = Field(default=4, ge=1)
    order: UnitOrder = "scorer"
    unit_lexical_weight: float = Field(default=1.0, ge=0.0)
    unit_semantic_weight: float = Field(default=1.0, ge=0.0)
    unit_passage_weight: float = Field(default=1.0, ge=0.0)
    unit_rrf_k: int = Field(default=60, ge=0)
    # BM25 over the units (`localqa.retrieval.bm25`): how fast a repeated term saturates, and how much a
    # long unit is discounted; retrieval's defaults.
    unit_k1: float = Field(default=1.2, ge=0.0)
    unit_b: float = Field(default=0.75, ge=0.0, le=1.0)

    # Greedy decoding: the same question gives the same answer.
    temperature: float = Field(default=0.0, ge=0.0)
    top_k: int = Field(default=1, ge=0)
    seed: int = 0
    # Generated tokens at most: the reply is a label and a number (see prompts.request).
    reply_tokens: int = Field(default=200, ge=1)

    # The model's context window (embedded: llama.cpp's n_ctx; ollama: num_ctx).
    context_tokens: int = Field(default=4096, ge=256)
    # Threads the embedded model computes with: the cores this process may use.
    threads: int = Field(default_factory=machine_threads, ge=1)

    # A verified quote is shown only when the model gave the passage label it chose at least this
    # probability (backends that report token probabilities); just above a choice at chance
    # among 4 labels; 0 turns the check off (docs/measured.md#answers).
    min_label_confidence: float = Field(default=0.3, ge=0.0, le=1.0)

    # The model may override the scorer's first sentence only at this label probability or more;
    # a less sure override quotes the scorer's first (`Selection.kept_first`), a backend that
    # reports no probability is not judged; 0 lets every override stand (docs/measured.md#answers).
    min_override_confidence: float = Field(default=0.8, ge=0.0, le=1.0)

    # When the evidence decides (localqa/answers/deciding.py), the scorer's first unit is quoted and no
    # model is called: the identifier's own table row, a figure computed from cited operands, or a
    # value of the asked kind whose unit leads the next that can answer by at least `decide_margin`
    # of its own fused score. 0 was chosen on MMLongBench-dev, with the model asked on every part:
    # where the first unit holds a value of the asked kind, it is on an evidence page as often as
    # the model's choice at every margin up to 0.03 and most often at 0 (16 of 26 parts against 11);
    # reported on FinanceBench-dev (9 of 16 against 8) and the library suite (17 of 18 against 15)
    # (docs/measured.md#answers). `always_ask_model` asks the model on every part (evaluating it).
    always_ask_model: bool = False
    decide_margin: float = Field(default=0.0, ge=0.0, le=1.0)

    # Evidence coverage (localqa/answers/coverage.py): the kinds of question term a verified quote's
    # evidence must mention, else the quote is withheld with the missing term as the reason; ()
    # turns the check off. A "word" (one no quotable unit carries) passes when a unit is at least
    # `coverage_neighbour` close to it in meaning (docs/measured.md#answers).
    coverage: tuple[TermKind, ...] = TERM_KINDS
    coverage_neighbour: float = Field(default=0.35, ge=-1.0, le=1.0)
    # The kinds of refusal that withhold the quote (`localqa.evaluate.refusals` names them: a
    # coverage term's kind, a figure of the question being a "number", and "confidence" for a
    # label below `min_label_confidence`). A kind not listed shows the quote with its doubt named
    # beside it (`Answer.doubts`): each kind was measured as a classifier on a dev set it was not
    # chosen on, and only kinds clearly better than chance refuse (docs/answers.md#doubts): chosen
    # on each MMLongBench dev split and reported on the other (`localqa.evaluate.refusals.choose`,
    # `python -m benchmarks.coverage --runs DIR --choose`), "name" refuses on both; a word's
    # closeness in meaning and a year only the candidates lack do not; "identifier", a year and a
    # word no eligible document holds are exercised by no dev case and keep refusing; "visual" (a
    # colour or typeface no passage writes) is chosen on neither split (too few cases): a doubt. Within a
    # refusing kind only what the evidence plainly lacks refuses: a name or year that no passage
    # of the part mentions and no eligible document holds (one another passage or the collection
    # holds is a doubt), a word no eligible document holds (without retrieval's look-up: one
    # nothing comes even `coverage_word_floor` close to in meaning, or any, without embeddings);
    # the rest are doubts (docs/measured.md#doubts).
    refusals: tuple[RefusalKind, ...] = ("identifier", "name", "year", "word")
    coverage_word_floor: float = Field(default=0.25, ge=-1.0, le=1.0)

    # Another document's candidate is listed as other evidence under a quote when it is among the
    # top `other_evidence_ranks` and scores at least `other_evidence_share` of the best candidate
    # (weaker ones merely share a word or two; the rank cap matters for fused scores, which sit
    # close together).
    other_evidence_share: float = Field(default=0.5, ge=0.0)
    other_evidence_ranks: int = Field(default=3, ge=0)


class Settings(BaseModel):
    """Everything that changes a result, retrieval and answering; an evaluation run stores it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    answering: AnswerSettings = Field(default_factory=AnswerSettings)

    def for_answering(self) -> RetrievalSettings:
        """The retrieval that feeds a model: `answering.k` candidates per part. `ask`, `serve`
        and `eval --model` all use it, so a model is shown the same passages in each."""
        return self.retrieval.model_copy(update={"k": self.answering.k})
