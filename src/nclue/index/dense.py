"""The dense page index: chunk embeddings of every page, stored inside the collection.

``COLLECTION/index/dense/<model-key>-<backend>/`` holds

* ``manifest.json`` — model name and SHA-256 of its files, model path, backend, window,
  overlap, dimension, dtype, counts, SHA-256 of ``pages.parquet``, ``complete`` flag; and, only
  when set, ``prompts`` (``{"query", "passage"}``) and ``span_pages: true``;
* ``chunks.npz`` — ``page`` (page row of each chunk), ``start``/``end`` (character span); for
  page-spanning chunks also ``cover_offsets``/``cover_pages`` (the pages each chunk covers,
  :mod:`nclue.models.chunking`);
* ``vectors.npy`` — ``(n_chunks, dim)`` L2-normalised float32 (or float16) embeddings.

Prompts and spanning name the index: with either, the folder is
``<model-name>-p<8 hex of the prompts>-span-<sha12>-<backend>`` (each tag only when it applies),
so an index built with other prompts or chunking is never reused, and ``dense:span`` picks it.
The passage prompt is prepended to every chunk text (:meth:`~nclue.models.chunking.Chunks.texts`,
so token passes encode the same texts); the query prompt to every query
(:meth:`DenseIndex.load_encoder`). The window (tokens per chunk, prompt excluded) is at most
:func:`window_limit` — the model's ``max_seq_length`` less two special tokens and the passage
prompt's tokens; a larger ``window`` is refused, not truncated.

Building is resumable: chunks are embedded in shards of ``shard_size`` chunks written
atomically to ``shards/``; a rerun with the same model and settings skips finished
shards, and the shards are joined into ``vectors.npy`` at the end. A directory whose
manifest names another model, backend or chunking is never appended to (vectors of two
models are never mixed); pass ``rebuild=True`` to replace it. With ``tokens=True`` the
same encoder pass also writes the late-interaction token index
(:mod:`nclue.index.tokens`): the token states the encoder computes before pooling are
compressed and stored instead of thrown away.

The default encoder path is :data:`~nclue.models.encoder.DEFAULT_BACKEND`: bfloat16 weights where
the CPU has native bfloat16 (AVX512-BF16 or AMX), the exact fp32 ONNX graph elsewhere, in
length-sorted batches of :data:`~nclue.models.encoder.DEFAULT_BATCH_SIZE`.

At query time :func:`open_dense_index` finds the index, checks that the collection has
not changed and that the model files still hash to the recorded SHA-256. Queries are
encoded on the vectors' backend, except for the bfloat16 default: its queries go through
the exact fp32 ONNX graph of the same model (few, short texts; the bfloat16 rounding then
sits on the document side only).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import warnings
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from nclue.corpus.store import PageStore, pages_fingerprint
from nclue.engine import Engine
from nclue.errors import NclueError
from nclue.index.encoding import ShardResult, run_shards
from nclue.index.integrity import check, problems, record_files
from nclue.index.options import DenseOptions
from nclue.index.token_codec import require_bits
from nclue.index.tokens import TokenShards, token_dir, token_settings, tokens_pass
from nclue.io import atomic_write_bytes, exclusive_lock, writable_dir, write_json
from nclue.models.chunking import Chunks, chunk_documents, chunk_pages
from nclue.models.encoder import (
    DEFAULT_BATCH_SIZE,
    QUERY_BACKEND,
    Encoder,
    load_encoder,
    load_tokenizer,
    resolve_model_path,
    with_prompt,
)
from nclue.models.identity import ModelIdentity, model_identity
from nclue.models.st_layout import Prompts, read_layout, resolve_prompts
from nclue.progress import Progress, quiet, stage_advance

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
CHUNKS = "chunks.npz"
VECTORS = "vectors.npy"
SHARDS = "shards"
SPECIAL_TOKENS = 2
"""Room left in the model's ``max_seq_length`` for ``[CLS]``/``[SEP]`` (or ``<s>``/``</s>``)."""
CHUNKING = 2
"""Version of the chunk windows (:func:`~nclue.models.chunking.word_windows`): 2 = no chunk longer than
the window. Recorded for indexes with more than one window a page; a page's first window (``1``) never
changed, so those indexes keep their manifest."""
OPTIONAL_SETTINGS = ("prompts", "span_pages", "chunking")
"""Manifest settings written only when set (an index without them has the pre-prompt manifest)."""


