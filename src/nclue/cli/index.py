"""``nclue index COLLECTION [--lexical] [--dense MODEL_PATH ...]``."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from nclue.errors import NclueError


class Method(str, Enum):
    """BM25 variants (bm25s)."""

    lucene = "lucene"
    robertson = "robertson"
    atire = "atire"
    bm25l = "bm25l"
    bm25plus = "bm25+"


class Backend(str, Enum):
    """Encoder backends (``nclue.models.encoder``)."""

    torch = "torch"
    onnx = "onnx"
    onnx_int8 = "onnx-int8"
    static = "static"


class Dtype(str, Enum):
    """Stored vector precision."""

    float32 = "float32"
    float16 = "float16"


def index(
    collection: Path = typer.Argument(..., help="Collection directory (from `nclue ingest`)."),
    lexical: bool = typer.Option(False, "--lexical", help="Build the BM25 page index and document view."),
    dense: list[str] = typer.Option([], "--dense", help="Build a dense page index with this model (repeatable)."),
    k1: float = typer.Option(1.5, "--k1", min=0.0, help="BM25 k1."),
    b: float = typer.Option(0.75, "--b", min=0.0, max=1.0, help="BM25 b."),
    method: Method = typer.Option(Method.lucene, "--method", help="BM25 variant."),
    dense_backend: Backend = typer.Option(Backend.torch, "--dense-backend", help="Encoder backend."),
    dense_window: int | None = typer.Option(
        None, "--dense-window", min=8, help="Chunk window in tokens (default: model max - 2)."
    ),
    dense_overlap: int = typer.Option(32, "--dense-overlap", min=0, help="Chunk overlap in tokens."),
    dense_max_chunks: int | None = typer.Option(
        None, "--dense-max-chunks", min=1, help="Keep only each page's first N chunks (default: the whole page)."
    ),
    dense_batch_size: int = typer.Option(16, "--dense-batch-size", min=1, help="Encoder batch size."),
    dense_dtype: Dtype = typer.Option(Dtype.float32, "--dense-dtype", help="Stored vector dtype."),
    rebuild: bool = typer.Option(False, "--rebuild", help="Replace a dense index built with other settings."),
    verify: bool = typer.Option(False, "--verify", help="Check every index file's SHA-256 instead of building."),
) -> None:
    """Build page indexes inside the collection (COLLECTION/index/...).

    With neither --lexical nor --dense, builds the lexical index. --verify re-hashes every
    index file in full (loads check only sizes and samples) and exits 1 on any damage.

    Example: nclue index ./coll --lexical --dense minilm --dense-backend onnx

    (--dense minilm / bundled = the bundled all-MiniLM-L6-v2; any local sentence-transformers path works)
    """
    from rich.console import Console

    from nclue.corpus.store import PageStore
    from nclue.index.lexical import BM25Params, build_lexical_index

    console = Console(stderr=True)
    store = PageStore.open(collection)
    if verify:
        _verify(collection, console)
        return
    if lexical or not dense:
        with console.status(f"BM25 index of {store.n_pages} pages"):
            path = build_lexical_index(collection, BM25Params(k1=k1, b=b, method=method.value), store=store)
        console.print(f"wrote {path}", highlight=False)
    for model_path in dense:
        try:
            from nclue.index.dense import build_dense_index
        except ModuleNotFoundError as exc:
            raise NclueError(
                f"--dense needs the neural extras ({exc.name} missing): pip install 'nclue[neural]'"
            ) from None
        path = build_dense_index(
            collection,
            model_path,
            backend=dense_backend.value,
            window=dense_window,
            overlap=dense_overlap,
            batch_size=dense_batch_size,
            dtype=dense_dtype.value,
            rebuild=rebuild,
            max_chunks_per_page=dense_max_chunks,
            progress=True,
        )
        console.print(f"wrote {path}", highlight=False)


def _verify(collection: Path, console) -> None:  # noqa: ANN001 - rich Console
    from nclue.index.dense import verify_dense_indexes
    from nclue.index.lexical import index_exists, verify_lexical_index

    found = {"lexical": verify_lexical_index(collection)} if index_exists(collection) else {}
    found.update({f"dense/{name}": issues for name, issues in verify_dense_indexes(collection).items()})
    if not found:
        raise NclueError(f"{collection}: no index to verify; build one with `nclue index {collection} --lexical`")
    for name, issues in found.items():
        console.print(f"{'✓' if not issues else '✗'} {name}", style="green" if not issues else "red", markup=False)
        for line in issues:
            console.print(f"  {line}", markup=False, highlight=False)
    damaged = [name for name, issues in found.items() if issues]
    if damaged:
        raise NclueError(f"{collection}: damaged index(es): {', '.join(damaged)}; rebuild them", exit_code=1)


def register(app: typer.Typer) -> None:
    """Add ``index``."""
    app.command("index")(index)
