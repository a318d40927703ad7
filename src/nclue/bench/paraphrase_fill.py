"""``nclue bench paraphrase``: fill a release's frozen paraphrase cache through a chat endpoint.

For each query (in release order) the prompt ``prompts/paraphrase.txt`` lists its
conditions and asks for a one-line rewording; the reply is parsed by
``prompts/paraphrase.py``. A rejected reply is asked again, up to ``attempts`` times, with
the parser's reason in the prompt (so every attempt is a distinct, deterministic prompt).
Every reply — accepted or rejected — is frozen in ``BENCH/judge/paraphrase_cache.jsonl``
(:class:`nclue.llm.cache.ResponseCache`, keyed by model and exact prompt, with who answered
and when), so a second run reads the cache, reaches the same decisions and calls nothing.
With a batch file (``batch_out``/``batch_in``) the prompts without a reply are written as batch
requests and the command stops; importing the replies continues where it stopped (a retry after
a rejected reply is the next round's request).

The accepted texts are written to ``BENCH/paraphrases.jsonl``, which
:class:`nclue.release.Release` turns into each query's ``paraphrase`` form (the only place a
paraphrase comes from: they are never generated at run time). ``MANIFEST.json`` gains a
``paraphrase`` record (model, prompt template hash, attempts, counts, queries left without
one), the dataset card a section, and ``SHA256SUMS`` is rewritten to cover both files
(``docs/construction.md#paraphrases``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from nclue.bench.card import render_card
from nclue.bench.prompts import template
from nclue.bench.prompts.paraphrase import parse
from nclue.bench.verify import write_sums
from nclue.errors import NclueError
from nclue.io import atomic_write_text, exclusive_lock, sha256_bytes
from nclue.llm.cache import Asker, ResponseCache
from nclue.llm.client import LLMConfig
from nclue.progress import Advance
from nclue.release import PARAPHRASES_FILE, Release, read_manifest, write_manifest, write_paraphrases
from nclue.types import Query

CACHE = Path("judge") / "paraphrase_cache.jsonl"
DEFAULT_ATTEMPTS = 3


@dataclass
class ParaphraseSummary:
    """What :func:`fill_paraphrases` did (``fresh``/``cached``: replies read from the endpoint / the cache)."""

    bench: Path
    accepted: int
    missing: list[str] = field(default_factory=list)
    rejected_replies: int = 0
    fresh: int = 0
    cached: int = 0


def render_prompt(query: Query, problem: str | None = None) -> str:
    """The paraphrase prompt of ``query``; ``problem`` (the parser's reason) makes it a retry."""
    block = "\n".join(f"- {c}" for c in query.conditions)
    note = (
        f"\nAn earlier answer could not be used ({problem}); answer again, following the format exactly.\n"
        if problem
        else ""
    )
    return template("paraphrase").format(conditions_block=block, retry_note=note)


def fill_paraphrases(
    bench_dir: str | os.PathLike[str],
    config: LLMConfig,
    attempts: int = DEFAULT_ATTEMPTS,
    cache_path: str | os.PathLike[str] | None = None,
    tick: Advance | None = None,
    batch_out: str | os.PathLike[str] | None = None,
    batch_in: str | os.PathLike[str] | None = None,
    answered_by: str = "",
) -> ParaphraseSummary:
    """Paraphrase every query of the release at ``bench_dir`` (see the module docstring)."""
    root = Path(bench_dir)
    if attempts < 1:
        raise NclueError(f"attempts must be at least 1, got {attempts}")
    release = Release.open(root, with_qrels=False)
    batch = batch_out is not None or batch_in is not None
    asker = Asker(
        config,
        ResponseCache(Path(cache_path) if cache_path is not None else root / CACHE),
        "paraphrase",
        template("paraphrase"),
        mode="batch" if batch else "online",
        batch_out=Path(batch_out) if batch_out else root / "judge" / "paraphrase.requests.jsonl",
        batch_in=Path(batch_in) if batch_in else None,
        answered_by=answered_by,
        resume=f"nclue bench paraphrase {root} --model {config.model} --batch-in REPLIES.jsonl",
    )
    summary = ParaphraseSummary(bench=root, accepted=0)
    accepted: dict[str, str] = {}
    with exclusive_lock(root, "benchmark release"):
        for query in release.queries:
            problem = None
            for _ in range(attempts):
                reply = asker.ask(render_prompt(query, problem))
                if reply is None:
                    break
                try:
                    accepted[query.qid] = parse(reply, query.conditions)
                    break
                except ValueError as exc:
                    problem = str(exc)
                    summary.rejected_replies += 1
            if tick is not None:
                tick(1)
        summary.fresh, summary.cached = asker.fresh + asker.imported, asker.cached
        asker.finish()
        summary.accepted = len(accepted)
        summary.missing = [q.qid for q in release.queries if q.qid not in accepted]
        write_paraphrases(root / PARAPHRASES_FILE, accepted)
        _record(root, release, config, attempts, summary, asker)
    return summary


def _record(
    root: Path, release: Release, config: LLMConfig, attempts: int, summary: ParaphraseSummary, asker: Asker
) -> None:
    """Add the ``paraphrase`` record to MANIFEST.json, re-render the card, rewrite SHA256SUMS."""
    from nclue.bench.pipeline import examples

    manifest = read_manifest(root)
    manifest["paraphrase"] = {
        "model": config.model or "",
        "prompt_template_sha256": sha256_bytes(template("paraphrase").encode("utf-8")),
        "attempts": attempts,
        "queries": len(release.queries),
        "accepted": summary.accepted,
        "rejected_replies": summary.rejected_replies,
        "missing": summary.missing,
        "file": PARAPHRASES_FILE,
        "cache": cache.relative_to(root).as_posix() if (cache := asker.cache.path).is_relative_to(root) else cache.name,
        "provenance": asker.cache.provenance(),
    }
    write_manifest(root, manifest)
    scored = Release.open(root, require_qrels=True)
    card = render_card(
        manifest, manifest["distributions"], examples(list(scored.queries), list(scored.judgments), manifest["seed"])
    )
    atomic_write_text(root / "README.md", card)
    write_sums(root)
