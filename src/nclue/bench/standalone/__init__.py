"""Standard-library scripts copied verbatim into every release (``nclue build``): they run where nclue is not installed.

* ``fetch_corpus.py`` — download the release's PDFs from the URLs in ``corpus.jsonl`` and check
  each SHA-256;
* ``verify_release.py`` — re-check ``SHA256SUMS`` and recompute every published score (the
  card's and ``MANIFEST.json``'s) from the released runs.

They import nothing from nclue, nor each other, on purpose (a user may copy one alone), so the few
lines they share with :mod:`nclue.corpus.deb` and each other are repeated; each is tested by
running it under ``python -I -S``.
"""
