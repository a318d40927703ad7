"""The ``struct`` backbone: calibrated page evidence (``nclue.evidence``), and ``struct.cover``.

For a condition ``c`` and page row ``p`` the evidence signals ``x(c, p)`` are those of
:mod:`nclue.evidence.signals` — heading similarity (``head``, ``head_high``, ``head_level``), the
page's ``dense`` cosine, ``bm25`` and ``phrase`` match, and the page ``role`` (table of contents,
index) — and ``P(p establishes c) = σ(b + w·x)`` is the page model of an evidence
:class:`~nclue.evidence.model.Calibration` (``docs/evidence.md``). ``struct`` uses the shipped
calibration fitted on blind-reader judgments of a corpus whose sources the scored collection does
not share (:func:`nclue.evidence.model.for_sources`): on the development corpus the one fitted on
the shift corpus's readings, and the other way round — never the qrels being scored.
``struct:NAME`` uses ``COLLECTION/calibration/NAME.json`` (``nclue evidence fit``).

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
does not (``docs/structure.md#results`` compares them on the reader-judged benchmarks).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from nclue.errors import NclueError
from nclue.evidence.model import Calibration
from nclue.evidence.signals import SIGNALS, EvidenceSource
from nclue.systems.backbone import PageTable, Request
from nclue.systems.names import Op, format_name
from nclue.systems.operations import DecomposeSystem

TIE_EPS = 1e-3
LOG_OFFSET = 100.0
PROB_FLOOR = 1e-30
CACHE_TEXTS = 256
STRENGTH = ("bm25", "head")
"""The signals whose mean breaks ties in ``struct.cover``."""


class StructureBackbone:
    """Calibrated page evidence (module docstring) over one collection."""

    def __init__(self, name: str, workspace, calibration: Calibration, dense: str = "dense") -> None:  # noqa: ANN001 - Workspace
        self.name = name
        self.pages: PageTable = workspace.pages
        self.calibration = calibration
        self.source = EvidenceSource.from_workspace(workspace, require_structure=True, dense=dense)
        calibration.check_source(self.source.describe)
        _ = self.source.headings  # load (and check) the heading vectors now, not at the first query
        self._cache: OrderedDict[str, tuple[np.ndarray, np.ndarray]] = OrderedDict()

    def _rows(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Page logits and tie-break strengths of each text, cached by text (conditions recur)."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        bias, *weights = self.calibration.model.page
        for start in range(0, len(missing), CACHE_TEXTS // 2):
            chunk = missing[start : start + CACHE_TEXTS // 2]
            # b + Σ w_s x_s one signal at a time, in float64 as nclue.evidence.model.page_logits sums it
            # (no (S, T, P) stack of every signal in the hot path)
            rows = {name: SIGNALS[name](self.source, chunk) for name in (*self.calibration.signals, *STRENGTH)}
            z = np.full((len(chunk), self.pages.n_pages), bias, np.float64)
            for weight, name in zip(weights, self.calibration.signals):
                z += np.float64(weight) * rows[name]
            logits = z.astype(np.float32)
            strength = sum(rows[name] for name in STRENGTH) / np.float32(len(STRENGTH))
            for i, text in enumerate(chunk):
                self._cache[text] = (logits[i], strength[i])
        rows = [self._cache[t] for t in texts]
        for text in texts:
            self._cache.move_to_end(text)
        while len(self._cache) > max(CACHE_TEXTS, len(texts)):
            self._cache.popitem(last=False)
        n_pages = self.pages.n_pages
        if not rows:
            return np.zeros((0, n_pages), np.float32), np.zeros((0, n_pages), np.float32)
        return np.stack([r[0] for r in rows]), np.stack([r[1] for r in rows])

    def clear_cache(self) -> None:
        """Forget every cached condition (page logits and heading evidence), e.g. to time cold queries."""
        self._cache.clear()
        if self.source.headings is not None:
            self.source.headings.clear_cache()

    def prefetch(self, texts: Sequence[str]) -> None:
        """Compute the evidence of a batch of conditions in one encoder call per signal
        (``nclue run`` calls this for every batch of queries)."""
        texts = list(dict.fromkeys(texts))
        for start in range(0, len(texts), CACHE_TEXTS // 2):
            self._rows(texts[start : start + CACHE_TEXTS // 2])

    def page_scores(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), n_pages)`` calibrated probability that the page establishes the text."""
        logits, _ = self._rows(list(texts))
        return (1.0 / (1.0 + np.exp(-logits))).astype(np.float32)

    def cover_scores(self, request: Request) -> np.ndarray:
        """Page weights of ``struct.cover``: ``K + log P`` plus the ε evidence-strength tie-break."""
        logits, strength = self._rows(list(request.conditions))
        prob = np.maximum((1.0 / (1.0 + np.exp(-logits))).astype(np.float32), np.float32(PROB_FLOOR))
        return (np.float32(LOG_OFFSET) + np.log(prob) + np.float32(TIE_EPS) * strength).astype(np.float32)


def load_backbone(workspace, variant: str | None) -> StructureBackbone:  # noqa: ANN001 - Workspace
    """Registry hook: ``struct`` (the shipped calibration for this collection's sources, over the
    collection's dense index), ``struct:NAME`` (``COLLECTION/calibration/NAME.json``) or
    ``struct:VARIANT`` where no such calibration exists and ``VARIANT`` names a dense index as
    ``dense:VARIANT`` does (the shipped calibration over that index; its heading vectors must
    have been built with it)."""
    from nclue.index.dense import list_dense_indexes, variant_matches

    dense = "dense"
    path = Path(workspace.collection_dir) / "calibration" / f"{variant}.json"
    if variant is None or not path.is_file():
        if variant is not None:
            if not any(variant_matches(d.name, variant) for d in list_dense_indexes(workspace.collection_dir)):
                raise NclueError(
                    f"backbone 'struct:{variant}': no calibration {path} and no dense index matching {variant!r}; "
                    f"fit a calibration with `nclue evidence fit BENCH {workspace.collection_dir} -o {path}`, or "
                    "name a dense index (a backend, a model-name word or its folder name)"
                )
            dense = f"dense:{variant}"
        sources = set(workspace.store.docs.column("source").to_pylist())
        calibration = Calibration.load(None, sources)
    else:
        calibration = Calibration.load(path)
    name = "struct" if variant is None else f"struct:{variant}"
    return StructureBackbone(name, workspace, calibration, dense)


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