def dense_root(collection_dir: str | os.PathLike[str]) -> Path:
    """``COLLECTION/index/dense``."""
    return Path(collection_dir) / "index" / "dense"


def build_command(collection_dir: str | os.PathLike[str], model_path: str | os.PathLike[str] | None = None) -> str:
    """The command that builds dense vectors (quoted in error messages)."""
    model = str(model_path) if model_path is not None else "MODEL_PATH"
    return f"nclue index {collection_dir} --dense {model}"


def _save_npy(path: Path, array: np.ndarray) -> None:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    atomic_write_bytes(path, buffer.getvalue())


def _save_npz(path: Path, **arrays: np.ndarray) -> None:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    atomic_write_bytes(path, buffer.getvalue())


def read_manifest(directory: Path) -> dict[str, Any] | None:
    """A dense index directory's ``manifest.json`` (``None`` when absent; unreadable → NclueError)."""
    path = directory / MANIFEST
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise NclueError(f"{path}: unreadable dense-index manifest ({exc}); rebuild with --rebuild") from None


@dataclass(frozen=True)
class DenseIndex:
    """A finished dense index: manifest, chunk map and the vectors (memory-mapped)."""

    directory: Path
    manifest: dict[str, Any]
    chunks: Chunks
    vectors: np.ndarray

    @property
    def key(self) -> str:
        """Directory name: ``<model-key>-<backend>``."""
        return self.directory.name

    @property
    def backend(self) -> str:
        """Encoder backend the vectors were made with."""
        return str(self.manifest["backend"])

    @property
    def model_path(self) -> Path:
        """Model directory recorded at build time."""
        return Path(self.manifest["model_path"])

    @property
    def prompts(self) -> Prompts:
        """The query and passage prompts the index was built with (both empty when none)."""
        return Prompts.from_json(self.manifest.get("prompts"))

    def check_model(self, model_path: str | os.PathLike[str] | None = None) -> None:
        """Raise unless ``model_path`` (default: the recorded one) holds the model that made the vectors."""
        check_same_model(self, self.model_path if model_path is None else model_path)

    def load_encoder(
        self,
        model_path: str | os.PathLike[str] | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        queries: bool = True,
    ) -> Encoder:
        """The query encoder (``queries``) or the encoder that made the vectors: same model files
        (checked by SHA-256); the backend is the vectors' own, except that queries of a bfloat16
        index are encoded by the exact fp32 graph (:data:`~nclue.models.encoder.QUERY_BACKEND`).
        The query encoder prepends the index's query prompt; the other one adds nothing (the passage
        prompt is part of :meth:`~nclue.models.chunking.Chunks.texts`)."""
        path = Path(model_path) if model_path is not None else self.model_path
        if not path.is_dir():
            raise NclueError(
                f"{self.directory}: the vectors were made with {self.manifest['model']['name']} at {path}, "
                "which no longer exists; pass the model path or rebuild with "
                f"`{build_command(self.directory.parents[2])}`"
            )
        self.check_model(path)
        if not queries:
            return load_encoder(path, backend=self.backend, batch_size=batch_size)
        encoder = load_encoder(path, backend=QUERY_BACKEND.get(self.backend, self.backend), batch_size=batch_size)
        return with_prompt(encoder, self.prompts.query)


def check_same_model(index: DenseIndex, model_path: str | os.PathLike[str]) -> None:
    """Raise unless ``model_path`` hashes to the model that made ``index``'s vectors."""
    identity = model_identity(model_path)
    recorded = index.manifest["model"]
    if identity.sha256 != recorded["sha256"]:
        raise NclueError(
            f"{index.directory}: vectors were made by model {recorded['name']} (sha256 {recorded['sha256'][:12]}), "
            f"but {model_path} is {identity.name} (sha256 {identity.sha256[:12]}); vectors of two models cannot be "
            f"compared — rebuild with `{build_command(index.directory.parents[2], model_path)}`"
        )


