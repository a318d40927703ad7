"""Retrieval systems: per-condition scoring, page→document pooling, min/product/hmean and
distinct-page (SDR) aggregation, reciprocal-rank fusion, reranking — each a value named by a
string that round-trips (``bm25.decompose(distinct)``; grammar in :mod:`nclue.systems.names`,
backbones in :mod:`nclue.systems.backbone`, name → system in :mod:`nclue.systems.registry`).
"""
