"""nclue: conjunctive cross-page retrieval toolkit."""

__version__ = "0.1.0"