def dense_settings(
    collection_dir: str | os.PathLike[str],
    options: DenseOptions | None = None,
    store: PageStore | None = None,
    **settings: Any,
) -> dict[str, Any]:
    """``{"key": directory name, "settings": manifest fields}`` of the index ``options`` (with any
    field changed by keyword, as for :func:`build_dense_index`) build: the fields an existing index
    must match to be resumed or reused."""
    options = (options or DenseOptions()).with_settings(**settings)
    path = resolve_model_path(options.model_path).resolve()
    prompts = resolve_prompts(path, options.query_prompt, options.passage_prompt)  # checks the folder first
    identity = model_identity(path)
    pages = store if store is not None else PageStore.open(collection_dir)
    optional = {
        "prompts": prompts.to_json(),
        "span_pages": True if options.span_pages else None,
        "chunking": CHUNKING if options.max_chunks_per_page != 1 else None,
    }
    return {
        "key": index_key(identity, options.backend, prompts, options.span_pages),
        "settings": {
            "format": FORMAT_VERSION,
            "model": identity.to_json(),
            "backend": options.backend,
            "window": checked_window(path, options.window, prompts.passage),
            "overlap": int(options.overlap),
            "dtype": options.dtype,
            "shard_size": int(options.shard_size),
            "pages_sha256": pages.fingerprint,
            "n_pages": int(pages.n_pages),
            "max_chunks_per_page": options.max_chunks_per_page,
            **{k: v for k, v in optional.items() if v is not None},
        },
    }


def index_key(identity: ModelIdentity, backend: str, prompts: Prompts, span_pages: bool) -> str:
    """Folder name of a dense index: ``<model-key>-<backend>``, with ``p<8 hex>`` (digest of the
    prompts) and ``span`` between the model name and its SHA-256 prefix when they apply."""
    record = prompts.to_json()
    tags = [f"p{hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()[:8]}"] if record else []
    tags += ["span"] if span_pages else []
    name, sha = identity.key.rsplit("-", 1)
    return "-".join([name, *tags, sha, backend])


def window_limit(model_path: str | os.PathLike[str], passage_prompt: str = "") -> int:
    """Most tokens a chunk may hold: ``max_seq_length − 2`` (special tokens) less the passage prompt's tokens."""
    layout = read_layout(model_path)
    tokenizer = load_tokenizer(model_path) if passage_prompt else None
    prompt_tokens = len(tokenizer.encode(passage_prompt, add_special_tokens=False).ids) if tokenizer else 0
    return max(1, layout.max_seq_length - SPECIAL_TOKENS - prompt_tokens)


def checked_window(model_path: str | os.PathLike[str], window: int | None, passage_prompt: str = "") -> int:
    """``window``, or :func:`window_limit` when ``None``; a window above the limit is refused (the
    encoder would silently cut every chunk's tail)."""
    limit = window_limit(model_path, passage_prompt)
    if window is None:
        return limit
    if int(window) > limit:
        layout = read_layout(model_path)
        prompt = f" less the passage prompt {passage_prompt!r}" if passage_prompt else ""
        raise NclueError(
            f"--dense-window {window} exceeds what {model_path} takes: max_seq_length {layout.max_seq_length} "
            f"({layout.transformer_dir / 'sentence_bert_config.json'}) less {SPECIAL_TOKENS} special tokens{prompt} "
            f"leaves {limit} tokens per chunk; pass --dense-window {limit} or less, or a model with a longer "
            "max_seq_length"
        )
    return int(window)


