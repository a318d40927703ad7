"""``nclue index COLLECTION [--all] [--lexical] [--dense MODEL_PATH ...] [--tokens] [--verify]``."""

from __future__ import annotations

from dataclasses import replace
from enum import Enum
from pathlib import Path

import typer

from nclue.engine import EngineName
from nclue.errors import NclueError
from nclue.index.options import BM25Params, DenseOptions
from nclue.progress import progress_bars

_DENSE = DenseOptions()
_BM25 = BM25Params()


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
    torch_bf16 = "torch-bf16"
    onnx = "onnx"
    onnx_int8 = "onnx-int8"
    static = "static"


class Dtype(str, Enum):
    """Stored vector precision."""

    float32 = "float32"
    float16 = "float16"


class TokenBits(str, Enum):
    """Bits per stored token-vector value (``nclue.index.tokens``)."""

    four = "4"
    eight = "8"


def index(
    collection: Path = typer.Argument(..., help="Collection directory (from `nclue ingest`)."),
    all_indexes: bool = typer.Option(
        False,
        "--all",
        help="Build every index the default matrix needs (lexical, dense, tokens, structure); keeps current ones.",
    ),
    lexical: bool = typer.Option(False, "--lexical", help="Build the BM25 page index and document view."),
    dense: list[str] = typer.Option([], "--dense", help="Build a dense page index with this model (repeatable)."),
    tokens: bool = typer.Option(
        False, "--tokens", help="Also build the late-interaction token index (same encoder pass as --dense)."
    ),
    k1: float = typer.Option(_BM25.k1, "--k1", min=0.0, help="BM25 k1."),
    b: float = typer.Option(_BM25.b, "--b", min=0.0, max=1.0, help="BM25 b."),
    method: Method = typer.Option(Method(_BM25.method), "--method", help="BM25 variant."),
    dense_backend: Backend = typer.Option(
        Backend(_DENSE.backend),
        "--dense-backend",
        help="Encoder backend (default: torch-bf16 on a CPU with native bfloat16, else onnx).",
    ),
    dense_window: int | None = typer.Option(
        None,
        "--dense-window",
        min=8,
        help="Chunk window in tokens, prompt excluded (default and maximum: model max - 2 - passage prompt tokens).",
    ),
    dense_overlap: int = typer.Option(_DENSE.overlap, "--dense-overlap", min=0, help="Chunk overlap in tokens."),
    dense_max_chunks: int | None = typer.Option(
        None, "--dense-max-chunks", min=1, help="Keep only each page's first N chunks (default: the whole page)."
    ),
    dense_span_pages: bool = typer.Option(
        False,
        "--dense-span-pages",
        help="Windows over each document's joined pages (chunks may span pages; a page scores by every chunk covering it).",
    ),
    dense_query_prompt: str | None = typer.Option(
        None,
        "--dense-query-prompt",
        help="Text prepended to queries (default: the model's config_sentence_transformers.json prompts; '' = none).",
    ),
    dense_passage_prompt: str | None = typer.Option(
        None,
        "--dense-passage-prompt",
        help="Text prepended to every chunk (default: the model's document/passage prompt; '' = none).",
    ),
    dense_batch_size: int = typer.Option(_DENSE.batch_size, "--dense-batch-size", min=1, help="Encoder batch size."),
    dense_workers: int | None = typer.Option(
        None,
        "--dense-workers",
        min=1,
        help="Encoder processes (default: planned from the shard sizes, one per CPU when they balance).",
    ),
    engine: EngineName = typer.Option(
        EngineName.local, "--engine", help="Encode dense/token shards here or on Ray (the same vectors)."
    ),
    ray_address: str | None = typer.Option(
        None, "--ray-address", help="An existing Ray cluster (HOST:PORT or auto); default: a local Ray instance."
    ),
    dense_dtype: Dtype = typer.Option(Dtype(_DENSE.dtype), "--dense-dtype", help="Stored vector dtype."),
    token_bits: TokenBits = typer.Option(
        TokenBits(str(_DENSE.token_bits)), "--token-bits", help="Bits per stored token value (4: 216 B/token, 8: 408)."
    ),
    rebuild: bool = typer.Option(False, "--rebuild", help="Replace an index built with other settings."),
    add_dense: bool = typer.Option(
        False,
        "--add-dense",
        help="Keep the collection's other dense indexes (pick one as dense:VARIANT); by default a new one replaces them.",
    ),
    verify: bool = typer.Option(False, "--verify", help="Check every index file's SHA-256 instead of building."),
) -> None:
    """Build page indexes inside the collection (COLLECTION/index/...).

    With no index named, builds the lexical index. --all builds, in order, every index the
    default matrix needs — lexical, dense (bundled MiniLM unless --dense names a model), the
    token index for MaxSim (the last two in one encoder pass) and the document structure with
    its heading vectors — keeping those already current, so a killed run resumes. --verify re-hashes every index file in full (loads
    check only sizes and samples) and exits 1 on any damage.

    Example: nclue index ./coll --all --dense-max-chunks 1

    Example: nclue index ./coll --dense minilm --engine ray --ray-address auto   (shards encoded on the cluster)

    Example: nclue index ./coll --dense ./models/e5-base --add-dense   (a second dense index: dense:e5.joint(ptop3))

    Example: nclue index ./coll --dense ./models/bge-m3 --dense-window 3072 --dense-overlap 256 --dense-span-pages

    Prompts: a model's config_sentence_transformers.json "prompts" are applied (E5: "query: " / "passage: ");
    --dense-query-prompt / --dense-passage-prompt override them ('' = none). Prompts and --dense-span-pages
    name the index (dense:span), so an index built otherwise is never reused.

    A collection holds one dense index unless asked: a dense index built with another model or
    backend replaces the old one (and its token index) unless --add-dense keeps both; the one
    built last is what plain dense, struct, maxsim and coverage evidence read.

    (--dense minilm / bundled = the bundled all-MiniLM-L6-v2; any local sentence-transformers path works)
    """
    from rich.console import Console

    from nclue.corpus.store import PageStore
    from nclue.engine import open_engine

    console = Console(stderr=True)
    store = PageStore.open(collection)
    if verify:
        _verify(collection, console)
        return
    params = BM25Params(k1=k1, b=b, method=method.value)
    dense_options = DenseOptions(
        backend=dense_backend.value,
        window=dense_window,
        overlap=dense_overlap,
        max_chunks_per_page=dense_max_chunks,
        query_prompt=dense_query_prompt,
        passage_prompt=dense_passage_prompt,
        span_pages=dense_span_pages,
        dtype=dense_dtype.value,
        token_bits=int(token_bits.value),
        batch_size=dense_batch_size,
        workers=dense_workers,
    ).checked()
    wanted = (all_indexes, lexical, dense, tokens)
    keep = add_dense or len(dense) > 1
    before = _dense_names(collection)
    with open_engine(engine.value, dense_workers, ray_address) as runner:
        _build(collection, store, params, wanted, dense_options, runner, (rebuild, keep), console)
    _say_replaced(sorted(before - _dense_names(collection)), console)


