"""The ``struct`` backbone: calibrated page evidence from document structure, and ``struct.cover``.

For a condition ``c`` and page row ``p`` the evidence vector ``x(c, p)`` (``docs/structure.md#evidence``) is

* ``head`` — the best cosine between ``c`` and a heading that starts on ``p`` (``structure.parquet``,
  embedded once by :func:`nclue.index.structure.build_heading_vectors` with the collection's dense model), 0 when none;
* ``head_high`` — ``max(0, head − 0.6) / 0.4``, so a near-identical heading can weigh more than a
  loosely related one (the logistic model is otherwise linear);
* ``head_level`` — the best ``cosine / level`` over the page's headings (``level`` 1 = chapter;
  Title-Case lines of unknown level count as level 3): the position in the outline;
* ``dense`` — cosine of ``c`` with the page text (the dense page index, ``dense`` backbone);
* ``bm25`` — BM25 of ``c`` on the page, max-normalised over the collection;
* ``phrase`` — 1 when the page holds ``c``'s analysed terms as a phrase
  (:meth:`nclue.index.lexical.LexicalIndex.page_phrase_matches`);
* ``role`` — 1 on table-of-contents and index pages (they point at sections, they do not hold them).

A logistic model turns it into ``P(p establishes c) = σ(w·x + b)``. The weights are fit
(:func:`fit_calibration`) on the construction inventory of a benchmark built over **another**
corpus than the one scored — never on the qrels being scored; the file records what it was fit
on. ``struct`` uses the calibration shipped with nclue (``structure_calibration.json``, fit on the
``debian-docs-shift`` sections and lexical benchmarks); ``struct:NAME`` uses
``COLLECTION/calibration/NAME.json``.

Systems: ``page_scores`` returns these probabilities, so every generic operation applies
(``struct.decompose(min|product|hmean|distinct)`` aggregate them as they are, without
max-normalising; ``decompose(distinct)`` is the expected number of conditions established on
distinct pages). ``struct.cover`` ranks documents *complete-first*: by the probability that every
condition is established on its own page, ``max over injective assignments a of ∏_c P(a(c), c)``
(conditions independent given the pages), found as the best assignment
(:func:`nclue.systems.aggregate.distinct_assign`) of the page weights ``K + log P`` (``K = 100``
keeps them positive; ``P`` floored at 10⁻³⁰), then by evidence strength (``ε · (bm25 + head) / 2``
added to every weight, ``ε = 10⁻³``). Its document score is ``n·K + log P(all) + ε·strength``; its
evidence pages are the assigned pages. The expected *count* ranks a document that surely
establishes two of three conditions above one that probably establishes all three; the product
does not — on the four benchmarks of ``docs/structure.md#results`` the count (the fair row
``struct.decompose(distinct)``) scored 12–38 points lower.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nclue.corpus.structure import STRUCTURE_FILE, Structure, open_structure
from nclue.errors import NclueError
from nclue.index.integrity import check
from nclue.index.structure import HEADINGS_DIR, HEADINGS_FILE, HEADINGS_MANIFEST, read_json
from nclue.io import iter_jsonl, sha256_file
from nclue.models.similarity import row_products
from nclue.systems.backbone import PageTable, Request
from nclue.systems.names import Op, format_name
from nclue.systems.operations import DecomposeSystem, normalise

FEATURES: tuple[str, ...] = ("head", "head_high", "head_level", "dense", "bm25", "phrase", "role")
SHIPPED = Path(__file__).with_name("structure_calibration.json")
TIE_EPS = 1e-3
LOG_OFFSET = 100.0
PROB_FLOOR = 1e-30
UNKNOWN_LEVEL = 3
CACHE_TEXTS = 256


@dataclass
class Calibration:
    """Logistic weights over :data:`FEATURES` and what they were fit on."""

    weights: np.ndarray
    bias: float
    fit_on: dict[str, Any]

    @classmethod
    def load(cls, path: Path) -> Calibration:
        """Read a calibration file; :class:`NclueError` naming the file when it is unusable."""
        data = read_json(path)
        if not isinstance(data, dict) or data.get("features") != list(FEATURES):
            raise NclueError(
                f"{path}: not a struct calibration over features {', '.join(FEATURES)}; "
                "refit it with nclue.systems.structure.fit_calibration (benchmarks/structure_fit.py)"
            )
        return cls(np.asarray(data["weights"], dtype=np.float64), float(data["bias"]), data.get("fit_on", {}))

    def to_json(self) -> dict[str, Any]:
        """The file form."""
        return {
            "features": list(FEATURES),
            "weights": [round(float(w), 6) for w in self.weights],
            "bias": round(self.bias, 6),
            "fit_on": self.fit_on,
        }


class StructureBackbone:
    """Calibrated page evidence (module docstring) over one collection."""

    def __init__(self, name: str, workspace, calibration: Calibration) -> None:  # noqa: ANN001 - Workspace
        self.name = name
        self.pages: PageTable = workspace.pages
        self.lexical = workspace.backbone("bm25")
        self.dense = workspace.backbone("dense")
        self.calibration = calibration
        base = Path(workspace.collection_dir)
        self.structure: Structure = open_structure(base, workspace.store)
        self._load_headings(base)
        role = self.structure.role
        self.role = (role != "").astype(np.float32)
        self._cache: OrderedDict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = OrderedDict()

    def _load_headings(self, base: Path) -> None:
        directory = base / HEADINGS_DIR
        fix = f"rebuild them with `nclue structure {base}`"
        manifest = read_json(directory / HEADINGS_MANIFEST)
        if manifest is None:
            raise NclueError(f"{base}: no heading vectors ({directory}); build them with `nclue structure {base}`")
        if manifest.get("structure_sha256") != sha256_file(base / STRUCTURE_FILE):
            raise NclueError(f"{directory}: stale — structure.parquet changed since the headings were embedded; {fix}")
        if manifest.get("dense") != self.dense.index.key:
            raise NclueError(
                f"{directory}: embedded with dense index {manifest.get('dense')!r}, the collection's is "
                f"{self.dense.index.key!r}; {fix}"
            )
        check(directory, manifest.get("files") or {}, fix)
        vectors = np.load(directory / HEADINGS_FILE)
        index = {t: i for i, t in enumerate(manifest["titles"])}
        structure = self.structure
        level = structure.levels.astype(np.float32)
        level = np.where(level >= 1, level, UNKNOWN_LEVEL)
        order = np.lexsort((np.arange(len(structure.head_row)), structure.head_row))
        rows = structure.head_row[order]
        self._head_title = np.fromiter((index[structure.titles[i]] for i in order.tolist()), np.int64, len(order))
        self._head_inv_level = (1.0 / level[order]).astype(np.float32)
        self._head_vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]]) if len(rows) else np.zeros(0, np.int64)
        self._starts = starts
        self._head_pages = rows[starts] if len(rows) else rows

    def _semantic(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``head``, ``head_level`` and ``dense`` rows of each text, cached by text (conditions recur)."""
        n_pages = self.pages.n_pages
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            m = len(missing)
            head = np.zeros((m, n_pages), np.float32)
            head_level = np.zeros((m, n_pages), np.float32)
            if len(self._starts):
                query = self.dense.encode(missing)
                sims = row_products(query, self._head_vectors)[:, self._head_title]  # (m, headings), by page row
                head[:, self._head_pages] = np.maximum(np.maximum.reduceat(sims, self._starts, axis=1), 0.0)
                scaled = np.maximum.reduceat(sims * self._head_inv_level, self._starts, axis=1)
                head_level[:, self._head_pages] = np.maximum(scaled, 0.0)
            dense = self.dense.page_scores(missing)
            for i, text in enumerate(missing):
                self._cache[text] = (head[i], head_level[i], dense[i])
        for text in texts:
            self._cache.move_to_end(text)
        while len(self._cache) > CACHE_TEXTS:
            self._cache.popitem(last=False)
        rows = [self._cache[t] for t in texts]
        return tuple(np.stack([r[k] for r in rows]) for k in range(3))  # type: ignore[return-value]

    def prefetch(self, texts: Sequence[str]) -> None:
        """Compute the semantic evidence of a batch of conditions in one encoder call and one
        matrix product each (``nclue run`` calls this for every batch of queries)."""
        texts = list(dict.fromkeys(texts))
        for start in range(0, len(texts), CACHE_TEXTS // 2):
            self._semantic(texts[start : start + CACHE_TEXTS // 2])

    def evidence(self, texts: Sequence[str]) -> list[np.ndarray]:
        """The evidence of :data:`FEATURES` as ``len(FEATURES)`` float32 arrays of shape ``(len(texts), n_pages)``."""
        n, n_pages = len(texts), self.pages.n_pages
        texts = list(texts)
        if n:
            head, head_level, dense = self._semantic(texts)
        else:
            head = head_level = dense = np.zeros((0, n_pages), np.float32)
        bm25 = normalise(self.lexical.page_scores(texts)) if n else np.zeros((0, n_pages), np.float32)
        phrase = self.lexical.page_phrase_matches(texts).astype(np.float32) if n else bm25
        high = np.maximum(head - 0.6, 0.0) / 0.4
        role = np.broadcast_to(self.role, (n, n_pages))
        return [head, high, head_level, dense, bm25, phrase, role]

    def features(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), n_pages, len(FEATURES))`` float32 evidence (for fitting)."""
        return np.stack(self.evidence(texts), axis=-1)

    def _probability(self, evidence: list[np.ndarray]) -> np.ndarray:
        z = np.full(evidence[0].shape, self.calibration.bias, np.float32)
        for weight, values in zip(self.calibration.weights.tolist(), evidence):
            z += np.float32(weight) * values
        return (1.0 / (1.0 + np.exp(-z))).astype(np.float32)

    def page_scores(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), n_pages)`` calibrated probability that the page establishes the text."""
        return self._probability(self.evidence(texts))

    def cover_scores(self, request: Request) -> np.ndarray:
        """Page weights of ``struct.cover``: ``K + log P`` plus the ε evidence-strength tie-break."""
        evidence = self.evidence(list(request.conditions))
        prob = np.maximum(self._probability(evidence), np.float32(PROB_FLOOR))
        strength = (evidence[4] + evidence[0]) / 2
        return (np.float32(LOG_OFFSET) + np.log(prob) + np.float32(TIE_EPS) * strength).astype(np.float32)


def load_backbone(workspace, variant: str | None) -> StructureBackbone:  # noqa: ANN001 - Workspace
    """Registry hook: ``struct`` (shipped calibration) or ``struct:NAME`` (``COLLECTION/calibration/NAME.json``)."""
    if variant is None:
        path = SHIPPED
    else:
        path = Path(workspace.collection_dir) / "calibration" / f"{variant}.json"
        if not path.is_file():
            raise NclueError(
                f"backbone 'struct:{variant}': no calibration {path}; fit one with "
                "nclue.systems.structure.fit_calibration (benchmarks/structure_fit.py)"
            )
    name = "struct" if variant is None else f"struct:{variant}"
    return StructureBackbone(name, workspace, Calibration.load(path))


def build_op(spec: Op, backbone: StructureBackbone, workspace) -> DecomposeSystem | None:  # noqa: ANN001
    """Registry hook: ``cover`` and ``decompose(...)`` over the probabilities as they are."""
    name = format_name(spec)
    if spec.op == "cover":
        if spec.args:
            raise NclueError(f"system {name!r}: struct.cover takes no arguments")
        return DecomposeSystem(name, backbone, "distinct", condition_scores=backbone.cover_scores)
    if spec.op == "decompose" and len(spec.args) == 1 and spec.args[0] in ("min", "product", "hmean", "distinct"):
        return DecomposeSystem(
            name, backbone, spec.args[0], condition_scores=lambda r: backbone.page_scores(list(r.conditions))
        )
    return None


def training_rows(
    backbone: StructureBackbone, inventory: Sequence[tuple[str, str, Sequence[int]]], seed: int, negatives: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X, y, weight)`` for :func:`fit_calibration`: per condition, every page it establishes (y = 1)
    and every page with any evidence (head > 0.5, bm25 > 0 or dense > 0.4) as y = 0/1, plus a seeded
    ``negatives`` share of the remaining pages weighted ``1 / negatives`` (so the fit stays calibrated)."""
    pages = backbone.pages
    row_of = {(pages.id_list[int(pages.page_doc[j])], int(pages.page_number[j])): j for j in range(pages.n_pages)}
    positives: dict[str, set[int]] = {}
    for condition, doc_id, numbers in inventory:
        rows = positives.setdefault(condition, set())
        rows.update(row_of[(doc_id, int(p))] for p in numbers if (doc_id, int(p)) in row_of)
    rng = np.random.default_rng(seed)
    xs, ys, ws = [], [], []
    names = sorted(positives)
    for start in range(0, len(names), 16):
        batch = names[start : start + 16]
        feats = backbone.features(batch)
        for i, condition in enumerate(batch):
            f = feats[i]
            y = np.zeros(pages.n_pages, np.float32)
            y[list(positives[condition])] = 1.0
            evident = (f[:, 0] > 0.5) | (f[:, 4] > 0) | (f[:, 3] > 0.4) | (y > 0)
            rest = np.flatnonzero(~evident)
            sample = rest[rng.random(len(rest)) < negatives]
            keep = np.r_[np.flatnonzero(evident), sample]
            xs.append(f[keep])
            ys.append(y[keep])
            ws.append(np.r_[np.ones(int(evident.sum())), np.full(len(sample), 1.0 / negatives)])
    return np.concatenate(xs), np.concatenate(ys), np.concatenate(ws).astype(np.float64)


def fit_logistic(x: np.ndarray, y: np.ndarray, weight: np.ndarray, l2: float = 1e-4) -> tuple[np.ndarray, float]:
    """Weighted L2-regularised logistic regression (L-BFGS, SciPy): ``argmin Σ wᵢ·logloss + l2·‖w‖²``."""
    from scipy.optimize import minimize

    x = x.astype(np.float64)
    total = weight.sum()

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        z = x @ theta[:-1] + theta[-1]
        p = 1.0 / (1.0 + np.exp(-z))
        ll = np.logaddexp(0.0, z) - y * z
        grad_z = weight * (p - y) / total
        value = float((weight * ll).sum() / total + l2 * (theta[:-1] ** 2).sum())
        grad = np.r_[x.T @ grad_z + 2 * l2 * theta[:-1], grad_z.sum()]
        return value, grad

    result = minimize(loss, np.zeros(x.shape[1] + 1), jac=True, method="L-BFGS-B")
    return result.x[:-1], float(result.x[-1])


def fit_calibration(
    release_dirs: Sequence[str | os.PathLike[str]],
    collection_dir: str | os.PathLike[str],
    seed: int = 11,
    negatives: float = 0.02,
) -> Calibration:
    """Fit the evidence calibration on the **construction inventories** of releases built from one
    collection (``inventory.jsonl``: every page that establishes each condition, in every document
    — not the qrels), e.g. its ``sections`` and its ``lexical`` benchmark, so that both kinds of
    condition are represented. Score the result on a *different* corpus
    (``docs/structure.md#circularity``)."""
    from nclue.systems.registry import Workspace

    inventory: list[tuple[str, str, Sequence[int]]] = []
    sources = []
    for release_dir in release_dirs:
        release = Path(release_dir)
        path = release / "inventory.jsonl"
        if not path.is_file():
            raise NclueError(f"{release}: no inventory.jsonl; fit on a release written by `nclue build`")
        manifest = read_json(release / "MANIFEST.json") or {}
        kind = (manifest.get("conditions") or {}).get("kind", "lexical")
        inventory += [(row["condition"], row["doc_id"], row["pages"]) for _, row in iter_jsonl(path)]
        sources.append(
            {
                "release": release.name,
                "conditions": kind,
                "inventory_sha256": sha256_file(path),
                "collection_sha256_of_doc_hashes": (manifest.get("collection") or {}).get("sha256_of_doc_hashes"),
            }
        )
    workspace = Workspace(collection_dir)
    placeholder = Calibration(np.zeros(len(FEATURES)), 0.0, {})
    backbone = StructureBackbone("struct", workspace, placeholder)
    x, y, weight = training_rows(backbone, inventory, seed, negatives)
    weights, bias = fit_logistic(x, y, weight)
    fit_on = {
        "inventories": sources,
        "conditions": sorted({s["conditions"] for s in sources}),
        "sources": sorted(set(workspace.store.docs.column("source").to_pylist())),
        "rows": int(len(y)),
        "positives": int(y.sum()),
        "seed": seed,
        "negatives": negatives,
    }
    return Calibration(weights, bias, fit_on)
