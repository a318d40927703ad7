"""Local ONNX export of a sentence-transformers BERT-like encoder, optionally int8-quantised.

The exported graph is the transformer only: ``(input_ids, attention_mask[, token_type_ids])
→ token_embeddings``; mean pooling and L2 normalisation happen in NumPy
(:class:`nclue.models.onnx_encoder.OnnxMeanPoolEncoder`), so the same graph also yields
token vectors for late interaction.

Written here rather than through ``optimum`` (not a dependency): export uses PyTorch's
TorchScript exporter (``torch.onnx.export(..., dynamo=False)``; the dynamo exporter needs
``onnxscript``). The padding mask is handed to the model as a prepared additive 4-D mask
``(1 − m)·min(float32)``, because Transformers' own mask builder has a data-dependent
"no padding → no mask" branch that tracing would freeze. Int8 uses ONNX Runtime's
dynamic quantisation (weights int8, activations quantised on the fly;
``onnxruntime.quantization.quantize_dynamic``).

Exports are cached under ``out_dir/<model-key>-<fp32|int8>/`` where the key holds the
SHA-256 of the model files (:mod:`nclue.models.identity`), so a changed model re-exports.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from pathlib import Path

from nclue.errors import NclueError
from nclue.io import fsync_dir, write_json
from nclue.models.identity import model_identity
from nclue.models.st_layout import read_layout

META_FILE = "nclue_onnx.json"
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
OPSET = 17


def _export_fp32(model_path: Path, target: Path) -> None:
    """Export the transformer of ``model_path`` to ``target/model.onnx`` (+ tokenizer, metadata)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModel, AutoTokenizer

    layout = read_layout(model_path)
    if layout.pooling != "mean":
        raise NclueError(
            f"{model_path}: pooling mode is {layout.pooling!r}; the ONNX path implements mean pooling only — "
            "use --backend torch for this model"
        )
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(layout.transformer_dir))
        model = AutoModel.from_pretrained(str(layout.transformer_dir), attn_implementation="eager")
    except (OSError, ValueError) as exc:
        raise NclueError(f"{layout.transformer_dir}: cannot load the transformer ({exc})") from None
    if not getattr(tokenizer, "is_fast", False):
        raise NclueError(f"{layout.transformer_dir}: no fast tokenizer (tokenizer.json); the ONNX path needs one")
    model.eval()
    input_names = ["input_ids", "attention_mask"]
    uses_types = "token_type_ids" in tokenizer.model_input_names
    if uses_types:
        input_names.append("token_type_ids")

    class _Transformer(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids=None):  # noqa: ANN001 - traced
            additive = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min
            kwargs = {"input_ids": input_ids, "attention_mask": additive}
            if token_type_ids is not None:
                kwargs["token_type_ids"] = token_type_ids
            return self.inner(**kwargs).last_hidden_state

    sample = tokenizer(["an example sentence for tracing", "short"], padding=True, return_tensors="pt")
    args = tuple(sample[name] for name in input_names)
    axes = {name: {0: "batch", 1: "sequence"} for name in [*input_names, "token_embeddings"]}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _Transformer(model),
            args,
            str(target / MODEL_FILE),
            input_names=input_names,
            output_names=["token_embeddings"],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )
    tokenizer.backend_tokenizer.save(str(target / TOKENIZER_FILE))
    identity = model_identity(model_path)
    write_json(
        target / META_FILE,
        {
            "model": identity.to_json(),
            "source": str(Path(model_path).resolve()),
            "inputs": input_names,
            "max_length": layout.max_seq_length,
            "pooling": layout.pooling,
            "normalize": layout.normalize,
            "pad_id": int(tokenizer.pad_token_id or 0),
            "quantized": False,
            "opset": OPSET,
        },
    )


def _quantize(fp32_dir: Path, target: Path) -> None:
    """Dynamic int8 quantisation of ``fp32_dir/model.onnx`` into ``target``."""
    import json
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # quantize_dynamic logs a pre-processing hint on the root logger
    try:
        quantize_dynamic(
            str(fp32_dir / MODEL_FILE), str(target / MODEL_FILE), weight_type=QuantType.QInt8, per_channel=True
        )
    finally:
        root.setLevel(level)
    shutil.copy2(fp32_dir / TOKENIZER_FILE, target / TOKENIZER_FILE)
    meta = json.loads((fp32_dir / META_FILE).read_text(encoding="utf-8"))
    meta["quantized"] = True
    write_json(target / META_FILE, meta)


def _build_atomically(final: Path, build) -> Path:  # noqa: ANN001 - a callable(target)
    """Run ``build(tmpdir)`` and rename the finished directory to ``final`` (no torn caches)."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    try:
        build(tmp)
        try:
            os.replace(tmp, final)
        except OSError:
            if not (final / META_FILE).is_file():
                raise
            shutil.rmtree(tmp)  # a concurrent process finished the same export first
        else:
            fsync_dir(final.parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def export_onnx(
    model_path: str | os.PathLike[str], out_dir: str | os.PathLike[str], quantize_int8: bool = False
) -> Path:
    """Export (or reuse the cached export of) a sentence-transformers model to ONNX.

    Returns the directory holding ``model.onnx``, ``tokenizer.json`` and
    ``nclue_onnx.json`` (model identity, inputs, max length, pooling, normalisation),
    ``out_dir/<name>-<sha12>-fp32`` or ``...-int8``.
    """
    source = Path(model_path)
    read_layout(source)
    identity = model_identity(source)
    out = Path(out_dir)
    fp32_dir = out / f"{identity.key}-fp32"
    if not (fp32_dir / META_FILE).is_file():
        _build_atomically(fp32_dir, lambda tmp: _export_fp32(source, tmp))
    if not quantize_int8:
        return fp32_dir
    int8_dir = out / f"{identity.key}-int8"
    if not (int8_dir / META_FILE).is_file():
        _build_atomically(int8_dir, lambda tmp: _quantize(fp32_dir, tmp))
    return int8_dir
