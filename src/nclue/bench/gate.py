"""The embedding judge: a semantic gate over the evidence of candidate items (MiniLM).

For each gold document of a candidate item and each condition, the excerpts of its
evidence pages (:func:`nclue.bench.excerpts.window`, at most ``max_pages`` pages, in page
order) are embedded with the bundled all-MiniLM-L6-v2 sentence encoder together with the
condition name. The condition *reads as established* when the cosine similarity of the
name and some excerpt is at least ``threshold``. The item passes only if every
(gold, condition) pair does; one failure removes the whole item. Only evidence pages of
items that reach selection are ever embedded (:meth:`EmbeddingGate.prefetch` batches
them, see :func:`nclue.bench.compose.select_gated`), and each (condition, page) excerpt is
embedded once.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from nclue.bench.compose import Item
from nclue.bench.excerpts import window
from nclue.bench.inventory import Inventory
from nclue.corpus.store import PageStore
from nclue.engine import Engine
from nclue.errors import NclueError

_MODEL: list[Callable[[list[str]], np.ndarray]] = []


def encode_block(texts: list[str]) -> np.ndarray:
    """The bundled MiniLM's vectors of ``texts`` (shipped to engines; one model per worker process)."""
    if not _MODEL:
        _MODEL.append(load_minilm())
    return _MODEL[0](texts)


def load_minilm() -> Callable[[list[str]], np.ndarray]:
    """The bundled MiniLM's ``encode`` on CPU (torch backend, 128 word pieces, batch 64)."""
    try:
        from nclue.models.encoder import load_encoder
    except ImportError as exc:
        raise NclueError(
            f"the embedding judge needs the neural extra ({exc.name} missing); install with `pip install nclue[neural]`"
        ) from None
    return load_encoder(None, "torch", batch_size=64, max_length=128).encode


class EmbeddingGate:
    """Callable gate ``item → bool`` with a cache of excerpt similarities."""

    def __init__(
        self,
        inventory: Inventory,
        store: PageStore,
        threshold: float = 0.15,
        max_pages: int = 2,
        encode: Callable[[list[str]], np.ndarray] | None = None,
        engine: Engine | None = None,
    ) -> None:
        self.inventory = inventory
        self.store = store
        self.threshold = threshold
        self.max_pages = max_pages
        self.engine = engine
        if engine is not None:
            self._encode = lambda texts: self._encode_blocks([texts])[0]
        else:
            self._encode = encode if encode is not None else load_minilm()
        self._name_vec: dict[int, np.ndarray] = {}
        self._sim: dict[tuple[int, str, int], float] = {}
        self.calls = 0
        self.rejected: list[tuple[tuple[str, ...], str, str]] = []

    def similarity(self, c: int, doc: int, pages: tuple[int, ...]) -> list[float]:
        """Cosine of condition ``c``'s name with the excerpts of ``pages`` of document ``doc``."""
        cond = self.inventory.conditions[c]
        doc_id = self.inventory.doc_ids[doc]
        todo = [p for p in pages if (c, doc_id, p) not in self._sim]
        if todo or c not in self._name_vec:
            texts = [window(self.store.page_text(doc_id, p), cond.aliases) for p in todo]
            vecs = self._encode(([cond.name] if c not in self._name_vec else []) + texts)
            self.calls += len(texts)
            if c not in self._name_vec:
                self._name_vec[c], vecs = vecs[0], vecs[1:]
            for p, v in zip(todo, vecs):
                self._sim[(c, doc_id, p)] = float(np.dot(self._name_vec[c], v))
        return [self._sim[(c, doc_id, p)] for p in pages]

    def _pairs(self, item: Item) -> list[tuple[int, int, tuple[int, ...]]]:
        return [
            (c, doc, pages[: self.max_pages]) for doc in item.golds for c, pages in zip(item.conditions, item.docs[doc])
        ]

    def known(self, item: Item) -> bool:
        """True iff every excerpt this item needs is already embedded."""
        return all(
            c in self._name_vec and all((c, self.inventory.doc_ids[d], p) in self._sim for p in pages)
            for c, d, pages in self._pairs(item)
        )

    def _encode_blocks(self, blocks: list[list[str]]) -> list[np.ndarray]:
        """Vectors of each block of texts: in this process, or one engine task per block (same batches)."""
        if self.engine is None:
            return [self._encode(block) for block in blocks]
        parts: list = [None] * len(blocks)
        for position, vectors in self.engine.imap(encode_block, ((block,) for block in blocks)):
            parts[position] = vectors
        return parts

    def prefetch(self, items: list[Item], batch: int = 256) -> None:
        """Embed every excerpt (and condition name) the items need, in blocks of ``batch`` texts."""
        names = sorted({c for item in items for c, _, _ in self._pairs(item)} - set(self._name_vec))
        if names:
            vecs = self._encode_blocks([[self.inventory.conditions[c].name for c in names]])[0]
            self._name_vec.update(zip(names, vecs))
        todo = sorted(
            {
                (c, d, p)
                for item in items
                for c, d, pages in self._pairs(item)
                for p in pages
                if (c, self.inventory.doc_ids[d], p) not in self._sim
            }
        )
        chunks = [todo[start : start + batch] for start in range(0, len(todo), batch)]
        blocks = [
            [
                window(self.store.page_text(self.inventory.doc_ids[d], p), self.inventory.conditions[c].aliases)
                for c, d, p in chunk
            ]
            for chunk in chunks
        ]
        for chunk, vecs in zip(chunks, self._encode_blocks(blocks)):
            self.calls += len(chunk)
            for (c, d, p), v in zip(chunk, vecs):
                self._sim[(c, self.inventory.doc_ids[d], p)] = float(np.dot(self._name_vec[c], v))

    def __call__(self, item: Item) -> bool:
        for doc in item.golds:
            for c, pages in zip(item.conditions, item.docs[doc]):
                sims = self.similarity(c, doc, pages[: self.max_pages])
                if max(sims) < self.threshold:
                    names = tuple(self.inventory.conditions[k].name for k in item.conditions)
                    self.rejected.append((names, self.inventory.conditions[c].name, self.inventory.doc_ids[doc]))
                    return False
        return True