def build_dense_index(
    collection_dir: str | os.PathLike[str],
    options: DenseOptions | None = None,
    *,
    tokens: bool = False,
    progress: Progress = quiet,
    rebuild: bool = False,
    engine: Engine | None = None,
    **settings: Any,
) -> Path:
    """Embed every page chunk of a collection as ``options`` say (:class:`~nclue.index.options.DenseOptions`,
    any of whose fields may also be given as a keyword: ``backend="onnx"``); return the index directory.

    Resumes an unfinished build with identical settings; refuses to touch an index built with
    other settings unless ``rebuild``. ``tokens`` also builds the token index (``token_bits``-bit
    codes) in the same encoder pass — or, when the dense vectors already exist, in a token-only
    pass over their chunks. The encoder shards go to ``workers`` processes
    (:mod:`nclue.index.encoding`), or to ``engine`` (e.g. ``nclue.engine.RayEngine``; the same
    vectors) when given. ``progress`` (:mod:`nclue.progress`) hears ``"dense chunks"`` (total:
    the chunks to encode) and, for a token-only pass, ``"token chunks"``.
    """
    if options is not None and not isinstance(options, DenseOptions):
        warnings.warn(
            "build_dense_index(COLLECTION, MODEL_PATH) is deprecated: pass model_path=MODEL_PATH or a DenseOptions",
            DeprecationWarning,
            stacklevel=2,
        )
        if "model_path" in settings:
            raise NclueError("build_dense_index: the model path is given twice (positionally and as model_path=)")
        settings = {"model_path": options, **settings}
        options = None
    options = (options or DenseOptions()).with_settings(**settings).checked()
    if tokens:
        require_bits(options.token_bits)
    collection = Path(collection_dir)
    store = PageStore.open(collection)
    options = replace(options, model_path=resolve_model_path(options.model_path).resolve())
    wanted = dense_settings(collection, options, store)
    directory = dense_root(collection) / wanted["key"]
    writable_dir(dense_root(collection), "index")
    with exclusive_lock(collection, "collection"):
        built = _build(collection, store, options, directory, wanted["settings"], tokens, rebuild, progress, engine)
        if tokens:
            index = open_index_dir(collection, built)
            tokens_pass(collection, index, options, progress=progress, engine=engine)
        return built


def _build(
    collection: Path,
    store: PageStore,
    options: DenseOptions,
    directory: Path,
    settings: dict[str, Any],
    tokens: bool,
    rebuild: bool,
    progress: Progress,
    engine: Engine | None,
) -> Path:
    """:func:`build_dense_index` while holding the collection's lock (tokens in the same pass
    when ``tokens`` and the dense vectors are not finished yet)."""
    path, backend, batch_size, dtype = Path(options.model_path), options.backend, options.batch_size, options.dtype
    shard_size = options.shard_size
    token_bits = options.token_bits if tokens else None
    if rebuild and directory.exists():
        shutil.rmtree(directory)
    if _finished(directory, settings):
        return directory
    texts = store.texts
    chunks = make_chunks(store, options, settings)
    manifest = {**settings, "model_path": str(path), "n_chunks": len(chunks), "complete": False}
    directory.mkdir(parents=True, exist_ok=True)
    _save_npz(directory / CHUNKS, **chunks.arrays())
    write_json(directory / MANIFEST, manifest)
    shard_dir = directory / SHARDS
    shard_dir.mkdir(exist_ok=True)
    n_shards = (len(chunks) + shard_size - 1) // shard_size
    token_shards = None
    if token_bits is not None and backend != "static":
        link = DenseIndex(directory, manifest, chunks, np.zeros((0, 0), np.float32))
        token_shards = TokenShards(
            token_dir(collection, directory.name), token_settings(link, token_bits, shard_size), rebuild
        )
        token_shards.start()
    todo = [
        i
        for i in range(n_shards)
        if not (shard_dir / f"shard-{i:05d}.npy").is_file() or (token_shards is not None and not token_shards.done(i))
    ]

    def rows(shard: int) -> slice:
        return slice(shard * shard_size, min((shard + 1) * shard_size, len(chunks)))

    tick = stage_advance(progress, "dense chunks", sum(rows(i).stop - rows(i).start for i in todo))

    def store_shard(shard: int, n: int, result: ShardResult) -> None:
        vectors, packed = result
        if token_shards is not None and packed is not None:
            token_shards.write(shard, packed)  # token codes first: a shard is done when both exist
        _save_npy(shard_dir / f"shard-{shard:05d}.npy", np.asarray(vectors).astype(dtype))
        tick(n)

    run_shards(
        ((i, chunks.texts(texts, rows(i))) for i in todo),
        len(todo),
        lambda: load_encoder(path, backend=backend, batch_size=batch_size, threads=options.threads),
        (str(path), backend, batch_size),
        options.workers,
        True,
        token_bits if token_shards is not None else None,
        store_shard,
        engine,
    )
    dim = _join_shards(directory, manifest, n_shards, len(chunks), options)
    if token_shards is not None:
        token_shards.finish(n_shards, len(chunks), dim)
    return directory


