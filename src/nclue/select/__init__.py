"""Coverage selection (R03): choose k documents that jointly cover a task's written
requirements, the labeled oracle, the metrics and the pre-outcome freeze protocol.

Modules: ``tasks`` (files, validation, labels), ``objective`` (normaliser, F, greedy),
``selectors`` (dense, coverage, gated), ``oracle``, ``metrics``, ``results`` (paired task
bootstrap, tables, the typed report), ``encode`` (vectors), ``freeze`` (barrier, manifest,
verification), ``evaluate`` and ``adapter`` (nclue benchmark → tasks).
"""
