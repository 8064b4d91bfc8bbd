"""A text's vector does not depend on the processor that computes it (issue 29): the same texts
are embedded here and under QEMU's emulation of older x86-64 processors, which make ONNX Runtime
run other kernels, and every emulated vector must be this machine's to float rounding.

ONNX Runtime picks its kernels by the instructions the processor offers (AVX-512, AVX2, AVX),
and QEMU's emulator never offers AVX-512, whatever this machine has: `Haswell` has AVX2 and FMA
(the kernels whose int8 products saturated, on the machine that wrote tests/fixtures/schema-5),
`SandyBridge` AVX alone. On a machine without AVX-512 the Haswell run repeats this machine's
kernels; the SandyBridge one still differs. With the int8 model localqa ran before, the Haswell
run was 0.033 away on an AVX-512 machine; on the fixture's passages it gave the fixture's own
vectors, bit for bit, where this machine was 0.037 away (docs/measured.md, "Encoder").

Needs `qemu-x86_64` (Debian's qemu-user; `make test` installs it when run as root). Emulation is
slow: these texts take about half a minute on each processor.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_embeddings_reference import ROUNDING

from localqa.retrieval import embeddings

QEMU = shutil.which("qemu-x86_64")
pytestmark = [
    pytest.mark.semantic,
    pytest.mark.skipif(not embeddings.is_available(), reason="needs localqa[semantic]"),
    pytest.mark.skipif(QEMU is None, reason="needs qemu-x86_64 (apt-get install qemu-user)"),
]

TEXTS = [
    "When must I bring back a camera lens?",
    "equipment notes > Equipment notes > Scanners: The portable scanner EQ-314 may be borrowed for "
    "45 minutes against a deposit of 20 dollars.",
    "opening hours > Opening hours: On Saturdays the library opens at ten; it is closed on Sundays and "
    "public holidays.",
    "Net sales: 2023: 14,694; 2022: 14,544",
]
# What the emulated process runs: localqa's own embedding, from the model this machine built.
EMBED = (
    "import json, sys, numpy\n"
    "from localqa.retrieval import embeddings\n"
    "texts = json.loads(open(sys.argv[1], encoding='utf-8').read())\n"
    "numpy.save(sys.argv[2], embeddings.embed(texts))\n"
)


@pytest.mark.parametrize("processor", ["Haswell", "SandyBridge"])
def test_an_older_processors_vectors_are_this_machines(processor: str, tmp_path: Path) -> None:
    here = embeddings.embed(TEXTS)  # builds the model into the cache first, natively
    texts, found = tmp_path / "texts.json", tmp_path / "vectors.npy"
    texts.write_text(json.dumps(TEXTS), encoding="utf-8")
    emulated = subprocess.run(
        [str(QEMU), "-cpu", processor, sys.executable, "-c", EMBED, str(texts), str(found)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert emulated.returncode == 0, emulated.stderr[-2000:]
    assert abs(np.load(found) - here).max() < ROUNDING