def make_chunks(store: PageStore, options: DenseOptions, settings: dict[str, Any]) -> Chunks:
    """The chunks an index with ``settings`` encodes: per-page windows, or windows over each document's
    joined pages (``span_pages``), carrying the passage prompt."""
    tokenizer = load_tokenizer(Path(options.model_path))
    window, overlap = int(settings["window"]), int(settings["overlap"])
    if settings.get("span_pages"):
        chunks = chunk_documents(store.texts, store.doc_offsets, tokenizer, window, overlap)
    else:
        chunks = chunk_pages(store.texts, tokenizer, window, overlap, max_chunks=options.max_chunks_per_page)
    return replace(chunks, prompt=Prompts.from_json(settings.get("prompts")).passage)


def _finished(directory: Path, settings: dict[str, Any]) -> bool:
    """Whether ``directory`` holds a finished index with ``settings`` (refused when it holds another's)."""
    existing = read_manifest(directory)
    if existing is None:
        return False
    names = list(settings) + [k for k in OPTIONAL_SETTINGS if k not in settings]
    differs = {k: (existing.get(k), settings.get(k)) for k in names if existing.get(k) != settings.get(k)}
    if differs:
        detail = "; ".join(f"{k}: index has {a!r}, asked {b!r}" for k, (a, b) in sorted(differs.items()))
        raise NclueError(
            f"{directory}: an index built with other settings is here ({detail}); vectors are never mixed — "
            "rerun with the same settings to resume, or pass --rebuild to replace it"
        )
    if not existing.get("complete"):
        return False
    if "files" not in existing:  # finished before checksums were recorded: add them, no re-encoding
        write_json(directory / MANIFEST, {**existing, "files": record_files(directory, (CHUNKS, VECTORS))})
    return True


def _join_shards(directory: Path, manifest: dict[str, Any], n_shards: int, n_chunks: int, options: DenseOptions) -> int:
    """Join the shard vectors into ``vectors.npy``, mark the manifest complete with checksums; return the dimension."""
    shard_dir = directory / SHARDS
    parts = [np.load(shard_dir / f"shard-{i:05d}.npy") for i in range(n_shards)]
    dim = int(parts[0].shape[1]) if parts else int(load_encoder(Path(options.model_path), backend=options.backend).dim)
    vectors = np.concatenate(parts) if parts else np.zeros((0, dim), dtype=options.dtype)
    if vectors.shape != (n_chunks, dim):
        raise NclueError(f"{shard_dir}: shards hold {vectors.shape}, expected {(n_chunks, dim)}; rebuild")
    _save_npy(directory / VECTORS, vectors.astype(options.dtype, copy=False))
    files = record_files(directory, (CHUNKS, VECTORS))
    write_json(directory / MANIFEST, {**manifest, "dim": dim, "complete": True, "files": files})
    shutil.rmtree(shard_dir)
    return dim


def list_dense_indexes(collection_dir: str | os.PathLike[str]) -> list[Path]:
    """Finished dense index directories of a collection, sorted by name."""
    root = dense_root(collection_dir)
    if not root.is_dir():
        return []
    out = []
    for directory in sorted(p for p in root.iterdir() if p.is_dir()):
        manifest = read_manifest(directory)
        if manifest is not None and manifest.get("complete"):
            out.append(directory)
    return out


