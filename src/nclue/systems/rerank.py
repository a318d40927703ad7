"""``rerank(BASE, SCORER, pool=100, pages=best)``: rescore a fixed candidate pool, never extend it.

The pool is exactly ``BASE``'s top ``pool`` documents for the request (``docs/systems.md``: top 100
for text). Each pooled document gets a new score and the pool is re-sorted by it
(descending; equal scores keep the base order — a stable sort); documents outside the
pool are never added, so the output is a permutation of the pool truncated at ``depth``.

Document score = the best passage score over the document's *candidate pages*, at most
:data:`PAGES_PER_DOC` of them, chosen by ``pages=`` (:data:`PAGE_CHOICES`):

* ``best`` (the default) — the document's best pages by the base's page scores: the pages the
  base surfaced for it (page-aware bases, score order), else its highest-scoring pages by the page
  scores of the base's backbone (that of the first operation in its name, e.g. BM25 for
  ``bm25.joint``) for the query text, ties to the earlier page;
* ``evidence`` — the base's evidence pages (each condition's supporting pages, in condition
  order, each page once); a document without evidence falls back to ``best``. Only for a
  page-aware base;
* ``first`` — the document's first pages, whatever the base: the rule before ``pages=`` existed,
  kept to reproduce runs recorded without it.

Passages are those pages cut into token windows by :func:`nclue.models.chunking.chunk_pages` with
the scorer's tokenizer. The query text is the request's rendering.

``SCORER``: ``cross:KEY`` / ``bi:KEY`` / a plain model key (:mod:`nclue.models.crossencoder`):
a bi-encoder — passage score = cosine with the query, each side with the model's own prompt
(``config_sentence_transformers.json``; passage vectors read from the collection's per-page dense
index when one was built with the same model files and prompts on the torch, torch-bf16 or onnx
backend, else encoded on the fly) — or a ``CrossEncoder``; ``minilm`` is the bundled bi-encoder. ``llm`` / ``llm:MODEL`` —
an LLM grades each (query, candidate pages) pair 0–3 (:class:`LLMGrades`).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from nclue.errors import NclueError
from nclue.systems.backbone import Backbone, PageTable, Request, System
from nclue.systems.names import Call, Op, Spec, format_name
from nclue.types import RankedDoc

if TYPE_CHECKING:
    from nclue.llm.cache import Asker
    from nclue.systems.registry import Workspace

DEFAULT_POOL = 100
PAGES_PER_DOC = 3
"""Candidate pages scored per pooled document."""
PAGE_CHOICES: tuple[str, ...] = ("best", "evidence", "first")
DEFAULT_PAGES = "best"
PASSAGE_OVERLAP = 32
CACHE_PAGES = 20000


class PoolScorer(Protocol):
    """Scores each pooled document from its candidate page rows."""

    def doc_scores(self, query: str, doc_rows: list[list[int]]) -> np.ndarray:
        """One float32 score per document."""
        ...


class BiEncoderPassages:
    """Passage vectors per page row for a bi-encoder scorer, from a dense index when possible."""

    kind = "bi"

    def __init__(self, model_dir: Path, collection_dir: Path, texts: Callable[[], list[str]]) -> None:
        from nclue.index.dense import window_limit
        from nclue.models.encoder import QUERY_BACKEND, load_encoder, load_tokenizer, with_prompt
        from nclue.models.identity import model_identity
        from nclue.models.st_layout import resolve_prompts

        self.identity = model_identity(model_dir)
        self.prompts = resolve_prompts(model_dir)
        self.index = self._matching_index(collection_dir)
        backend = QUERY_BACKEND.get(self.index.backend, self.index.backend) if self.index is not None else "torch"
        plain = load_encoder(model_dir, backend=backend)
        self.encoder = with_prompt(plain, self.prompts.query)
        self.passage_encoder = with_prompt(plain, self.prompts.passage)  # used only when no index matches
        self.tokenizer = load_tokenizer(model_dir)
        self.window = window_limit(model_dir, self.prompts.passage)
        self.texts = texts
        self._cache: OrderedDict[int, np.ndarray] = OrderedDict()

    def _matching_index(self, collection_dir: Path):  # noqa: ANN202 - DenseIndex | None
        """A per-page dense index of the same model files and prompts (its vectors are the passages')."""
        from nclue.index.dense import list_dense_indexes, open_index_dir

        for directory in list_dense_indexes(collection_dir):
            index = open_index_dir(collection_dir, directory)
            exact = index.backend in ("torch", "torch-bf16", "onnx")
            same = index.manifest["model"]["sha256"] == self.identity.sha256 and index.prompts == self.prompts
            if same and exact and not index.manifest.get("span_pages"):
                return index
        return None

    def page_vectors(self, rows: Sequence[int]) -> list[np.ndarray]:
        """``(n_chunks, dim)`` normalised chunk vectors of each page row."""
        missing = [r for r in dict.fromkeys(int(r) for r in rows) if r not in self._cache]
        if missing and self.index is not None:
            page = self.index.chunks.page
            for r in missing:
                lo, hi = np.searchsorted(page, r, side="left"), np.searchsorted(page, r, side="right")
                self._cache[r] = np.asarray(self.index.vectors[lo:hi], dtype=np.float32)
        elif missing:
            from nclue.models.chunking import chunk_pages

            texts = self.texts()
            page_texts = [texts[r] for r in missing]
            chunks = chunk_pages(page_texts, self.tokenizer, self.window, PASSAGE_OVERLAP)
            vectors = self.passage_encoder.encode(chunks.texts(page_texts))
            for i, r in enumerate(missing):
                self._cache[r] = vectors[chunks.page == i]
        out = [self._cache[int(r)] for r in rows]
        while len(self._cache) > CACHE_PAGES:
            self._cache.popitem(last=False)
        return out

    def doc_scores(self, query: str, doc_rows: list[list[int]]) -> np.ndarray:
        """Best passage cosine per document (0 for a document without text)."""
        q = self.encoder.encode([query])[0]
        out = np.zeros(len(doc_rows), np.float32)
        for i, rows in enumerate(doc_rows):
            vecs = [v for v in self.page_vectors(rows) if len(v)]
            if vecs:
                out[i] = float((np.concatenate(vecs) @ q).max())
        return out


class CrossEncoderPassages:
    """Cross-encoder passage scores: every candidate page cut into windows, scored with the query."""

    kind = "cross"

    def __init__(self, model_dir: Path, texts: Callable[[], list[str]]) -> None:
        from nclue.models.crossencoder import CrossEncoderScorer
        from nclue.models.tokenizer import load_tokenizer_dir

        self.scorer = CrossEncoderScorer(model_dir)
        self.tokenizer = load_tokenizer_dir(model_dir)
        self.window = max(1, self.scorer.max_length // 2)
        self.texts = texts

    def doc_scores(self, query: str, doc_rows: list[list[int]]) -> np.ndarray:
        """Best (query, passage) cross-encoder score per document; a document without text
        scores one below the lowest document that has text (scores stay finite for run files)."""
        from nclue.models.chunking import chunk_pages

        texts = self.texts()
        flat = [r for rows in doc_rows for r in rows]
        owner = np.repeat(np.arange(len(doc_rows)), [len(rows) for rows in doc_rows])
        page_texts = [texts[r] for r in flat]
        chunks = chunk_pages(page_texts, self.tokenizer, self.window, PASSAGE_OVERLAP)
        scores = self.scorer.score(query, chunks.texts(page_texts))
        out = np.full(len(doc_rows), -np.inf, np.float32)
        if len(scores):
            np.maximum.at(out, owner[chunks.page], scores)
        empty = ~np.isfinite(out)
        if empty.any():
            out[empty] = float(out[~empty].min()) - 1.0 if (~empty).any() else 0.0
        return out


LLM_TEMPLATE = "rerank_grade"
LLM_PROMPT = """You judge one document for a search request made of several conditions. The document is
relevant only if it satisfies every condition of the request.

Request: {query}

Pages of the document:
{pages}

Grade the document: 3 = these pages satisfy every condition; 2 = they satisfy most conditions;
1 = they satisfy some condition; 0 = they satisfy none.
Reply with one JSON object and nothing else: {{"grade": G}}
"""
LLM_GRADES = range(0, 4)
LLM_PAGE_CHARS = 2000
LLM_MAX_TOKENS = 32
LLM_CACHE = Path("llm") / "rerank_cache.jsonl"
LLM_ENV_CACHE = "NCLUE_RERANK_CACHE"
LLM_ENV_BATCH_OUT = "NCLUE_RERANK_BATCH_OUT"
LLM_ENV_BATCH_IN = "NCLUE_RERANK_BATCH_IN"


def llm_prompt(query: str, pages: Sequence[tuple[int, str]]) -> str:
    """The grading prompt of one document: the query and its candidate pages ``(page number, text)``,
    each page cut at :data:`LLM_PAGE_CHARS` characters."""
    shown = "\n\n".join(f"[page {n}]\n{text[:LLM_PAGE_CHARS].strip() or '(no text)'}" for n, text in pages)
    return LLM_PROMPT.format(query=query, pages=shown or "(no text)")


def parse_grade(reply: str) -> int:
    """The grade of a reply, ``{"grade": G}`` with ``G`` an integer in :data:`LLM_GRADES`; ``ValueError`` otherwise."""
    from nclue.llm.replies import json_object

    grade = json_object(reply).get("grade")
    if isinstance(grade, bool) or not isinstance(grade, int) or grade not in LLM_GRADES:
        raise ValueError(f"grade {grade!r} is not an integer 0-3")
    return grade


class LLMGrades:
    """LLM reranking: each document's grade (0–3) for the query, from its candidate pages.

    Replies go through the cached ask loop of :mod:`nclue.llm.cache`: the frozen cache first (a
    rerun calls no endpoint), then — online — the endpoint, or — batch mode — the imported replies,
    else the prompt is pending: the query's ranking fails with
    :class:`~nclue.llm.cache.BatchPending` naming the request file, which holds every pending
    prompt of the run so far. A reply that is not ``{"grade": G}`` fails the query.
    """

    def __init__(self, asker: Asker, texts: Callable[[], list[str]], page_number: np.ndarray) -> None:
        self.asker = asker
        self.texts = texts
        self.page_number = page_number

    def doc_scores(self, query: str, doc_rows: list[list[int]]) -> np.ndarray:
        """One grade per document; replies new to the cache are saved before returning."""
        texts = self.texts()
        prompts = [llm_prompt(query, [(int(self.page_number[r]), texts[r]) for r in rows]) for rows in doc_rows]
        before = len(self.asker.cache.entries)
        replies = [self.asker.ask(p) for p in prompts]
        if any(r is None for r in replies):
            self.asker.finish()
        if len(self.asker.cache.entries) != before:
            self.asker.cache.save()
        return np.array([self._grade(p, r) for p, r in zip(prompts, replies, strict=True)], np.float32)

    def _grade(self, prompt: str, reply: str | None) -> int:
        try:
            return parse_grade(reply or "")
        except ValueError as exc:
            key = self.asker.cache.key(prompt, self.asker.config.model)
            raise NclueError(
                f'LLM reranker: reply {reply!r:.80} is not {{"grade": 0-3}} ({exc}); it is frozen in '
                f"{self.asker.cache.path} (prompt_sha256 {key[:12]}…): delete that row to ask again"
            ) from None


def llm_scorer(model: str | None, workspace: Workspace) -> LLMGrades:
    """The LLM scorer of ``llm`` / ``llm:MODEL``: endpoint from ``NCLUE_LLM_*``, cache and batch files from
    ``NCLUE_RERANK_CACHE`` (default ``COLLECTION/llm/rerank_cache.jsonl``), ``NCLUE_RERANK_BATCH_OUT`` and
    ``NCLUE_RERANK_BATCH_IN`` (either one selects batch mode)."""
    from nclue.llm.cache import Asker, ResponseCache
    from nclue.llm.client import LLMConfig

    config = replace(LLMConfig.from_env(model=model), max_tokens=LLM_MAX_TOKENS)
    if not config.model:
        raise NclueError(
            "reranking scorer 'llm' needs the model that answers (it keys the frozen cache): "
            "write llm:MODEL or set NCLUE_LLM_MODEL"
        )
    cache = Path(os.environ.get(LLM_ENV_CACHE) or workspace.collection_dir / LLM_CACHE)
    batch_out, batch_in = (os.environ.get(v) for v in (LLM_ENV_BATCH_OUT, LLM_ENV_BATCH_IN))
    make = lambda: LLMGrades(  # noqa: E731 - built once per workspace
        Asker(
            config,
            ResponseCache(cache),
            LLM_TEMPLATE,
            LLM_PROMPT,
            mode="batch" if batch_out or batch_in else "online",
            batch_out=Path(batch_out) if batch_out else None,
            batch_in=Path(batch_in) if batch_in else None,
            resume=f"export {LLM_ENV_BATCH_IN}=REPLIES.jsonl; rerun the same system",
        ),
        lambda: workspace.store.texts,
        workspace.pages.page_number,
    )
    return workspace.shared(("rerank scorer", "llm", config, str(cache), batch_out, batch_in), make)


@dataclass
class RerankSystem:
    """A fixed pool from ``base``, rescored by ``scorer`` over each document's candidate pages.

    ``page_choice``: one of :data:`PAGE_CHOICES`; ``page_backbone``: the backbone whose page scores
    pick ``best`` pages for documents the base surfaced no pages for (``None``: only ``first``).
    """

    name: str
    base: System
    scorer: PoolScorer
    pages: PageTable
    doc_index: dict[str, int]
    pool: int = DEFAULT_POOL
    page_choice: str = DEFAULT_PAGES
    page_backbone: Backbone | None = None
    per_doc: int = PAGES_PER_DOC
    page_aware: bool = field(init=False)

    def __post_init__(self) -> None:
        self.page_aware = bool(self.base.page_aware)

    def _rows(self, start: int, stop: int, numbers: Sequence[int]) -> list[int]:
        """Page rows of the document spanning ``start:stop`` for page ``numbers`` (in order, at most ``per_doc``)."""
        have = self.pages.page_number[start:stop]
        rows = [start + int(j) for p in numbers for j in np.flatnonzero(have == p)[:1]]
        return rows[: self.per_doc]

    def candidate_rows(self, doc: RankedDoc, page_scores: np.ndarray | None = None) -> list[int]:
        """Page rows scored for a pooled document (rule in the module docstring); ``page_scores``: the
        query's page scores on ``page_backbone``, needed for a document without surfaced pages."""
        i = self.doc_index[doc.doc_id]
        start, stop = int(self.pages.doc_offsets[i]), int(self.pages.doc_offsets[i + 1])
        if self.page_choice == "first":
            return list(range(start, min(stop, start + self.per_doc)))
        if self.page_choice == "evidence":
            rows = self._rows(start, stop, list(dict.fromkeys(p for ps in doc.evidence.values() for p in ps)))
            if rows:
                return rows
        if doc.pages:
            return self._rows(start, stop, [p for p, _ in doc.pages])
        if page_scores is None:
            raise NclueError(f"{self.name}: {doc.doc_id} has no surfaced pages; pass the query's page scores")
        order = np.argsort(-page_scores[start:stop], kind="stable")[: self.per_doc]
        return [start + int(j) for j in order]

    def query_page_scores(self, request: Request, pooled: list[RankedDoc]) -> np.ndarray | None:
        """The query's page scores on ``page_backbone`` when some pooled document needs them, else ``None``."""
        if self.page_choice == "first" or self.page_backbone is None or all(d.pages for d in pooled):
            return None
        return self.page_backbone.page_scores([request.text])[0]

    def search(self, request: Request, depth: int = 100) -> list[RankedDoc]:
        """The base's top ``pool`` documents, re-sorted by the scorer (stable), first ``depth``."""
        pooled = self.base.search(request, depth=self.pool)
        if not pooled:
            return []
        page_scores = self.query_page_scores(request, pooled)
        scores = self.scorer.doc_scores(request.text, [self.candidate_rows(d, page_scores) for d in pooled])
        order = sorted(range(len(pooled)), key=lambda i: -float(scores[i]))
        return [
            RankedDoc(pooled[i].doc_id, float(scores[i]), pages=pooled[i].pages, evidence=pooled[i].evidence)
            for i in order[:depth]
        ]


def first_op(spec: Spec) -> Op:
    """The first backbone operation of a system name (depth first, in name order)."""
    if isinstance(spec, Op):
        return spec
    return first_op(spec.systems[0])


def model_scorer(token: str, workspace: Workspace) -> PoolScorer:
    """The passage scorer of a model token (``cross:KEY``, ``bi:KEY``, ``KEY``), loaded once per workspace."""
    from nclue.models.crossencoder import resolve_scorer

    kind, model_dir = resolve_scorer(token)
    texts = lambda: workspace.store.texts  # noqa: E731 - deferred read of page texts
    return workspace.shared(
        ("rerank scorer", kind, str(model_dir)),
        lambda: (
            CrossEncoderPassages(model_dir, texts)
            if kind == "cross"
            else BiEncoderPassages(model_dir, workspace.collection_dir, texts)
        ),
    )


def _options(spec: Call, name: str) -> tuple[int, str]:
    """``(pool, pages)`` of a rerank call, checked."""
    unknown = [k for k, _ in spec.options if k not in ("pool", "pages")]
    if unknown:
        raise NclueError(f"{name!r}: unknown option {unknown[0]!r}; rerank takes pool=N and pages=best|evidence|first")
    raw_pool = spec.option("pool", str(DEFAULT_POOL)) or ""
    if not raw_pool.isdigit() or int(raw_pool) < 1:
        raise NclueError(f"{name!r}: pool must be a positive integer, got {raw_pool!r}")
    pages = spec.option("pages", DEFAULT_PAGES) or ""
    if pages not in PAGE_CHOICES:
        raise NclueError(f"{name!r}: pages={pages} is not one of {', '.join(PAGE_CHOICES)} (e.g. pages=best)")
    return int(raw_pool), pages


def build_system(spec: Call, workspace: Workspace) -> RerankSystem:
    """Registry hook for ``rerank(BASE, SCORER, pool=N, pages=best|evidence|first)``."""
    name = format_name(spec)
    if len(spec.args) != 2 or len(spec.systems) != 1 or not isinstance(spec.args[1], str):
        raise NclueError(
            f"{name!r}: write rerank(BASE_SYSTEM, SCORER, pool=N), e.g. rerank(bm25.joint, minilm, pool=100)"
        )
    pool, pages = _options(spec, name)
    base = workspace.system(spec.systems[0])
    if pages == "evidence" and not base.page_aware:
        raise NclueError(
            f"{name!r}: pages=evidence needs a page-aware base, and {format_name(spec.systems[0])} surfaces no "
            "pages; use pages=best (its best pages by its backbone's page scores) or pages=first"
        )
    token = spec.args[1]
    family, _, model = token.partition(":")
    scorer = llm_scorer(model or None, workspace) if family == "llm" else model_scorer(token, workspace)
    return RerankSystem(
        name=name,
        base=base,
        scorer=scorer,
        pages=workspace.pages,
        doc_index=workspace.store.doc_index,
        pool=pool,
        page_choice=pages,
        page_backbone=workspace.backbone(first_op(spec.systems[0]).backbone),
    )
