"""The token index: every chunk's contextual token vectors, compressed, for late interaction (MaxSim).

``COLLECTION/index/tokens/<dense-index-key>/`` belongs to one dense index (same chunks, same
model files, same backend) and holds

* ``manifest.json`` — codec, dimension, counts, the dense index it belongs to (its key,
  model, backend, chunking and the SHA-256 of its chunk map), SHA-256 of ``pages.parquet``,
  ``complete`` flag and
  the checksums of the files below (:mod:`nclue.index.integrity`);
* ``offsets.npy`` — ``(n_chunks + 1,)`` int64: chunk ``c``'s tokens are rows
  ``offsets[c]:offsets[c + 1]`` (``[CLS]``/``[SEP]`` included, padding removed), and since
  chunks are in page order a page's tokens are one contiguous range;
* ``codes.npy`` — ``(n_tokens, dim · bits / 8)`` uint8, memory-mapped;
* ``scales.npy`` — ``(n_tokens, dim / BLOCK)`` float16, memory-mapped.

The codes are :mod:`nclue.index.token_codec`'s (4- or 8-bit symmetric block quantisation).

Building happens in the same encoder pass as the dense vectors
(:func:`nclue.index.dense.build_dense_index` with ``tokens=True``); for a dense index that
already exists, :func:`build_token_index` runs a token-only pass over its chunks. Both
write ``shards/tok-NNNNN.npz`` atomically and join them at the end.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from nclue.errors import NclueError
from nclue.index.integrity import check, record_files
from nclue.index.options import DEFAULT_SHARD_SIZE, DenseOptions
from nclue.index.token_codec import BLOCK, DEFAULT_BITS, dequantize, require_bits
from nclue.io import atomic_write_bytes, exclusive_lock, writable_dir, write_json
from nclue.models.encoder import DEFAULT_BATCH_SIZE
from nclue.progress import Progress, quiet, stage_advance

if TYPE_CHECKING:
    from nclue.engine import Engine
    from nclue.index.dense import DenseIndex
    from nclue.models.encoder import Encoder

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
OFFSETS = "offsets.npy"
CODES = "codes.npy"
SCALES = "scales.npy"
SHARDS = "shards"
FILES = (OFFSETS, CODES, SCALES)


def token_root(collection_dir: str | os.PathLike[str]) -> Path:
    """``COLLECTION/index/tokens``."""
    return Path(collection_dir) / "index" / "tokens"


def token_dir(collection_dir: str | os.PathLike[str], dense_key: str) -> Path:
    """The token index directory of the dense index named ``dense_key``."""
    return token_root(collection_dir) / dense_key


def build_command(collection_dir: str | os.PathLike[str]) -> str:
    """The command that builds the token index (quoted in error messages)."""
    return f"nclue index {collection_dir} --tokens"


# --- the stored index -----------------------------------------------------------------------


@dataclass(frozen=True)
class TokenIndex:
    """A finished token index: manifest, chunk → token offsets and the memory-mapped codes."""

    directory: Path
    manifest: dict[str, Any]
    offsets: np.ndarray
    codes: np.ndarray
    scales: np.ndarray

    @property
    def bits(self) -> int:
        """Bits per stored value (4 or 8)."""
        return int(self.manifest["codec"]["bits"])

    @property
    def n_tokens(self) -> int:
        """Number of stored token vectors."""
        return int(self.offsets[-1])

    def tokens(self, first_chunk: int, end_chunk: int) -> np.ndarray:
        """Decoded ``(n, dim)`` float32 token vectors of chunks ``first_chunk:end_chunk``."""
        lo, hi = int(self.offsets[first_chunk]), int(self.offsets[end_chunk])
        return dequantize(np.asarray(self.codes[lo:hi]), np.asarray(self.scales[lo:hi]), self.bits)

    def maxsim(self, query: np.ndarray, first_chunks: np.ndarray, end_chunks: np.ndarray) -> np.ndarray:
        """MaxSim of ``query`` tokens on each span of chunks ``first_chunks[k]:end_chunks[k]`` (a page),
        computed from the codes without decoding them whole (:func:`nclue.index.token_maxsim.pages_maxsim`)."""
        from nclue.index.token_maxsim import pages_maxsim

        starts, ends = self.offsets[np.asarray(first_chunks)], self.offsets[np.asarray(end_chunks)]
        return pages_maxsim(query, self.codes, self.scales, starts, ends, self.bits)


def _read_manifest(directory: Path) -> dict[str, Any] | None:
    path = directory / MANIFEST
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise NclueError(f"{path}: unreadable token-index manifest ({exc}); rebuild with --rebuild") from None
    if not isinstance(data, dict):
        raise NclueError(f"{path}: damaged token-index manifest (not a JSON object); rebuild with --rebuild")
    return data


def chunks_fingerprint(dense: DenseIndex) -> str:
    """SHA-256 of the dense index's chunk map (page row, start and end of every chunk)."""
    import hashlib

    digest = hashlib.sha256()
    for part in (dense.chunks.page, dense.chunks.start, dense.chunks.end):
        digest.update(np.ascontiguousarray(part, dtype=np.int64).tobytes())
    return digest.hexdigest()