DEFAULT_FILE = "dense-default.txt"
"""``COLLECTION/index/dense-default.txt``: the folder name of the dense index the plain ``dense`` backbone reads."""


def default_dense_index(collection_dir: str | os.PathLike[str]) -> Path | None:
    """The dense index the plain ``dense`` backbone reads: the only one, else the one :data:`DEFAULT_FILE`
    names (the last one :func:`adopt_dense_index` adopted), else ``None`` (none, or several
    and no record)."""
    found = list_dense_indexes(collection_dir)
    if len(found) == 1:
        return found[0]
    try:
        named = (dense_root(collection_dir).parent / DEFAULT_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return next((d for d in found if d.name == named), None)


def adopt_dense_index(
    collection_dir: str | os.PathLike[str], directory: str | os.PathLike[str], keep_others: bool = False
) -> list[str]:
    """Make ``directory`` the collection's dense index; return the names of the indexes removed.

    One dense index per collection unless asked: every other finished or unfinished dense
    index is deleted, with its token index, unless ``keep_others`` (``nclue index --add-dense``);
    then they stay, reachable as ``dense:VARIANT``, and :data:`DEFAULT_FILE` records that ``directory``
    is the one the plain ``dense`` (and ``struct``, ``maxsim``, coverage evidence) reads.
    """
    from nclue.io import atomic_write_text

    root, chosen = dense_root(collection_dir), Path(directory)
    removed = []
    if not keep_others:
        for other in sorted(p for p in root.iterdir() if p.is_dir() and p.name != chosen.name):
            shutil.rmtree(other)
            shutil.rmtree(token_dir(collection_dir, other.name), ignore_errors=True)
            removed.append(other.name)
    atomic_write_text(root.parent / DEFAULT_FILE, chosen.name + "\n")
    return removed


_KEY = re.compile(r"^(?P<name>.+)-(?P<sha>[0-9a-f]{12})-(?P<backend>[a-z0-9-]+)$")


def variant_matches(directory_name: str, variant: str) -> bool:
    """Whether ``dense:VARIANT`` names the index directory ``<name>-<sha12>-<backend>``.

    It does when the variant is the whole directory name or a prefix of it, the backend,
    a prefix of the SHA-256, or one word of the model name (words split on ``-``/``_``).
    """
    v = variant.lower()
    key = directory_name.lower()
    if key == v or key.startswith(v):
        return True
    parts = _KEY.match(key)
    if parts is None:
        return False
    words = re.split(r"[-_]", parts["name"])
    return v == parts["backend"] or parts["sha"].startswith(v) or v in words


def select_index(collection_dir: Path, variant: str | None) -> Path:
    """The dense index directory ``dense[:variant]`` names: with no variant the collection's own
    (:func:`default_dense_index`), else the one :func:`variant_matches` picks (none or several →
    :class:`NclueError` listing what is present)."""
    found = list_dense_indexes(collection_dir)
    if not found:
        raise NclueError(
            f"{collection_dir}: no dense vectors; build them with `{build_command(collection_dir)}` "
            "(MODEL_PATH: a local sentence-transformers model, e.g. the bundled MiniLM)"
        )
    if variant is None:
        default = default_dense_index(collection_dir)
        chosen = [default] if default is not None else found
    else:
        chosen = [d for d in found if variant_matches(d.name, variant)]
    if not chosen:
        raise NclueError(
            f"{collection_dir}: no dense index matches {variant!r}; present: {', '.join(d.name for d in found)}"
        )
    if len(chosen) > 1:
        raise NclueError(
            f"{collection_dir}: several dense indexes ({', '.join(d.name for d in chosen)}); "
            f"pick one as dense:VARIANT (a backend, a model-name word or the directory name), e.g. dense:{chosen[0].name}"
        )
    return chosen[0]


def open_dense_index(
    collection_dir: str | os.PathLike[str],
    model_path: str | os.PathLike[str] | None = None,
    backend: str | None = None,
) -> DenseIndex:
    """Open the collection's dense index for ``model_path`` (and ``backend``), checking freshness.

    With no ``model_path`` the collection's dense index is used (:func:`default_dense_index`;
    several and no record → an error listing them). Raises :class:`NclueError` naming the build command when there is none.
    """
    collection = Path(collection_dir)
    PageStore.open(collection)
    candidates = list_dense_indexes(collection)
    wanted = None
    if model_path is not None:
        wanted = model_identity(resolve_model_path(model_path)).sha256
        candidates = [d for d in candidates if (read_manifest(d) or {})["model"]["sha256"] == wanted]
    if backend is not None:
        candidates = [d for d in candidates if (read_manifest(d) or {})["backend"] == backend]
    if not candidates:
        present = ", ".join(p.name for p in list_dense_indexes(collection)) or "none"
        what = f" for {model_path}" if model_path is not None else ""
        what += f" (backend {backend})" if backend is not None else ""
        raise NclueError(
            f"{collection}: no dense vectors{what} (present: {present}); build them with "
            f"`{build_command(collection, model_path)}`"
            + (f" --dense-backend {backend}" if backend not in (None, "torch") else "")
        )
    if len(candidates) > 1:
        default = default_dense_index(collection) if model_path is None and backend is None else None
        if default is None:
            raise NclueError(
                f"{collection}: several dense indexes ({', '.join(p.name for p in candidates)}); "
                "name the model (and backend) to use"
            )
        candidates = [default]
    return open_index_dir(collection, candidates[0])


def open_index_dir(collection_dir: str | os.PathLike[str], directory: str | os.PathLike[str]) -> DenseIndex:
    """Open one finished dense index directory of ``collection_dir``, checking format and freshness."""
    collection = Path(collection_dir)
    directory = Path(directory)
    manifest = read_manifest(directory)
    if manifest is None or not manifest.get("complete"):
        raise NclueError(f"{directory}: no finished dense index here; build it with `{build_command(collection)}`")
    if manifest.get("format") != FORMAT_VERSION:
        raise NclueError(
            f"{directory}: dense index format {manifest.get('format')!r} is not {FORMAT_VERSION}; rebuild it"
        )
    rebuild = f"rebuild with `{build_command(collection, manifest.get('model_path'))} --rebuild`"
    if manifest.get("pages_sha256") != pages_fingerprint(collection):
        raise NclueError(f"{directory}: the collection's pages changed since these vectors were built; {rebuild}")
    check(directory, manifest.get("files") or {}, rebuild)
    try:
        with np.load(directory / CHUNKS) as data:
            spanning = {k: data[k] for k in ("cover_offsets", "cover_pages") if k in data.files}
            chunks = Chunks(page=data["page"], start=data["start"], end=data["end"], **spanning)
        chunks = replace(chunks, prompt=Prompts.from_json(manifest.get("prompts")).passage)
        vectors = np.load(directory / VECTORS, mmap_mode="r")
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as exc:
        raise NclueError(f"{directory}: cannot load the vectors ({type(exc).__name__}: {exc}); {rebuild}") from None
    if vectors.shape[0] != len(chunks):
        raise NclueError(f"{directory}: {vectors.shape[0]} vectors for {len(chunks)} chunks; rebuild with --rebuild")
    return DenseIndex(directory=directory, manifest=manifest, chunks=chunks, vectors=vectors)


def verify_dense_indexes(collection_dir: str | os.PathLike[str]) -> dict[str, list[str]]:
    """Full check of every finished dense index: freshness, and every file's SHA-256 against the build's."""
    collection = Path(collection_dir)
    out = {}
    for directory in list_dense_indexes(collection):
        try:
            index = open_index_dir(collection, directory)
        except NclueError as exc:
            out[directory.name] = [str(exc)]
            continue
        recorded = index.manifest.get("files")
        out[directory.name] = (
            problems(directory, recorded, full=True)
            if recorded
            else [f"{directory}: no checksums recorded; run `{build_command(collection)}` once to add them"]
        )
    return out
