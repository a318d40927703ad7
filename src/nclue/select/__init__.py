"""Coverage selection (R03): choose k documents that jointly cover a task's written
requirements, the labeled oracle, the metrics and the pre-outcome freeze protocol.

Modules: ``tasks`` (files, validation, labels), ``objective`` (normaliser, F, greedy),
``selectors`` (dense, coverage, gated), ``oracle``, ``metrics``, ``bootstrap``, ``tables``,
``encode`` (vectors), ``freeze`` (barrier, manifest, verification), ``evaluate``,
``adapter`` (nclue benchmark → tasks) and ``commands`` (CLI).
"""
