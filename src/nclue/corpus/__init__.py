"""Corpus: fetch recipes, PDF page text (with OCR fallback) and the Parquet page store."""
