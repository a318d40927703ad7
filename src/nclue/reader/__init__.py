"""Blind readers: benchmarks whose labels they give (``nclue build --judge reader``), and coverage
evidence they confirm (``nclue coverage select --verify-model``).

:mod:`nclue.reader.pools` draws candidate conjunctions and pools their documents from several
retrievers; :mod:`nclue.reader.reading` turns every (condition, document) of the pools into a
reading request — the audit's high-recall pages and rubric — answered by the LLM client
(an endpoint or a batch file) and validated like an audit export; :mod:`nclue.reader.build`
computes gold, partial and the distinct-page rule on what was read, keeps the rare conjunctions
and writes the release through the same writer as every other build.
:mod:`nclue.reader.verified_coverage` sends the same requests for the pool pairs of one coverage
selection, on the evidence's best pages, and replaces each probability by the reader's decision.
"""