def _dense_link(dense: DenseIndex) -> dict[str, Any]:
    """What ties a token index to its dense index: key, chunk map, model, backend, chunking."""
    return {
        "key": dense.key,
        "chunks_sha256": chunks_fingerprint(dense),
        "model": dense.manifest["model"],
        "backend": dense.backend,
        "window": dense.manifest["window"],
        "overlap": dense.manifest["overlap"],
        "max_chunks_per_page": dense.manifest.get("max_chunks_per_page"),
    }


def token_settings(dense: DenseIndex, bits: int, shard_size: int) -> dict[str, Any]:
    """The settings that define a token index's content (compared before resuming)."""
    require_bits(bits)
    return {
        "format": FORMAT_VERSION,
        "dense": _dense_link(dense),
        "codec": {"name": f"int{bits}-block{BLOCK}", "bits": int(bits), "block": BLOCK},
        "pages_sha256": dense.manifest["pages_sha256"],
        "shard_size": int(shard_size),
    }


def open_token_index(collection_dir: str | os.PathLike[str], dense: DenseIndex) -> TokenIndex | None:
    """The token index of ``dense``, checked (fresh, same dense index, files intact); ``None`` if none was built."""
    from nclue.corpus.store import pages_fingerprint

    collection = Path(collection_dir)
    directory = token_dir(collection, dense.key)
    manifest = _read_manifest(directory)
    if manifest is None or not manifest.get("complete"):
        return None
    rebuild = f"rebuild with `{build_command(collection)} --rebuild`"
    if manifest.get("format") != FORMAT_VERSION:
        raise NclueError(
            f"{directory}: token index format {manifest.get('format')!r} is not {FORMAT_VERSION}; {rebuild}"
        )
    if manifest.get("pages_sha256") != pages_fingerprint(collection):
        raise NclueError(f"{directory}: the collection's pages changed since these token vectors were built; {rebuild}")
    if manifest.get("dense") != _dense_link(dense):
        raise NclueError(f"{directory}: built for another version of the dense index {dense.key}; {rebuild}")
    check(directory, manifest.get("files") or {}, rebuild)
    try:
        offsets = np.load(directory / OFFSETS)
        codes = np.load(directory / CODES, mmap_mode="r")
        scales = np.load(directory / SCALES, mmap_mode="r")
    except (OSError, ValueError, EOFError) as exc:
        raise NclueError(
            f"{directory}: cannot load the token vectors ({type(exc).__name__}: {exc}); {rebuild}"
        ) from None
    if len(offsets) != len(dense.chunks) + 1 or int(offsets[-1]) != len(codes) or len(scales) != len(codes):
        raise NclueError(
            f"{directory}: {len(codes)} token codes and {len(offsets) - 1} chunk offsets do not fit the dense "
            f"index's {len(dense.chunks)} chunks; {rebuild}"
        )
    return TokenIndex(directory=directory, manifest=manifest, offsets=offsets, codes=codes, scales=scales)


