"""Reading a sentence-transformers model directory without loading its weights.

A sentence-transformers model is a directory with ``modules.json`` listing its modules
(``Transformer`` → ``Pooling`` → optional ``Normalize``). nclue's ONNX and static paths
re-implement the *mean-pooling* pipeline, so they read that layout here: the folder of
the transformer weights, the pooling mode, whether outputs are L2-normalised and the
maximum sequence length.

It also reads the model's **prompts** (:func:`resolve_prompts`): the ``prompts`` of
``config_sentence_transformers.json`` (``{"query": "query: ", "passage": "passage: "}`` for E5,
an instruction for BGE or Qwen3-Embedding). The query prompt is ``prompts["query"]``; the passage
prompt is the first of ``prompts["document"]``, ``["passage"]``, ``["corpus"]`` (the order
sentence-transformers' ``encode_document`` tries); a side without its own key takes
``prompts[default_prompt_name]`` when the config names one (what ``SentenceTransformer.encode``
applies to every text), else no prompt. An explicit prompt (``""`` included) overrides the config.
A prompt is prepended to the text (what ``SentenceTransformer.encode(prompt=...)`` does), so a
model whose pooling excludes prompt tokens (``include_prompt: false``) is refused with a prompt.
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
    include_prompt: bool = True
    """``False`` when the Pooling config sets ``include_prompt: false`` (prompt tokens not pooled)."""


ST_CONFIG = "config_sentence_transformers.json"
PASSAGE_PROMPT_NAMES = ("document", "passage", "corpus")
"""Keys of ``prompts`` tried, in order, for the passage side (as sentence-transformers' ``encode_document``)."""


@dataclass(frozen=True)
class Prompts:
    """Text prepended to every query and to every passage (chunk) before encoding; ``""`` = none."""

    query: str = ""
    passage: str = ""

    def to_json(self) -> dict[str, str] | None:
        """Manifest form: ``None`` when both are empty (an index without prompts records nothing)."""
        return {"query": self.query, "passage": self.passage} if self.query or self.passage else None

    @classmethod
    def from_json(cls, record: dict[str, str] | None) -> Prompts:
        """The inverse of :meth:`to_json`."""
        return cls(**record) if record else cls()


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
    include_prompt = True
    for module in modules:
        kind = str(module.get("type", ""))
        folder = root / str(module.get("path", ""))
        if kind.endswith(".Transformer") and transformer_dir is None:
            transformer_dir = folder
        elif kind.endswith(".Pooling"):
            has_config = (folder / "config.json").is_file()
            config = _read_json(folder / "config.json") if has_config else {}
            pooling = _pooling_mode(config) if has_config else "mean"
            include_prompt = config.get("include_prompt", True) is not False
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
        root=root,
        transformer_dir=transformer_dir,
        pooling=pooling,
        normalize=normalize,
        max_seq_length=max_len,
        include_prompt=include_prompt,
    )


def config_prompts(model_path: str | Path) -> Prompts:
    """The prompts ``config_sentence_transformers.json`` declares (module docstring); none without the file."""
    path = check_sentence_transformer(model_path) / ST_CONFIG
    config = _read_json(path) if path.is_file() else {}
    prompts = config.get("prompts") or {}
    if not isinstance(prompts, dict) or not all(isinstance(v, str) for v in prompts.values()):
        raise NclueError(f"{path}: 'prompts' must map prompt names to strings; fix the file or pass the prompts")
    default_name = config.get("default_prompt_name")
    default = prompts.get(default_name, "") if isinstance(default_name, str) else ""
    passage = next((prompts[name] for name in PASSAGE_PROMPT_NAMES if name in prompts), default)
    return Prompts(query=prompts.get("query", default), passage=passage)


def resolve_prompts(model_path: str | Path, query: str | None = None, passage: str | None = None) -> Prompts:
    """The model's prompts (:func:`config_prompts`) with ``query`` / ``passage`` overriding when not ``None``.

    Refused (NclueError) when a prompt is non-empty but the model's pooling leaves prompt tokens out.
    """
    declared = config_prompts(model_path)
    prompts = Prompts(
        query=declared.query if query is None else query, passage=declared.passage if passage is None else passage
    )
    if (prompts.query or prompts.passage) and not read_layout(model_path).include_prompt:
        raise NclueError(
            f"{model_path}: its Pooling config sets include_prompt=false (prompt tokens are not pooled), which "
            "nclue's encoders do not reproduce; pass --dense-query-prompt '' --dense-passage-prompt '' to encode "
            "without prompts"
        )
    return prompts
