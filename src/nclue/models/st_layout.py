"""Reading a sentence-transformers model directory without loading its weights.

A sentence-transformers model is a directory with ``modules.json`` listing its modules
(``Transformer`` → ``Pooling`` → optional ``Normalize``). nclue's ONNX and static paths
re-implement the *mean-pooling* pipeline, so they read that layout here: the folder of
the transformer weights, the pooling mode, whether outputs are L2-normalised and the
maximum sequence length.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from nclue.errors import NclueError


@dataclass(frozen=True)
class STLayout:
    """The parts of a sentence-transformers directory nclue needs."""

    root: Path
    transformer_dir: Path
    pooling: str
    normalize: bool
    max_seq_length: int


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise NclueError(f"{path}: unreadable JSON ({exc}); the model directory looks damaged") from None


def _pooling_mode(config: dict) -> str:
    if isinstance(config.get("pooling_mode"), str):
        return str(config["pooling_mode"])
    for mode in ("mean", "cls", "max", "lasttoken", "mean_sqrt_len", "weightedmean"):
        if config.get(f"pooling_mode_{mode}_tokens") or config.get(f"pooling_mode_{mode}_token"):
            return mode
    return "unknown"


def check_sentence_transformer(model_path: str | Path) -> Path:
    """Return ``model_path`` as a Path if it is a sentence-transformers directory, else raise.

    The test is the presence of ``modules.json`` (what ``SentenceTransformer(path)`` reads
    first); a plain Hugging Face checkpoint without it is rejected with the fix.
    """
    root = Path(model_path)
    if not root.exists():
        raise NclueError(f"{root}: model path not found; pass a local sentence-transformers model directory")
    if not root.is_dir():
        raise NclueError(f"{root}: not a directory; pass a local sentence-transformers model directory")
    if not (root / "modules.json").is_file():
        raise NclueError(
            f"{root}: not a sentence-transformers model (no modules.json); "
            "save it with SentenceTransformer(...).save(DIR) or pass a sentence-transformers model directory"
        )
    return root


def read_layout(model_path: str | Path) -> STLayout:
    """Parse ``modules.json``, the pooling config and ``sentence_bert_config.json``."""
    root = check_sentence_transformer(model_path)
    modules = _read_json(root / "modules.json")
    if not isinstance(modules, list):
        raise NclueError(f"{root / 'modules.json'}: expected a list of modules")
    transformer_dir: Path | None = None
    pooling = "none"
    normalize = False
    for module in modules:
        kind = str(module.get("type", ""))
        folder = root / str(module.get("path", ""))
        if kind.endswith(".Transformer") and transformer_dir is None:
            transformer_dir = folder
        elif kind.endswith(".Pooling"):
            pooling = (
                _pooling_mode(_read_json(folder / "config.json")) if (folder / "config.json").is_file() else "mean"
            )
        elif kind.endswith(".Normalize"):
            normalize = True
    if transformer_dir is None:
        raise NclueError(f"{root / 'modules.json'}: no Transformer module; nclue needs a transformer encoder")
    max_len = 512
    for name in ("sentence_bert_config.json", "sentence_transformers_config.json"):
        config_path = transformer_dir / name
        if config_path.is_file():
            value = _read_json(config_path).get("max_seq_length")
            if isinstance(value, int) and value > 0:
                max_len = value
            break
    return STLayout(
        root=root, transformer_dir=transformer_dir, pooling=pooling, normalize=normalize, max_seq_length=max_len
    )
