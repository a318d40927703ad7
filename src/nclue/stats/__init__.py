"""Uncertainty and contrasts for per-query outcomes (``docs/statistics.md``).

Every function takes per-query arrays (values on a 0..1 scale, one column per
benchmark query) plus, where relevant, cluster ids and an explicit seed; the same seed
gives the same numbers. Resampling is expressed as weight matrices so all metrics and
runs share one matrix product per replicate set.
"""

from nclue.stats.bootstrap import bootstrap_ci, bootstrap_replicates, cluster_weights
from nclue.stats.clustered import (
    component_bootstrap_ci,
    component_summary,
    connected_components,
    document_macro,
    one_query_per_doc_ci,
    one_query_per_doc_replicates,
)
from nclue.stats.correlation import spearman_matrix
from nclue.stats.multiplicity import holm, max_t
from nclue.stats.promotion import promotion_bound
from nclue.stats.randomization import paired_randomization, sign_flips
from nclue.stats.sensitivity import crossed_bootstrap, crossed_weights, leave_one_doc_out, remove_top_degree

__all__ = [
    "bootstrap_ci",
    "bootstrap_replicates",
    "cluster_weights",
    "component_bootstrap_ci",
    "component_summary",
    "connected_components",
    "document_macro",
    "one_query_per_doc_ci",
    "one_query_per_doc_replicates",
    "crossed_bootstrap",
    "crossed_weights",
    "holm",
    "leave_one_doc_out",
    "max_t",
    "paired_randomization",
    "promotion_bound",
    "remove_top_degree",
    "sign_flips",
    "spearman_matrix",
]
