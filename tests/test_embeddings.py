"""The sentence encoder (localqa.retrieval.embeddings, localqa.retrieval.minilm): its cached ONNX
model, its vectors, and the errors a user sees without the `semantic` extra."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import pytest
from click.testing import CliRunner

from localqa.cli import cli
from localqa.retrieval import embeddings, minilm

F = TypeVar("F", bound=Callable[..., Any])


def needs_semantic(test: F) -> F:
    """A test of the real encoder: marked `semantic` (out of `make test-fast`), skipped without
    localqa[semantic]."""
    marked: F = pytest.mark.semantic(
        pytest.mark.skipif(not embeddings.is_available(), reason="needs localqa[semantic]")(test)
    )
    return marked


SENTENCES = [
    "When must I bring back a camera lens?",
    "Camera lenses are due back within two calendar days.",
    "The reading room opens at nine and closes at five on weekdays.",
    "Net sales: 2023: 14,694; 2022: 14,544",
    "Story time for children is held every Saturday morning in the east wing of the library.",
]


# --- without the extra -------------------------------------------------------------------------


@pytest.fixture
def extra_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(minilm, "missing_modules", lambda: ["onnxruntime", "tokenizers"])
    embeddings._make_encoder.cache_clear()
    yield
    embeddings._make_encoder.cache_clear()


@pytest.mark.usefixtures("extra_missing")
def test_embedding_without_the_extra_names_what_is_missing_and_the_fix() -> None:
    assert embeddings.is_available() is False
    with pytest.raises(embeddings.EmbeddingsUnavailable) as raised:
        embeddings.embed(["anything"])
    assert str(raised.value) == (
        "semantic retrieval needs the embedding model (missing onnxruntime, tokenizers); "
        "install it with: pip install 'localqa[semantic]'"
    )


@pytest.mark.usefixtures("extra_missing")
def test_index_embed_without_the_extra_is_one_error_line(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "hours.md").write_text("# Hours\n\nThe library opens at nine.\n", encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["index", "--pdfs", str(folder), "--db", str(tmp_path / "i.sqlite3"), "--embed"]
    )
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: semantic retrieval needs the embedding model (missing onnxruntime, tokenizers); "
        "install it with: pip install 'localqa[semantic]'\n"
    )


def test_is_available_loads_nothing() -> None:
    code = (
        "import sys; from localqa.retrieval import embeddings; embeddings.is_available(); "
        "print(sorted(m for m in ('onnxruntime', 'onnx', 'tokenizers', 'torch') if m in sys.modules))"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == "[]"


def test_empty_input_needs_no_model(extra_missing: None) -> None:
    assert embeddings.embed([]).shape == (0, embeddings.DIMENSIONS)


# --- the cached model ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fp32_built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fp32 model built once for the module's tests that damage a copy of it."""
    return minilm.ensure_model(tmp_path_factory.mktemp("fp32"), "fp32")


@needs_semantic
def test_the_model_is_built_once_then_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = minilm.ensure_model(tmp_path, "fp32")
    assert path.parent == tmp_path and path.name.startswith("all-MiniLM-L6-v2-fp32-")
    assert minilm.is_intact(path)
    built_at = path.stat().st_mtime_ns

    def no_build(*args: object) -> None:
        raise AssertionError("rebuilt an intact model")

    monkeypatch.setattr(minilm, "build", no_build)
    assert minilm.ensure_model(tmp_path, "fp32") == path
    assert path.stat().st_mtime_ns == built_at
    # Only the graph, its weights and their checksums: no temporary file or build directory is
    # left behind.
    files = [path.name, f"{path.name}.data", f"{path.name}.sha256"]
    assert sorted(p.name for p in tmp_path.iterdir()) == files


