"""Every CLI choice enum offers exactly the values its library function accepts (no drift)."""

from __future__ import annotations

import pytest


def values(enum: type) -> set[str]:
    return {member.value for member in enum}


@pytest.mark.parametrize(
    ("cli_enum", "library"),
    [
        ("nclue.cli.corpus:OcrMode", "nclue.corpus.pdftext:OCR_MODES"),
        ("nclue.cli.index:Backend", "nclue.models.encoder:BACKENDS"),
        ("nclue.cli.index:Method", "nclue.index.options:METHODS"),
        ("nclue.cli.bench:Judge", "nclue.bench.construction_params:JUDGES"),
        ("nclue.cli.scoring:CiKind", "nclue.scoring:CI_KINDS"),
        ("nclue.cli.coverage:Encoder", "nclue.select.encode:ENCODERS"),
        ("nclue.cli.llm_options:LLMApi", "nclue.llm.client:APIS"),
        ("nclue.cli.audit:ExcludeLevel", "nclue.audit.sample:EXCLUDE_LEVELS"),
    ],
)
def test_cli_enum_matches_library(cli_enum: str, library: str) -> None:
    import importlib

    module, name = cli_enum.split(":")
    lib_module, lib_name = library.split(":")
    assert values(getattr(importlib.import_module(module), name)) == set(
        getattr(importlib.import_module(lib_module), lib_name)
    )


def test_forms_enum_is_the_standard_forms_plus_paraphrase() -> None:
    from nclue.types import FORMS, Form

    assert values(Form) == {*FORMS, "paraphrase"}


def test_help_is_fast_and_light() -> None:
    """``nclue --help`` imports neither torch nor scipy nor pyarrow."""
    import subprocess
    import sys

    code = (
        "import sys; from nclue.cli import app\n"
        "heavy = [m for m in ('torch', 'scipy', 'pyarrow', 'bm25s', 'sentence_transformers') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