def _say_replaced(removed: list[str], console) -> None:  # noqa: ANN001 - rich Console
    """Name the dense indexes a build replaced (one dense index per collection unless --add-dense)."""
    if removed:
        console.print(
            f"replaced the dense index {', '.join(removed)} (with its token index): a collection holds one dense index "
            "unless asked; pass --add-dense to keep several (then pick one as dense:VARIANT)",
            markup=False,
            highlight=False,
        )


def _dense_names(collection: Path) -> set[str]:
    from nclue.index.dense import list_dense_indexes

    return {d.name for d in list_dense_indexes(collection)}


def _build(  # noqa: ANN001 - store: PageStore, params: BM25Params, runner: Engine | None, console: rich Console
    collection: Path, store, params, wanted: tuple, dense_options: DenseOptions, runner, flags: tuple, console
) -> None:
    """The building part of :func:`index`: ``wanted = (--all, --lexical, --dense models, --tokens)``,
    ``flags = (--rebuild, keep the other dense indexes)``."""
    from nclue.index.lexical import build_lexical_index

    all_indexes, lexical, dense, tokens = wanted
    rebuild, keep = flags
    if all_indexes:
        _build_all(collection, params, dense, dense_options, runner, flags, console)
        return
    if lexical or not (dense or tokens):
        with console.status(f"BM25 index of {store.n_pages} pages"):
            path = build_lexical_index(collection, params, store=store)
        console.print(f"wrote {path}", markup=False, highlight=False)
    for model_path in dense or ([None] if tokens else []):
        try:
            from nclue.index.dense import adopt_dense_index, build_dense_index
        except ModuleNotFoundError as exc:
            raise NclueError(
                f"--dense needs the neural extras ({exc.name} missing): pip install 'nclue[neural]'"
            ) from None
        with progress_bars() as bar:
            path = build_dense_index(
                collection, replace(dense_options, model_path=model_path), rebuild=rebuild, progress=bar,
                tokens=tokens, engine=runner,
            )  # fmt: skip
        adopt_dense_index(collection, path, keep_others=keep)
        console.print(f"wrote {path}" + (" (+ token index)" if tokens else ""), markup=False, highlight=False)


