"""The paper-style report (:mod:`nclue.report.paper`), its plots and ``reproduce --verify``."""
