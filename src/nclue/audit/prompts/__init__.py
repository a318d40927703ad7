"""Prompt templates (``*.txt``) of the machine evaluator."""