class TokenShards:
    """Writes one ``tok-NNNNN.npz`` per encoded shard and joins them into the finished index."""

    def __init__(self, directory: Path, settings: dict[str, Any], rebuild: bool) -> None:
        if rebuild and directory.exists():
            shutil.rmtree(directory)
        existing = _read_manifest(directory)
        if existing is not None:
            differs = sorted(k for k, v in settings.items() if existing.get(k) != v)
            if differs:
                raise NclueError(
                    f"{directory}: a token index built with other settings ({', '.join(differs)}) is here; "
                    "token vectors are never mixed — rerun with the same settings to resume, or pass --rebuild"
                )
        self.directory = directory
        self.settings = settings
        self.bits = int(settings["codec"]["bits"])
        self.complete = bool(existing and existing.get("complete"))
        self.shard_dir = directory / SHARDS

    def start(self) -> None:
        """Create the directory and an unfinished manifest."""
        self.shard_dir.mkdir(parents=True, exist_ok=True)
        write_json(self.directory / MANIFEST, {**self.settings, "complete": False})

    def path(self, shard: int) -> Path:
        """The file of shard ``shard``."""
        return self.shard_dir / f"tok-{shard:05d}.npz"

    def done(self, shard: int) -> bool:
        """Whether shard ``shard`` was written."""
        return self.path(shard).is_file()

    def write(self, shard: int, packed: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        """Write one shard's :func:`pack_tokens` output atomically."""
        import io

        codes, scales, lengths = packed
        buffer = io.BytesIO()
        np.savez(buffer, codes=codes, scales=scales, lengths=lengths)
        atomic_write_bytes(self.path(shard), buffer.getvalue())

    def finish(self, n_shards: int, n_chunks: int, dim: int) -> Path:
        """Join the shards into ``offsets.npy`` / ``codes.npy`` / ``scales.npy``, record checksums, mark complete."""
        lengths, rows = [], 0
        for shard in range(n_shards):
            with np.load(self.path(shard)) as data:
                lengths.append(data["lengths"])
                rows += len(data["codes"])
        counts = np.concatenate(lengths) if lengths else np.zeros(0, np.int64)
        if len(counts) != n_chunks or int(counts.sum()) != rows:
            raise NclueError(
                f"{self.shard_dir}: shards hold {len(counts)} chunks / {rows} tokens, expected {n_chunks} chunks; "
                "rebuild with --rebuild"
            )
        offsets = np.r_[0, np.cumsum(counts)].astype(np.int64)
        code_width = dim * self.bits // 8
        _write_joined(self.directory / CODES, (rows, code_width), np.uint8, n_shards, self.path, "codes")
        _write_joined(self.directory / SCALES, (rows, dim // BLOCK), np.float16, n_shards, self.path, "scales")
        _write_array(self.directory / OFFSETS, offsets)
        files = record_files(self.directory, FILES)
        write_json(
            self.directory / MANIFEST,
            {
                **self.settings,
                "dim": int(dim),
                "n_chunks": int(n_chunks),
                "n_tokens": int(rows),
                "bytes_per_token": int(code_width + 2 * (dim // BLOCK)),
                "complete": True,
                "files": files,
            },
        )
        shutil.rmtree(self.shard_dir)
        return self.directory


def _write_array(path: Path, array: np.ndarray) -> None:
    import io

    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    atomic_write_bytes(path, buffer.getvalue())


def _write_joined(path: Path, shape: tuple[int, int], dtype: type, n_shards: int, shard_path, key: str) -> None:  # noqa: ANN001
    """Stream one array of every shard into ``path`` (a temporary ``.npy`` renamed into place)."""
    from nclue.io import fsync_dir

    tmp = path.with_name(f".{path.name}.tmp")
    out = np.lib.format.open_memmap(tmp, mode="w+", dtype=dtype, shape=shape)
    at = 0
    for shard in range(n_shards):
        with np.load(shard_path(shard)) as data:
            part = data[key]
            out[at : at + len(part)] = part
            at += len(part)
    out.flush()
    del out
    with open(tmp, "rb+") as handle:
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


def build_token_index(
    collection_dir: str | os.PathLike[str],
    dense: DenseIndex,
    encoder: Encoder | None = None,
    bits: int = DEFAULT_BITS,
    shard_size: int | None = None,
    rebuild: bool = False,
    progress: Progress = quiet,
    batch_size: int = DEFAULT_BATCH_SIZE,
    workers: int | None = None,
    engine: Engine | None = None,
) -> Path:
    """Token-only pass over ``dense``'s chunks (for a dense index built without ``tokens=True``).

    Uses the encoder that made ``dense`` (same model files and backend; ``workers`` processes, ``None``
    = planned from the shard sizes, or ``engine``'s workers) unless one is given (then in this process). Resumable like the dense build;
    a finished index with the same settings is kept. ``progress`` hears ``"token chunks"`` (total: the chunks to encode).
    """
    collection = Path(collection_dir)
    writable_dir(token_root(collection), "index")
    with exclusive_lock(collection, "collection"):
        options = DenseOptions(token_bits=bits, batch_size=batch_size, workers=workers)
        return tokens_pass(
            collection, dense, options, encoder=encoder, shard_size=shard_size, rebuild=rebuild, progress=progress,
            engine=engine,
        )  # fmt: skip


def tokens_pass(
    collection: Path,
    dense: DenseIndex,
    options: DenseOptions,
    *,
    encoder: Encoder | None = None,
    shard_size: int | None = None,
    rebuild: bool = False,
    progress: Progress = quiet,
    engine: Engine | None = None,
) -> Path:
    """:func:`build_token_index` while the caller holds the collection's lock: ``options.token_bits``-bit
    codes, ``options``' batch size and workers; shards of ``shard_size`` chunks (default: the dense index's)."""
    bits, batch_size, workers = options.token_bits, options.batch_size, options.workers
    size = int(shard_size or dense.manifest.get("shard_size") or DEFAULT_SHARD_SIZE)
    shards = TokenShards(token_dir(collection, dense.key), token_settings(dense, bits, size), rebuild)
    if shards.complete:
        return shards.directory
    if dense.backend == "static":
        raise NclueError(
            f"{dense.directory}: a static model has no contextual token vectors; build a dense index with "
            "--dense-backend torch-bf16 (or onnx / torch) for late interaction"
        )
    from nclue.corpus.store import PageStore
    from nclue.index.encoding import run_shards

    dense.check_model()
    texts = PageStore.open(collection).texts
    shards.start()
    n_chunks = len(dense.chunks)
    n_shards = (n_chunks + size - 1) // size
    todo = [i for i in range(n_shards) if not shards.done(i)]

    def rows(shard: int) -> slice:
        return slice(shard * size, min((shard + 1) * size, n_chunks))

    tick = stage_advance(progress, "token chunks", sum(min(size, n_chunks - i * size) for i in todo))

    def store(shard: int, n: int, result) -> None:  # noqa: ANN001 - ShardResult
        shards.write(shard, result[1])
        tick(n)

    run_shards(
        ((i, dense.chunks.texts(texts, rows(i))) for i in todo),
        len(todo),
        lambda: encoder if encoder is not None else dense.load_encoder(batch_size=batch_size, queries=False),
        (str(dense.model_path), dense.backend, batch_size),
        workers if encoder is None else 1,
        False,
        bits,
        store,
        engine if encoder is None else None,
    )
    return shards.finish(n_shards, n_chunks, int(dense.manifest["dim"]))


def list_token_indexes(collection_dir: str | os.PathLike[str]) -> list[Path]:
    """Finished token index directories of a collection, sorted by name."""
    root = token_root(collection_dir)
    if not root.is_dir():
        return []
    out = []
    for directory in sorted(p for p in root.iterdir() if p.is_dir()):
        manifest = _read_manifest(directory)
        if manifest is not None and manifest.get("complete"):
            out.append(directory)
    return out


def size_report(index: TokenIndex, n_pages: int) -> dict[str, float]:
    """Bytes on disk of a token index, in total and per page of the collection."""
    total = sum(int(v["bytes"]) for v in index.manifest["files"].values())
    return {
        "bytes": float(total),
        "bytes_per_page": total / max(n_pages, 1),
        "tokens_per_page": index.n_tokens / max(n_pages, 1),
        "bytes_per_token": float(index.manifest["bytes_per_token"]),
    }
