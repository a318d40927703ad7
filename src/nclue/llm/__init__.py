"""The one LLM client: chat formats, reply parsing, the frozen response cache and batch files.

Every path that asks a language model — the construction judge (:mod:`nclue.bench.llm`), the
paraphrase form (:mod:`nclue.bench.paraphrase_fill`), the audit's machine evaluator
(:mod:`nclue.audit.machine`) and reader judging (:mod:`nclue.bench.reader`) — renders its prompts,
then goes through this package:

* :mod:`nclue.llm.client` — one chat call over an OpenAI-compatible (``/chat/completions``) or an
  Anthropic-compatible (``/v1/messages``) endpoint;
* :mod:`nclue.llm.cache` — the frozen cache: every reply, usable or not, keyed by the SHA-256 of
  the model name and the exact prompt, with who answered it and when, so a rerun never calls a
  model again;
* :mod:`nclue.llm.batch` — the offline route: pending prompts exported as a JSON Lines file any
  batch API, script or person can fill, and replies imported into the same cache;
* :mod:`nclue.llm.replies` — the JSON object inside a reply (code fences and prose around it
  stripped), which every path's own parser then validates.

Nothing in nclue depends on an endpoint being reachable: a cache filled by any route rebuilds
every artefact bit for bit.
"""