@needs_semantic
@pytest.mark.parametrize(
    ("file", "damage"),
    [
        ("graph", "delete"),
        ("graph", "flip a byte"),
        ("weights", "delete"),
        ("weights", "truncate"),
        ("weights", "flip a byte"),
        ("weights", "flip a byte, times put back"),  # its change time still moves
        ("checksum", "delete"),
    ],
)
def test_a_missing_or_damaged_model_is_rebuilt(
    tmp_path: Path, fp32_built: Path, file: str, damage: str
) -> None:
    shutil.copytree(fp32_built.parent, tmp_path, dirs_exist_ok=True)  # new inodes: checked by hash
    path = tmp_path / fp32_built.name
    assert minilm.ensure_model(tmp_path, "fp32") == path and minilm.is_intact(path)
    good = {p: p.read_bytes() for p in (path, minilm.weights_path(path))}
    damaged = {"graph": path, "weights": minilm.weights_path(path), "checksum": Path(f"{path}.sha256")}[file]
    data, times = damaged.read_bytes(), damaged.stat()
    if damage == "delete":
        damaged.unlink()
    elif damage == "truncate":
        damaged.write_bytes(data[: len(data) // 2])
    else:  # same size: only the checksum can tell
        middle = len(data) // 2
        damaged.write_bytes(data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :])
        if damage.endswith("times put back"):
            os.utime(damaged, ns=(times.st_atime_ns, times.st_mtime_ns))
    assert not minilm.is_intact(path)
    assert minilm.ensure_model(tmp_path, "fp32") == path
    assert minilm.is_intact(path)
    assert {p: p.read_bytes() for p in good} == good  # the build is deterministic


@needs_semantic
def test_an_unchanged_model_is_not_hashed_again(
    tmp_path: Path, fp32_built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files are hashed when they may have changed since their sums last matched (a
    copied cache: new inodes), not on every load."""
    built = fp32_built
    copy = tmp_path / "copy" / built.name
    shutil.copytree(built.parent, copy.parent)
    hashed: list[str] = []
    sha256_file = minilm.sha256_file

    def counted(path: Path | str) -> str:
        hashed.append(Path(path).name)
        return sha256_file(path)

    monkeypatch.setattr(minilm, "sha256_file", counted)
    assert minilm.is_intact(built) and hashed == []
    assert minilm.is_intact(copy) and hashed == [copy.name, f"{copy.name}.data"]
    assert minilm.is_intact(copy) and len(hashed) == 2  # recorded: not hashed again


@needs_semantic
def test_a_failed_build_leaves_nothing_half_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def quantiser_dies(source: Path, dest: Path, *, seven_bit_weights: bool) -> None:
        dest.write_bytes(b"half a model")
        raise KeyboardInterrupt

    monkeypatch.setattr(minilm, "_quantise", quantiser_dies)
    with pytest.raises(KeyboardInterrupt):
        minilm.ensure_model(tmp_path, "int8")
    assert list(tmp_path.iterdir()) == []


@needs_semantic
def test_an_unwritable_cache_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("", encoding="utf-8")
    with pytest.raises(
        minilm.EncoderBuildError,
        match=r"cannot write the embedding model to .*not-a-directory.*LOCALQA_CACHE",
    ):
        minilm.ensure_model(blocker / "cache", "fp32")


@needs_semantic
def test_the_cache_key_follows_the_package_and_the_builder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = minilm.model_files()
    key = minilm.cache_key(files, "int8")
    assert minilm.cache_key(files, "fp32") != key

    copy = tmp_path / "model"
    shutil.copytree(files.directory, copy)  # copy2: same bytes, same modification times
    copied = replace(files, directory=copy)
    assert minilm.cache_key(copied, "int8") == key
    stat = copied.weights.stat()
    os.utime(copied.weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # a reinstall
    assert minilm.cache_key(copied, "int8") != key

    monkeypatch.setattr(minilm, "BUILDER_VERSION", minilm.BUILDER_VERSION + 1)
    assert minilm.cache_key(files, "int8") != key


@needs_semantic
def test_the_seven_bit_precision_has_its_own_file_and_seven_bit_weights(tmp_path: Path) -> None:
    """benchmarks/embed.py's `int8-7bit` (issue 39): ONNX Runtime's `reduce_range`, so every
    quantised weight lies within +-64, where the int8 model's reach +-127; a file of its own."""
    import onnx
    from onnx import numpy_helper

    def largest_weight(precision: minilm.Precision) -> int:
        model = onnx.load(str(minilm.ensure_model(tmp_path, precision)))
        quantised = [
            numpy_helper.to_array(tensor).astype(int)
            for tensor in model.graph.initializer
            if tensor.data_type == onnx.TensorProto.INT8
        ]
        assert quantised, f"{precision}: no int8 weights"
        return max(int(abs(weights).max()) for weights in quantised)

    assert largest_weight("int8") == 127
    assert largest_weight("int8-7bit") == 64
    assert len(list(tmp_path.glob("*.onnx"))) == 2


@needs_semantic
def test_embeddings_build_into_the_localqa_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCALQA_CACHE", str(tmp_path))
    embeddings._make_encoder.cache_clear()
    try:
        vectors = embeddings.embed(SENTENCES[:2])
    finally:
        embeddings._make_encoder.cache_clear()
    (model,) = tmp_path.glob(f"all-MiniLM-L6-v2-{embeddings.PRECISION}-*.onnx")
    assert minilm.is_intact(model)
    assert vectors.shape == (2, embeddings.DIMENSIONS)


# --- the vectors -------------------------------------------------------------------------------


@needs_semantic
@pytest.mark.parametrize("threads", [1, 4])
def test_vectors_are_normalised_in_input_order_and_ignore_their_neighbours(
    threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sorting by length must put every row back where it came from, and a text's vector must not
    depend on the other texts embedded with it (in an index, those are other documents), nor on
    which thread encoded it: the vectors of many texts, on one thread or on several, are exactly
    each text's vector embedded alone."""
    import numpy as np

    monkeypatch.setattr(embeddings, "machine_threads", lambda: threads)
    texts = [SENTENCES[i % len(SENTENCES)] + f" ({i})" * (i % 7) for i in range(40)]
    together = embeddings.embed(texts)
    assert together.dtype == np.float32
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    alone = np.stack([embeddings.embed([t])[0] for t in texts])
    assert np.array_equal(together, alone)
    assert np.array_equal(embeddings.embed(texts[::-1]), together[::-1])
    encoder = embeddings._encoder()
    reference = np.concatenate([encoder.encode_ids([ids]) for ids in encoder.tokenize(texts)])
    assert np.array_equal(together, reference)
    repeated = embeddings.embed(texts + texts[:5])  # a repeated text is computed once, same vector
    assert np.array_equal(repeated, np.concatenate([together, together[:5]]))


@needs_semantic
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own nice value is Linux's")
@pytest.mark.parametrize("threads", [1, 2])
def test_background_embedding_runs_below_the_caller_and_leaves_its_priority_alone(
    monkeypatch: pytest.MonkeyPatch, threads: int
) -> None:
    """An index's vectors are computed in the background (`embed_missing`): its encoding threads
    run BACKGROUND_NICENESS lower, so questions asked meanwhile come first, while the caller's own
    thread (a refresh in `localqa eval` goes on to answer questions) keeps its priority. Each
    vector is what it is in the foreground."""
    import numpy as np

    monkeypatch.setattr(embeddings, "machine_threads", lambda: threads)
    encoder = embeddings._encoder()
    seen: list[tuple[int, int]] = []  # (thread id, nice value) of each text's encoding
    original = type(encoder).encode_ids

    def recording(self: minilm.Encoder, ids: list[list[int]]) -> object:
        seen.append((threading.get_native_id(), os.getpriority(os.PRIO_PROCESS, 0)))
        return original(self, ids)

    monkeypatch.setattr(type(encoder), "encode_ids", recording)
    caller = os.getpriority(os.PRIO_PROCESS, 0)
    texts = SENTENCES * 3
    background = embeddings.embed(texts, background=True)
    assert os.getpriority(os.PRIO_PROCESS, 0) == caller
    assert len(seen) == len(SENTENCES)  # repeated texts are encoded once
    assert {nice for _, nice in seen} == {min(caller + embeddings.BACKGROUND_NICENESS, 19)}
    assert threading.get_native_id() not in {thread for thread, _ in seen}
    seen.clear()
    assert np.array_equal(embeddings.embed(texts), background)
    assert {nice for _, nice in seen} == {caller}


@needs_semantic
def test_a_paraphrase_is_nearer_than_an_unrelated_sentence() -> None:
    question, paraphrase, unrelated = embeddings.embed(SENTENCES[:3])
    assert question @ paraphrase > 0.5 > question @ unrelated


@needs_semantic
def test_progress_counts_every_text_once_up_to_the_total(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings, "BATCH", 2)
    monkeypatch.setattr(embeddings, "PROGRESS_EVERY", 2)
    seen: list[tuple[int, int, str]] = []
    embeddings.embed(SENTENCES, progress=lambda done, total, what: seen.append((done, total, what)))
    assert seen == [(2, 5, "2 of 5 passages"), (4, 5, "4 of 5 passages"), (5, 5, "5 of 5 passages")]


@needs_semantic
def test_concurrent_callers_get_the_same_vectors_as_one_caller() -> None:
    """`localqa serve` embeds questions from several request threads at once: the shared
    tokenizer refuses concurrent use unless it is serialised."""
    import numpy as np

    texts = [f"How many days may a member keep item number {n}?" for n in range(16)]
    alone = embeddings.embed(texts)
    results: dict[int, object] = {}

    def embed_one(n: int) -> None:
        try:
            results[n] = embeddings.embed([texts[n]])[0]
        except BaseException as error:  # reported below: a thread's exception is otherwise lost
            results[n] = error

    threads = [threading.Thread(target=embed_one, args=(n,)) for n in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for n, vector in results.items():
        assert not isinstance(vector, BaseException), vector
        assert np.allclose(vector, alone[n], atol=1e-6)


@needs_semantic
def test_the_weights_file_changes_no_vector(tmp_path: Path) -> None:
    """The model as two files (graph, weights mapped from their own file) computes what the
    same model as one file computes, to the bit."""
    import onnx

    files = minilm.model_files()
    path = minilm.ensure_model(tmp_path / "split", embeddings.PRECISION)
    whole = tmp_path / "whole.onnx"
    onnx.save_model(onnx.load(str(path)), str(whole))  # the weights read back into one file
    assert not minilm.weights_path(whole).exists()
    split, single = minilm.Encoder(path, files, threads=1), minilm.Encoder(whole, files, threads=1)
    for text in SENTENCES:
        assert split.encode([text]).tobytes() == single.encode([text]).tobytes()


@needs_semantic
def test_a_process_never_ends_while_the_model_is_loading(tmp_path: Path) -> None:
    """A process that ended while ONNX Runtime was loading the model aborted (exit status 134,
    "terminate called without an active exception"): a search that stopped at a usage error
    after the warm-up had begun. The loading thread is not a daemon: the process waits for it."""
    embeddings._make_encoder.cache_clear()
    try:
        embeddings.warm_up()
        (loading,) = [t for t in threading.enumerate() if t.name == "localqa-encoder"]
        assert not loading.daemon
        loading.join()
    finally:
        embeddings._make_encoder.cache_clear()
    for delay in ("0", "0.05", "0.1"):
        code = (
            "import time; from localqa.retrieval import embeddings; "
            f"embeddings.warm_up(); time.sleep({delay})"
        )
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
        assert (done.returncode, done.stderr) == (0, "")