def _build_all(collection: Path, params, models: list[str], dense: DenseOptions, runner, flags: tuple, console) -> None:  # noqa: ANN001 - BM25Params, Engine | None, rich Console
    from nclue.index.builders import IndexOptions, build_all

    if len(models) > 1:
        raise NclueError("--all builds one dense index: name at most one --dense model")
    options = IndexOptions(
        bm25=params,
        dense=replace(dense, model_path=models[0] if models else None),
        rebuild=flags[0],
        engine=runner,
        keep_other_dense=flags[1],
    )
    with progress_bars() as bar:
        steps = build_all(collection, options, progress=bar)
    for step in steps:
        console.print(f"{step.name}: {step.action} ({step.seconds:.1f} s)", markup=False, highlight=False)


def _verify(collection: Path, console) -> None:  # noqa: ANN001 - rich Console
    """Print ✓/✗ and the problems of every index, and ✗ with its problems for a collection whose two
    tables disagree; raise one line naming every fix when anything is wrong."""
    from nclue.corpus.store import consistency_fix, cross_check

    indexes = _index_problems(collection)
    tables = cross_check(collection)
    if not indexes and not tables:
        raise NclueError(f"{collection}: no index to verify; build one with `nclue index {collection} --lexical`")
    found = {"collection (docs.parquet ↔ pages.parquet)": tables, **indexes} if tables else indexes
    for name, issues in found.items():
        console.print(f"{'✓' if not issues else '✗'} {name}", style="green" if not issues else "red", markup=False)
        for line in issues:
            console.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)
    damaged = [name for name, issues in indexes.items() if issues]
    fixes = [f"docs.parquet and pages.parquet disagree: {consistency_fix(collection)}"] if tables else []
    fixes += [f"damaged index(es): {', '.join(damaged)}; rebuild them"] if damaged else []
    if fixes:
        raise NclueError(f"{collection}: {'; '.join(fixes)}", exit_code=1)


def _index_problems(collection: Path) -> dict[str, list[str]]:
    """Index name → the problems :func:`verify_lexical_index` and its dense/token peers find (every index present)."""
    from nclue.index.builders import verify_token_indexes
    from nclue.index.dense import verify_dense_indexes
    from nclue.index.lexical import index_present, verify_lexical_index

    found = {"lexical": verify_lexical_index(collection)} if index_present(collection) else {}
    found.update({f"dense/{name}": issues for name, issues in verify_dense_indexes(collection).items()})
    found.update({f"tokens/{name}": issues for name, issues in verify_token_indexes(collection).items()})
    return found


def register(app: typer.Typer) -> None:
    """Add ``index``."""
    app.command("index")(index)
