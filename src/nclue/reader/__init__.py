"""Reader-judged construction: benchmarks whose labels blind readers give (``nclue build --judge reader``).

:mod:`nclue.reader.pools` draws candidate conjunctions and pools their documents from several
retrievers; :mod:`nclue.reader.reading` turns every (condition, document) of the pools into a
reading request — the audit's high-recall pages and rubric — answered by the LLM client
(an endpoint or a batch file) and validated like an audit export; :mod:`nclue.reader.build`
computes gold, partial and the distinct-page rule on what was read, keeps the rare conjunctions
and writes the release through the same writer as every other build.
"""
