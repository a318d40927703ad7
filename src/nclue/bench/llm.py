"""The LLM judge: item verification through the project's LLM client (an endpoint or a batch file).

For each gold document of a candidate item the judge renders ``prompts/verify_item.txt``
with the evidence excerpts of every condition, asks :class:`nclue.llm.cache.Asker` (the frozen
cache first, then an OpenAI- or Anthropic-compatible endpoint, or — in batch mode — a batch
file), and parses the reply with ``prompts/verify_item.py``. The item passes only if every
condition is established for every gold; a reply the parser rejects removes the item.

Every response — accepted or rejected by the parser — is frozen in a JSON Lines cache keyed
by the SHA-256 of the exact prompt (and the model name), with who answered and when, so a
rebuild reads the cache, makes the same decisions and never calls the endpoint again
(``docs/construction.md#llm-judge``); the cache file ships with the release under ``judge/``.
The selection asks in rounds (:func:`nclue.bench.compose.select_gated`): in batch mode each
round's unanswered prompts go to a request file and the build stops until their replies are
imported (``nclue build --judge llm --llm-batch-in REPLIES``).
"""

from __future__ import annotations

from nclue.bench.compose import Item
from nclue.bench.excerpts import window
from nclue.bench.inventory import Inventory
from nclue.bench.prompts import template
from nclue.bench.prompts.verify_item import parse
from nclue.corpus.store import PageStore
from nclue.llm.cache import Asker

TEMPLATE = "verify_item"


class LLMGate:
    """Callable gate ``item → bool`` backed by the frozen cache (``known``/``prefetch`` for batched rounds)."""

    def __init__(self, inventory: Inventory, store: PageStore, asker: Asker, max_pages: int = 3) -> None:
        self.inventory = inventory
        self.store = store
        self.asker = asker
        self.max_pages = max_pages
        self.malformed = 0

    @property
    def cache(self):  # noqa: ANN201 - the asker's ResponseCache
        """The frozen response cache."""
        return self.asker.cache

    @property
    def cached_answers(self) -> int:
        """Replies read from the cache."""
        return self.asker.cached

    @property
    def fresh_answers(self) -> int:
        """Replies from the endpoint (or imported from a batch file) in this run."""
        return self.asker.fresh + self.asker.imported

    def prompt(self, item: Item, doc: int) -> tuple[str, list[str], dict[str, dict[int, str]]]:
        """The rendered prompt, the condition names and the excerpts offered per condition."""
        doc_id = self.inventory.doc_ids[doc]
        names = [self.inventory.conditions[c].name for c in item.conditions]
        excerpts: dict[str, dict[int, str]] = {}
        blocks = []
        for c, name, pages in zip(item.conditions, names, item.docs[doc]):
            aliases = self.inventory.conditions[c].aliases
            excerpts[name] = {p: window(self.store.page_text(doc_id, p), aliases) for p in pages[: self.max_pages]}
            lines = [f'Condition "{name}" (surface forms: {", ".join(aliases)})']
            lines += [f"  page {p}: {text}" for p, text in excerpts[name].items()]
            blocks.append("\n".join(lines))
        prompt = template(TEMPLATE).format(doc_id=doc_id, conditions_block="\n\n".join(blocks))
        return prompt, names, excerpts

    def known(self, item: Item) -> bool:
        """Every gold's reply is cached or imported."""
        return all(self.asker.known(self.prompt(item, doc)[0]) for doc in item.golds)

    def prefetch(self, items: list[Item]) -> None:
        """Ask every unanswered prompt of ``items``; in batch mode write them and stop (:class:`BatchPending`)."""
        for item in items:
            for doc in item.golds:
                self.asker.ask(self.prompt(item, doc)[0])
        if self.asker.pending:
            self.asker.finish()

    def __call__(self, item: Item) -> bool:
        for doc in item.golds:
            prompt, names, excerpts = self.prompt(item, doc)
            response = self.asker.ask(prompt)
            if response is None:
                self.asker.finish()
            try:
                verdicts = parse(response or "", names, excerpts)
            except ValueError:
                self.malformed += 1
                return False
            if not all(verdicts.values()):
                return False
        return True
