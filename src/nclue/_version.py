"""The package version (kept apart from ``nclue/__init__.py`` so every layer can import it)."""

__version__ = "0.1.0"
