"""Coverage selection: choose k documents that jointly cover a query's written requirements —
for one query (``single``) or over a benchmark with a labeled oracle, metrics and a
pre-outcome freeze protocol (``docs/coverage.md``, after the R03 coverage report; "the protocol"
means it throughout this package).

Modules: ``selection_defaults`` (defaults), ``tasks`` (files, validation, labels), ``inputs`` (what a selector
reads), ``objective`` (normaliser, F, greedy), ``selectors`` (dense, coverage, gated; the
registry), ``diversify`` (expected coverage, xQuAD, PM2, MMR, facility location, evidence and
retriever order), ``coverage_evidence`` (per-page requirement evidence and its calibration), ``calibrate``
(fitting it), ``oracle``, ``metrics``, ``results`` (paired task bootstrap, tables, the typed
report), ``encode`` (vectors), ``freeze`` (barrier, manifest, verification), ``evaluate``
(scoring and re-verification), ``adapter`` (nclue benchmark → tasks, pools from retrieval),
``single`` (one query) and ``pipeline`` (the whole study in one call).
"""
