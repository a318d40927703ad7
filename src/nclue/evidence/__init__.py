"""The page-evidence layer: one feature set, one model, one fitter, one calibration format.

``docs/evidence.md``. :mod:`~nclue.evidence.signals` reads the signals of a condition on every
page of a collection (lexical, dense, heading and page-role evidence);
:mod:`~nclue.evidence.model` turns them into ``P(page establishes condition)`` and
``P(document establishes condition)`` with a :class:`~nclue.evidence.model.Calibration`;
:mod:`~nclue.evidence.fit` fits one on labelled pairs (:mod:`~nclue.evidence.labels`: blind-reader
judgments or qrels evidence pages) and scores it on another corpus's. The ``struct`` systems read
the page probabilities; coverage selection reads the document probabilities.
"""
