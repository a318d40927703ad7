"""Label audit: blind evidence packets, agreement, evidence-asymmetric repair, adjudication (``docs/audit.md``).

The workflow over a benchmark release and its collection::

    sample     stratified query–document pairs + an administrator key   (nclue.audit.sample)
    packet     one self-contained HTML file per evaluator                (nclue.audit.packet)
    score      agreement of the evaluators' exports                      (nclue.audit.score)
    repair     the fixed evidence-asymmetric policy + adjudication poll  (nclue.audit.repair)
    adjudicate majority decisions, distinct-page check, new qrels        (nclue.audit.adjudicate)
    challenge  the judged subsets that could shrink a headline contrast  (nclue.audit.challenge)
    impact     every run rescored on every qrels version                 (nclue.audit.impact)
    machine    an LLM evaluator that fills an export like a person       (nclue.audit.machine)

This package is kept free of heavy imports so the command line can read its defaults
(:mod:`nclue.audit.audit_params`) without loading NumPy or the page store.
"""
